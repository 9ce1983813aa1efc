// Progress reporting for long runs: one live line on a terminal, periodic log lines otherwise.
//
// Contract:
// * TTY mode (options.is_tty, else isatty(fileno(out))): update() redraws one line as
//   `\r<line>\x1b[K` at most once per `tty_interval_s` (default 0.25 s, ~4x/s); the line is
//   cut to the terminal width (options.width, else the width the terminal reports, if any)
//   so it never wraps. finish() draws the latest fields and ends the line with `\n`.
// * Plain mode: update() prints `<line>\n` for the first update and then at most once per
//   `log_interval_s` (default 10 s); finish() prints the latest fields if they were not
//   printed yet.
// * The line is `<prefix> key=value key=value ...` (prefix and its space omitted if empty).
// * update() returns whether it printed. finish() is idempotent; the destructor calls it.
//   Later update() calls after finish() print nothing.
// * Time comes from options.clock (seconds, monotonic), default std::chrono::steady_clock.
// * Output errors are ignored (progress is best-effort). Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ringrl::runfiles {

using ProgressFields = std::vector<std::pair<std::string, std::string>>;

inline constexpr double kDefaultTtyIntervalS = 0.25;
inline constexpr double kDefaultLogIntervalS = 10.0;

struct ProgressOptions {
  std::FILE* out = stderr;
  std::optional<bool> is_tty;  // nullopt: isatty(fileno(out))
  double tty_interval_s = kDefaultTtyIntervalS;
  double log_interval_s = kDefaultLogIntervalS;
  std::string prefix;
  size_t width = 0;               // TTY line width; 0: ask the terminal, unlimited if it does not say
  std::function<double()> clock;  // seconds, monotonic; empty: steady_clock
};

/// The text of one progress line (no `\r`, no newline).
std::string format_progress_line(const std::string& prefix, const ProgressFields& fields);

class Progress {
 public:
  explicit Progress(ProgressOptions options = {});
  ~Progress();

  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool update(const ProgressFields& fields);
  void finish();

  bool is_tty() const { return tty_; }

 private:
  double now() const;
  void draw(const std::string& line);

  ProgressOptions options_;
  bool tty_ = false;
  bool finished_ = false;
  bool drew_live_line_ = false;
  bool latest_printed_ = true;
  std::optional<double> last_print_s_;
  ProgressFields latest_;
};

}  // namespace ringrl::runfiles
