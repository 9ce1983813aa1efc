// Error types shared by every component.
//
// Four failure classes (docs/design.md): invariants are asserts; bad input or configuration
// throws UsageError once, at validation, with the offending value and what was expected;
// saved state that cannot be decoded throws CorruptData; OS failures throw std::system_error
// with errno. `ringrl` prints any of them as one line (statuses: common/exit_status.h).
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

/// Saved state that cannot be decoded: truncated, corrupted, foreign or from another version.
/// A runtime failure (the CLI exits 1), never a usage error.
class CorruptData : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ringrl
