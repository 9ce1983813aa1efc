#include "app/child_runs.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <thread>

#include "common/runfiles/results_jsonl.h"
#include "mpi/launch.h"

namespace ringrl::app {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSelfExe = "/proc/self/exe";
constexpr const char* kCheckpointFile = "checkpoint.bin";  // as learner/run_driver.h names it
constexpr const char* kResumeFlag = "--resume";
constexpr int kExecFailedStatus = 127;

}  // namespace

bool has_resumable_state(const fs::path& run_dir) {
  return fs::exists(run_dir / runfiles::kResultsFileName) || fs::exists(run_dir / kCheckpointFile);
}

pid_t spawn_child(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<std::string> argv_storage = {kSelfExe};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage = mpi::child_environment();
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string log_path = log.string();
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork of a child run");
  if (pid == 0) {                      // only async-signal-safe calls until exec
    setpgid(0, 0);                     // terminal signals reach the parent only; it forwards them once
    prctl(PR_SET_PDEATHSIG, SIGTERM);  // parent gone (even by SIGKILL): the run stops too
    if (getppid() != parent) _exit(kExecFailedStatus);
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    execve(kSelfExe, argv.data(), envp.data());
    _exit(kExecFailedStatus);
  }
  return pid;
}

std::uint64_t LocalChildRunner::start(std::size_t /*slot*/, const ChildRun& run) {
  std::vector<std::string> args = run.args;
  if (has_resumable_state(run.run_dir)) args.push_back(kResumeFlag);
  const std::uint64_t id = next_id_++;
  children_[id] = {spawn_child(args, run.log), false};
  return id;
}

std::optional<int> LocalChildRunner::poll(std::uint64_t id) {
  const auto it = children_.find(id);
  if (it == children_.end()) return std::nullopt;
  int wstatus = 0;
  const pid_t r = waitpid(it->second.pid, &wstatus, WNOHANG);
  if (r == 0 || (r < 0 && errno == EINTR)) return std::nullopt;
  if (r < 0) throw std::system_error(errno, std::generic_category(), "waitpid on a child run");
  children_.erase(it);
  return wstatus;
}

void LocalChildRunner::signal(std::uint64_t id, int sig) {
  const auto it = children_.find(id);
  if (it == children_.end() || it->second.signalled) return;
  it->second.signalled = true;
  kill(it->second.pid, sig);
}

void LocalChildRunner::idle(std::chrono::milliseconds d) { std::this_thread::sleep_for(d); }

}  // namespace ringrl::app
