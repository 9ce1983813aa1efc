// Signal handling (common/signals.h). Handlers are process-wide, so every test that installs
// them or raises a signal does so in a forked child and checks the child's exit from outside.
#include "common/signals.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

#include "common/shm_segment.h"
#include "tests/common/test_util.h"

namespace ringrl {
namespace {

using testing::shm_exists;
using testing::unique_run_id;

constexpr int kChildThrew = 100;     // exit status of a child whose body threw
constexpr int kChildSurvived = 101;  // exit status of a child that outlived a fatal signal

// Runs `body` in a forked child, which exits with its return value, and returns the raw wait
// status. The child leaves with _exit: no atexit handlers or test-framework teardown run twice.
template <typename Body>
int run_in_child(Body&& body) {
  const pid_t pid = fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (pid == 0) {
    int rc = kChildThrew;
    try {
      rc = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
    }
    _exit(rc);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "waitpid");
  }
  return status;
}

std::string describe(int status) {
  if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("signal ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// A leftover of a dead child is removed whatever the test's outcome.
void remove_leftover(const std::string& name) {
  if (shm_exists(name)) ShmSegment::reclaim_if_stale(name);
}

// "INT", "SEGV", ...: test names that say which signal.
std::string signal_test_name(const ::testing::TestParamInfo<int>& info) { return sigabbrev_np(info.param); }

class ShutdownSignal : public ::testing::TestWithParam<int> {};

TEST_P(ShutdownSignal, SetsTheFlagAndTheProcessCarriesOn) {
  const int sig = GetParam();
  const int status = run_in_child([sig] {
    install_shutdown_handlers();
    if (shutdown_requested() || shutdown_signal() != 0) return 10;
    raise(sig);  // delivered before raise() returns: the handler has run
    if (!shutdown_requested()) return 11;
    if (shutdown_signal() != sig) return 12;
    clear_shutdown_request();
    return shutdown_requested() ? 13 : 0;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe(status);
}

INSTANTIATE_TEST_SUITE_P(Signals, ShutdownSignal, ::testing::Values(SIGINT, SIGTERM, SIGHUP), signal_test_name);

TEST(Signals, RequestShutdownKeepsTheFirstRequest) {
  // No handler involved: this runs in the test process and restores the flag.
  clear_shutdown_request();
  EXPECT_FALSE(shutdown_requested());
  EXPECT_EQ(shutdown_signal(), 0);
  request_shutdown(SIGTERM);
  request_shutdown(SIGINT);
  EXPECT_TRUE(shutdown_requested());
  EXPECT_EQ(shutdown_signal(), SIGTERM);
  clear_shutdown_request();
  EXPECT_FALSE(shutdown_requested());
  EXPECT_EQ(shutdown_signal(), 0);
}

// The first signal unlinks the names and the process carries on with its mapping (a SIGKILL
// that follows cannot leave a name); the second ends the process.
TEST(Signals, FirstShutdownSignalUnlinksTheNamesAndTheSecondEndsTheProcess) {
  const std::string id = unique_run_id("second");
  const std::string name = segment_name(id);
  const int status = run_in_child([&] {
    install_shutdown_handlers();
    ShmSegment seg = ShmSegment::create(name, 4096, id);  // registers its name
    seg.mark_ready();
    raise(SIGTERM);  // first: the flag, and the name goes
    if (!shutdown_requested() || shm_exists(name)) return 10;
    seg.mark_ready();  // the mapping still works
    raise(SIGINT);     // second: the default action of SIGINT
    return kChildSurvived;
  });
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << describe(status);
  EXPECT_FALSE(shm_exists(name));
  remove_leftover(name);
}

// A process that stops in order after its first signal releases its segment without a word
// about the name that is already gone.
TEST(Signals, AnOrderlyStopAfterTheFirstSignalEndsCleanly) {
  const std::string id = unique_run_id("orderly");
  const std::string name = segment_name(id);
  const int status = run_in_child([&] {
    install_shutdown_handlers();
    {
      ShmSegment seg = ShmSegment::create(name, 4096, id);
      seg.mark_ready();
      raise(SIGINT);
      if (shm_exists(name)) return 10;
    }  // released here
    return 0;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe(status);
  EXPECT_FALSE(shm_exists(name));
  remove_leftover(name);
}

TEST(Signals, FirstSignalAfterARequestFromCodeCountsAsTheSecond) {
  const std::string id = unique_run_id("after-request");
  const std::string name = segment_name(id);
  const int status = run_in_child([&] {
    install_shutdown_handlers();
    ShmSegment seg = ShmSegment::create(name, 4096, id);
    request_shutdown(SIGTERM);  // the orderly path is already under way
    raise(SIGHUP);
    return kChildSurvived;
  });
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGHUP) << describe(status);
  EXPECT_FALSE(shm_exists(name));
  remove_leftover(name);
}

class CrashSignal : public ::testing::TestWithParam<int> {};

TEST_P(CrashSignal, UnlinksRegisteredSegmentsAndDiesOfTheSignal) {
  const int sig = GetParam();
  const std::string id = unique_run_id("crash");
  const std::string name = segment_name(id);
  const std::string kept_id = unique_run_id("crash-kept");
  const std::string kept = segment_name(kept_id);
  const int status = run_in_child([&] {
    install_crash_handlers();
    ShmSegment seg = ShmSegment::create(name, 4096, id);
    ShmSegment other = ShmSegment::create(kept, 4096, kept_id);
    unregister_emergency_unlink(kept.c_str());  // no longer the emergency path's business
    if (sig == SIGABRT) std::abort();           // what a failed assert does
    raise(sig);
    return kChildSurvived;
  });
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << describe(status);
  EXPECT_FALSE(shm_exists(name)) << "the crash handler unlinked the registered segment";
  EXPECT_TRUE(shm_exists(kept)) << "an unregistered name is left alone";
  remove_leftover(name);
  remove_leftover(kept);
}

INSTANTIATE_TEST_SUITE_P(Signals, CrashSignal, ::testing::Values(SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT),
                         signal_test_name);

TEST(Signals, EmergencyTableHoldsKMaxEmergencyNames) {
  // One more segment than the table holds: the crash path unlinks the first kMaxEmergencyNames
  // and misses the last (its owner's destructor would still unlink it on an orderly exit).
  std::vector<std::string> ids, names;
  for (std::size_t i = 0; i <= kMaxEmergencyNames; ++i) {
    ids.push_back(unique_run_id("table"));
    names.push_back(segment_name(ids.back()));
  }
  const int status = run_in_child([&] {
    install_crash_handlers();
    std::vector<ShmSegment> segs;
    for (std::size_t i = 0; i < names.size(); ++i) segs.push_back(ShmSegment::create(names[i], 4096, ids[i]));
    raise(SIGSEGV);
    return kChildSurvived;
  });
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) << describe(status);
  for (std::size_t i = 0; i < kMaxEmergencyNames; ++i) EXPECT_FALSE(shm_exists(names[i])) << names[i];
  EXPECT_TRUE(shm_exists(names.back())) << "the table is full: the last name is not registered";
  for (const auto& n : names) remove_leftover(n);
}

TEST(Signals, ANameUnregisteredByItsOwnerFreesItsEntry) {
  // Segments that come and go (each destructor unregisters) never fill the table.
  const std::string id = unique_run_id("reuse");
  const std::string name = segment_name(id);
  const int status = run_in_child([&] {
    install_crash_handlers();
    for (std::size_t i = 0; i < 4 * kMaxEmergencyNames; ++i) {
      const std::string tid = unique_run_id("reuse-tmp");
      ShmSegment tmp = ShmSegment::create(segment_name(tid), 4096, tid);
    }
    ShmSegment seg = ShmSegment::create(name, 4096, id);
    raise(SIGBUS);
    return kChildSurvived;
  });
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS) << describe(status);
  EXPECT_FALSE(shm_exists(name)) << "the entry was free again for the last segment";
  remove_leftover(name);
}

}  // namespace
}  // namespace ringrl
