#include "common/runfiles/progress.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace ringrl::runfiles {
namespace {

// A FILE* whose contents can be read back, and a clock the test moves by hand.
class Capture {
 public:
  Capture() : file_(std::tmpfile()) {}
  ~Capture() { std::fclose(file_); }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    long end = std::ftell(file_);
    std::string out(static_cast<size_t>(end), '\0');
    std::rewind(file_);
    size_t n = std::fread(out.data(), 1, out.size(), file_);
    out.resize(n);
    std::fseek(file_, 0, SEEK_END);
    return out;
  }

 private:
  std::FILE* file_;
};

struct FakeClock {
  double t = 0.0;
  std::function<double()> fn() {
    return [this] { return t; };
  }
};

ProgressOptions options(Capture& cap, FakeClock& clock, bool tty) {
  ProgressOptions o;
  o.out = cap.file();
  o.is_tty = tty;
  o.clock = clock.fn();
  o.prefix = "train";
  return o;
}

TEST(Progress, LineFormat) {
  EXPECT_EQ(format_progress_line("train", {{"step", "3"}, {"loss", "0.5"}}), "train step=3 loss=0.5");
  EXPECT_EQ(format_progress_line("", {{"a", "1"}}), "a=1");
}

TEST(Progress, TtyModeRedrawsAtMostFourTimesPerSecond) {
  Capture cap;
  FakeClock clock;
  Progress p(options(cap, clock, true));
  EXPECT_TRUE(p.is_tty());
  EXPECT_TRUE(p.update({{"step", "1"}}));
  clock.t = 0.1;
  EXPECT_FALSE(p.update({{"step", "2"}}));
  clock.t = 0.26;
  EXPECT_TRUE(p.update({{"step", "3"}}));
  EXPECT_EQ(cap.text(), "\rtrain step=1\x1b[K\rtrain step=3\x1b[K");
  clock.t = 0.3;
  EXPECT_FALSE(p.update({{"step", "4"}}));
  p.finish();
  EXPECT_EQ(cap.text(), "\rtrain step=1\x1b[K\rtrain step=3\x1b[K\rtrain step=4\x1b[K\n");
  p.finish();  // idempotent
  EXPECT_FALSE(p.update({{"step", "5"}}));
  EXPECT_EQ(cap.text(), "\rtrain step=1\x1b[K\rtrain step=3\x1b[K\rtrain step=4\x1b[K\n");
}

TEST(Progress, TtyLineIsCutToTheWidth) {
  Capture cap;
  FakeClock clock;
  ProgressOptions o = options(cap, clock, true);
  o.width = 10;
  Progress p(std::move(o));
  p.update({{"step", "123456789"}});
  p.finish();
  EXPECT_EQ(cap.text(), "\rtrain ste\x1b[K\n");
}

TEST(Progress, PlainModePrintsLogLinesAtTheConfiguredInterval) {
  Capture cap;
  FakeClock clock;
  ProgressOptions o = options(cap, clock, false);
  o.log_interval_s = 5.0;
  {
    Progress p(std::move(o));
    EXPECT_FALSE(p.is_tty());
    EXPECT_TRUE(p.update({{"step", "1"}}));
    clock.t = 4.9;
    EXPECT_FALSE(p.update({{"step", "2"}}));
    clock.t = 5.0;
    EXPECT_TRUE(p.update({{"step", "3"}}));
    clock.t = 6.0;
    EXPECT_FALSE(p.update({{"step", "4"}}));
    EXPECT_EQ(cap.text(), "train step=1\ntrain step=3\n");
  }  // destructor finishes: the unprinted latest state is logged
  EXPECT_EQ(cap.text(), "train step=1\ntrain step=3\ntrain step=4\n");
}

TEST(Progress, FinishWithNothingPendingPrintsNothingMore) {
  Capture cap;
  FakeClock clock;
  Progress plain(options(cap, clock, false));
  plain.update({{"a", "1"}});
  plain.finish();
  EXPECT_EQ(cap.text(), "train a=1\n");

  Capture cap2;
  Progress tty(options(cap2, clock, true));
  tty.finish();  // never drew: no stray newline
  EXPECT_EQ(cap2.text(), "");
}

TEST(Progress, DetectsAPipeAsNotATty) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::FILE* w = ::fdopen(fds[1], "w");
  ASSERT_NE(w, nullptr);
  ProgressOptions o;
  o.out = w;
  {
    Progress p(std::move(o));
    EXPECT_FALSE(p.is_tty());
    p.update({{"x", "1"}});
  }
  std::fclose(w);
  char buf[64] = {};
  ssize_t n = ::read(fds[0], buf, sizeof buf - 1);
  ::close(fds[0]);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "x=1\n");
}

TEST(Progress, DetectsAPseudoTerminalAsATty) {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
    if (master >= 0) ::close(master);
    GTEST_SKIP() << "no pseudo-terminals here";
  }
  std::FILE* slave = std::fopen(::ptsname(master), "w");
  ASSERT_NE(slave, nullptr);
  ProgressOptions o;
  o.out = slave;
  o.width = 80;
  {
    Progress p(std::move(o));
    EXPECT_TRUE(p.is_tty());
    p.update({{"x", "1"}});
  }
  std::fclose(slave);
  char buf[64] = {};
  ssize_t n = ::read(master, buf, sizeof buf - 1);
  ::close(master);
  ASSERT_GT(n, 0);
  std::string got(buf, static_cast<size_t>(n));
  EXPECT_EQ(got.rfind("\rx=1\x1b[K", 0), 0u) << got;  // the tty may turn \n into \r\n
}

}  // namespace
}  // namespace ringrl::runfiles
