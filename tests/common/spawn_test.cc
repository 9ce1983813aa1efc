// spawn_process (common/spawn.h): what the child gets and what it does not inherit.
#include "common/spawn.h"

#include <sched.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "common/exit_status.h"
#include "common/process_modes.h"

namespace ringrl {
namespace {

namespace fs = std::filesystem;

fs::path log_file(const std::string& what) {
  return fs::temp_directory_path() / ("ringrl-spawn-" + what + "-" + std::to_string(getpid()));
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int wait_status(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// The hex mask of a /proc/<pid>/status line ("SigBlk:", "SigIgn:").
std::string status_field(const std::string& status, const std::string& name) {
  const auto at = status.find(name);
  if (at == std::string::npos) return "?";
  const auto end = status.find('\n', at);
  std::string v = status.substr(at + name.size(), end - at - name.size());
  v.erase(0, v.find_first_not_of(" \t"));
  return v;
}

void on_term(int) {}

// A parent that handles SIGTERM, ignores SIGPIPE and blocks SIGUSR1: none of that reaches the child.
TEST(Spawn, TheChildGetsDefaultSignalsAnEmptyMaskAndItsLog) {
  struct sigaction handled {}, old_term {}, old_pipe {};
  handled.sa_handler = on_term;
  sigaction(SIGTERM, &handled, &old_term);
  struct sigaction ignored {};
  ignored.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignored, &old_pipe);
  sigset_t usr1, before;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, &before);

  const fs::path log = log_file("signals");
  fs::remove(log);
  SpawnOptions o;
  o.executable = "/bin/cat";
  o.args = {"/proc/self/status"};
  o.log = log.string();
  const pid_t pid = spawn_process(o);
  const int status = wait_status(pid);

  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGPIPE, &old_pipe, nullptr);

  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const std::string text = read_all(log);
  EXPECT_EQ(status_field(text, "SigBlk:"), "0000000000000000") << text;
  EXPECT_EQ(status_field(text, "SigIgn:"), "0000000000000000") << text;
  fs::remove(log);
}

TEST(Spawn, OwnProcessGroupAndAnEnvironmentOfItsOwn) {
  const fs::path log = log_file("env");
  fs::remove(log);
  SpawnOptions o;
  o.executable = "/usr/bin/env";
  o.inherit_environment = false;
  o.environment = {"RINGRL_SPAWN_TEST=7"};
  o.own_process_group = true;
  o.log = log.string();
  const pid_t pid = spawn_process(o);
  const int status = wait_status(pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(read_all(log), "RINGRL_SPAWN_TEST=7\n");
  fs::remove(log);

  SpawnOptions s;
  s.executable = "/bin/sleep";
  s.args = {"30"};
  s.own_process_group = true;
  const pid_t sleeper = spawn_process(s);
  EXPECT_EQ(getpgid(sleeper), sleeper);
  kill(sleeper, SIGKILL);
  wait_status(sleeper);
}

// `nice` lowers the child's priority by that much from the parent's (the run driver's
// actor_nice); the parent keeps its own.
TEST(Spawn, NiceLowersTheChildsPriorityOnly) {
  errno = 0;
  const int parent = getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  if (parent > 19 - 5) GTEST_SKIP() << "this test already runs at nice " << parent;
  const fs::path log = log_file("nice");
  fs::remove(log);
  SpawnOptions o;
  o.executable = "/usr/bin/nice";  // with no command: prints its own nice value
  o.nice = 5;
  o.log = log.string();
  const int status = wait_status(spawn_process(o));
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(read_all(log), std::to_string(parent + 5) + "\n");
  EXPECT_EQ(getpriority(PRIO_PROCESS, 0), parent);
  fs::remove(log);
}

TEST(Spawn, AnExecutableThatCannotRunEndsTheChildWithItsStatus) {
  SpawnOptions o;
  o.executable = "/nonexistent/ringrl";
  const int status = wait_status(spawn_process(o));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == kExitExecFailed) << status;
}

// A process bound to one CPU (as a launcher binds a rank) may use every online CPU after, and
// so do the children it starts.
TEST(CpuAffinity, WideningUndoesALaunchersBinding) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    cpu_set_t given;
    CPU_ZERO(&given);
    if (sched_getaffinity(0, sizeof given, &given) != 0) _exit(9);
    int first = 0;
    while (first < CPU_SETSIZE && !CPU_ISSET(first, &given)) ++first;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) _exit(10);
    const CpuWidening w = widen_cpu_affinity();
    if (w.before != 1) _exit(11);
    if (w.after < CPU_COUNT(&given)) _exit(12);  // at least what this test process was given (its cpuset may be narrower than the machine)
    _exit(0);
  }
  const int status = wait_status(pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace ringrl
