#include "common/supervisor.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/run_segment.h"
#include "tests/common/test_util.h"

namespace ringrl {
namespace {

using namespace std::chrono_literals;
using testing::shm_exists;
using testing::unique_run_id;

template <typename Pred>
bool eventually(Pred&& pred, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return pred();
}

bool pid_gone(pid_t pid) {
  // Reap any orphan re-parented to us (we are a subreaper), then ask the kernel.
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  return kill(pid, 0) != 0 && errno == ESRCH;
}

pid_t spawn_ringrl(const std::vector<std::string>& args) {
  std::vector<std::string> all{RINGRL_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

// A failed assertion must not leave a 120-second demo running: kills and reaps the child
// unless the test already reaped it (release()).
struct ReapOnExit {
  pid_t pid;
  void release() { pid = 0; }
  ~ReapOnExit() {
    if (pid > 0 && kill(pid, SIGKILL) == 0) waitpid(pid, nullptr, 0);
  }
};

class SupervisorProcess : public ::testing::Test {
 protected:
  void SetUp() override { prctl(PR_SET_CHILD_SUBREAPER, 1); }
};

// Unit level: a child that always fails is restarted at most max_restarts times, then marked.
TEST_F(SupervisorProcess, RestartsAreBoundedCountedAndBackedOff) {
  RunLayoutOptions lo;
  lo.num_actors = 2;
  RunSegment seg = RunSegment::create(unique_run_id("sup"), lo);
  SupervisorOptions o;
  o.executable = "/bin/sh";
  o.args = [](std::uint32_t) { return std::vector<std::string>{"-c", "exit 3"}; };
  o.max_restarts = 3;
  o.restart_backoff = 10ms;
  Supervisor sup(seg, o);
  const auto t0 = std::chrono::steady_clock::now();
  sup.start();
  ASSERT_TRUE(eventually(
      [&] {
        sup.poll();
        return sup.all_failed();
      },
      10s));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 10ms + 20ms + 40ms);  // backoff doubles
  EXPECT_EQ(sup.restarts(0), 3u);
  EXPECT_EQ(sup.restarts(1), 3u);
  EXPECT_EQ(sup.total_restarts(), 6u);
  EXPECT_EQ(seg.slot(0).restarts.load(), 3u);
  EXPECT_EQ(seg.slot(1).state.load(), static_cast<std::uint32_t>(ActorState::kFailed));
}

// Each slot starts at the nice value its `nice` gives above the supervisor's (the run driver's
// actor_nice: collectors below the learner, HIRO's evaluator not).
TEST_F(SupervisorProcess, EachSlotStartsAtItsOwnNiceValue) {
  errno = 0;
  const int own = getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  if (own > 19 - 7) GTEST_SKIP() << "this test already runs at nice " << own;
  RunLayoutOptions lo;
  lo.num_actors = 2;
  RunSegment seg = RunSegment::create(unique_run_id("nice"), lo);
  const std::string base = "/tmp/ringrl-sup-nice-" + std::to_string(getpid()) + "-";
  for (int k = 0; k < 2; ++k) std::remove((base + std::to_string(k)).c_str());
  SupervisorOptions o;
  o.executable = "/bin/sh";
  o.args = [&](std::uint32_t slot) {
    const std::string f = base + std::to_string(slot);
    return std::vector<std::string>{"-c", "nice > " + f + ".part && mv " + f + ".part " + f + " && exec sleep 60"};
  };
  o.nice = [](std::uint32_t slot) { return slot == 0 ? 7 : 0; };
  o.stop_grace = 100ms;  // sleep ignores the stop flag
  Supervisor sup(seg, o);
  sup.start();
  const auto read = [&](int k) {
    std::ifstream in(base + std::to_string(k));
    int v = -100;
    in >> v;
    return v;
  };
  ASSERT_TRUE(eventually([&] { return read(0) != -100 && read(1) != -100; }, 10s));
  EXPECT_EQ(read(0), own + 7);
  EXPECT_EQ(read(1), own);
  sup.stop();
  for (int k = 0; k < 2; ++k) std::remove((base + std::to_string(k)).c_str());
}

TEST_F(SupervisorProcess, StopEscalatesToKillForActorsThatIgnoreTheFlag) {
  RunLayoutOptions lo;
  lo.num_actors = 1;
  RunSegment seg = RunSegment::create(unique_run_id("sup-stop"), lo);
  SupervisorOptions o;
  o.executable = "/bin/sh";
  o.args = [](std::uint32_t) { return std::vector<std::string>{"-c", "trap '' TERM; exec sleep 60"}; };
  o.stop_grace = 100ms;
  Supervisor sup(seg, o);
  sup.start();
  const pid_t pid = sup.pid(0);
  ASSERT_GT(pid, 0);
  std::this_thread::sleep_for(50ms);
  const auto t0 = std::chrono::steady_clock::now();
  sup.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_TRUE(eventually([&] { return pid_gone(pid); }, 2s));
}

// End to end with real actors: kill -9 one, it comes back and the restart is counted; then
// SIGINT the learner: every actor is gone and the segment is unlinked.
TEST_F(SupervisorProcess, KilledActorIsRestartedAndSigintLeavesNothing) {
  const std::string id = unique_run_id("demo");
  const std::string name = segment_name(id);
  const pid_t learner = spawn_ringrl({"demo", "--actors", "2", "--seconds", "120", "--run-id", id});
  ASSERT_GT(learner, 0);
  ReapOnExit guard{learner};
  ASSERT_TRUE(eventually([&] { return shm_exists(name); }, 20s)) << "learner never created " << name;
  RunSegment seg = RunSegment::attach(name, learner);
  ASSERT_TRUE(eventually(
      [&] { return seg.slot(0).pid.load() > 0 && seg.slot(1).pid.load() > 0 && seg.slot(0).records.load() > 0; }, 20s));
  const pid_t victim = seg.slot(0).pid.load();
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  ASSERT_TRUE(eventually(
      [&] {
        return seg.slot(0).restarts.load() == 1 && seg.slot(0).pid.load() > 0 && seg.slot(0).pid.load() != victim;
      },
      20s))
      << "restarts " << seg.slot(0).restarts.load();
  const std::uint64_t before = seg.slot(0).records.load();
  ASSERT_TRUE(eventually([&] { return seg.slot(0).records.load() > before; }, 20s)) << "restarted actor is idle";
  std::vector<pid_t> actors{seg.slot(0).pid.load(), seg.slot(1).pid.load()};

  ASSERT_EQ(kill(learner, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(learner, &status, 0), learner);
  guard.release();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe_wait_status(status);
  EXPECT_FALSE(shm_exists(name));
  for (pid_t p : actors) EXPECT_TRUE(eventually([&] { return pid_gone(p); }, 5s)) << "orphan actor " << p;
  EXPECT_TRUE(pid_gone(victim));
}

// kill -9 of the learner itself: the kernel kills the actors (PR_SET_PDEATHSIG); the leftover
// segment is reclaimed by the next run of the same id.
TEST_F(SupervisorProcess, KilledLearnerTakesItsActorsAndTheNextRunReclaims) {
  const std::string id = unique_run_id("demo-kill");
  const std::string name = segment_name(id);
  const pid_t learner = spawn_ringrl({"demo", "--actors", "2", "--seconds", "120", "--run-id", id});
  ReapOnExit guard{learner};
  ASSERT_TRUE(eventually([&] { return shm_exists(name); }, 20s));
  std::vector<pid_t> actors;
  {
    RunSegment seg = RunSegment::attach(name, learner);
    ASSERT_TRUE(eventually([&] { return seg.slot(0).pid.load() > 0 && seg.slot(1).pid.load() > 0; }, 20s));
    actors = {seg.slot(0).pid.load(), seg.slot(1).pid.load()};
  }
  ASSERT_EQ(kill(learner, SIGKILL), 0);
  waitpid(learner, nullptr, 0);
  guard.release();
  for (pid_t p : actors) EXPECT_TRUE(eventually([&] { return pid_gone(p); }, 5s)) << "orphan actor " << p;
  EXPECT_TRUE(shm_exists(name));  // SIGKILL gives no chance to unlink...
  const pid_t next = spawn_ringrl({"demo", "--actors", "1", "--seconds", "0.5", "--run-id", id});
  int status = 0;
  waitpid(next, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << describe_wait_status(status);
  EXPECT_FALSE(shm_exists(name));  // ...the next run reclaimed it, then unlinked its own
}

TEST_F(SupervisorProcess, BadOptionIsOneLineAndNonZero) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 2);
    close(fds[0]);
    execl(RINGRL_BINARY, RINGRL_BINARY, "demo", "--run-id", "bad id", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string err;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) err.append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << describe_wait_status(status);
  EXPECT_EQ(err, "ringrl: error: run id 'bad id' contains ' ': expected only letters, digits, '.', '_' or '-'\n");
}

}  // namespace
}  // namespace ringrl
