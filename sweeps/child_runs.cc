#include "sweeps/child_runs.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <system_error>
#include <thread>

#include "common/runfiles/results_jsonl.h"
#include "common/runfiles/run_files.h"
#include "common/spawn.h"
#include "mpi/launch.h"

namespace ringrl::sweeps {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSelfExe = "/proc/self/exe";
constexpr const char* kResumeFlag = "--resume";

}  // namespace

std::string last_log_line(const fs::path& log) {
  constexpr std::size_t kMaxChars = 300;
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  if (last.size() > kMaxChars) last = last.substr(0, kMaxChars) + "...";
  return last;
}

bool has_resumable_state(const fs::path& run_dir) {
  return fs::exists(run_dir / runfiles::kResultsFileName) || fs::exists(run_dir / runfiles::kCheckpointFileName);
}

pid_t spawn_child(const std::vector<std::string>& args, const fs::path& log) {
  SpawnOptions o;
  o.executable = kSelfExe;
  o.args = args;
  o.inherit_environment = false;
  o.environment = mpi::child_environment();
  o.death_signal = SIGTERM;     // parent gone (even by SIGKILL): the run stops too, with its checkpoint
  o.own_process_group = true;   // terminal signals reach the parent only; it forwards them once
  o.log = log.string();
  return spawn_process(o);
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

}  // namespace ringrl::sweeps
