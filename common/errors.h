// Error types shared by every component.
//
// Three failure classes (docs/design.md): invariants are asserts; bad input or configuration
// throws UsageError once, at validation, with the offending value and what was expected;
// OS failures throw std::system_error with errno. `ringrl` prints any of them as one line.
#pragma once

#include <stdexcept>
#include <string>

namespace ringrl {

/// Bad user input or configuration. The message names the value and what was expected.
/// The CLI prints it as `ringrl: error: <message>` and exits with status 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ringrl
