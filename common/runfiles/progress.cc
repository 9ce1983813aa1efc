#include "common/runfiles/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>

namespace ringrl::runfiles {
namespace {

constexpr const char* kClearToEol = "\x1b[K";

size_t terminal_width(std::FILE* out) {
  struct winsize ws {};
  if (::ioctl(::fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

}  // namespace

std::string format_progress_line(const std::string& prefix, const ProgressFields& fields) {
  std::string line = prefix;
  for (const auto& [key, value] : fields) {
    if (!line.empty()) line += ' ';
    line += key;
    line += '=';
    line += value;
  }
  return line;
}

Progress::Progress(ProgressOptions options) : options_(std::move(options)) {
  tty_ = options_.is_tty ? *options_.is_tty : ::isatty(::fileno(options_.out)) == 1;
  if (tty_ && options_.width == 0) options_.width = terminal_width(options_.out);
}

Progress::~Progress() { finish(); }

double Progress::now() const {
  if (options_.clock) return options_.clock();
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

void Progress::draw(const std::string& line) {
  if (tty_) {
    std::string text = line;
    // Leave the last column free: some terminals wrap when it is written.
    if (options_.width > 1 && text.size() > options_.width - 1) text.resize(options_.width - 1);
    std::fputs(("\r" + text + kClearToEol).c_str(), options_.out);
    drew_live_line_ = true;
  } else {
    std::fputs((line + "\n").c_str(), options_.out);
  }
  std::fflush(options_.out);
  latest_printed_ = true;
}

bool Progress::update(const ProgressFields& fields) {
  if (finished_) return false;
  latest_ = fields;
  latest_printed_ = false;
  double t = now();
  double interval = tty_ ? options_.tty_interval_s : options_.log_interval_s;
  if (last_print_s_ && t - *last_print_s_ < interval) return false;
  last_print_s_ = t;
  draw(format_progress_line(options_.prefix, latest_));
  return true;
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (!latest_printed_) draw(format_progress_line(options_.prefix, latest_));
  if (tty_ && drew_live_line_) {
    std::fputs("\n", options_.out);
    std::fflush(options_.out);
  }
}

}  // namespace ringrl::runfiles
