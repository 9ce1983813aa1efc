// Child runs: the `ringrl train ...` processes that `tune` (and `train --parallel`, and the
// ranks of an MPI job) start, each a complete single-node run in its own run directory.
//
// Contract:
// * A ChildRunner starts a run on one of its slots and reports its end by id. start() adds
//   `--resume` when the run directory, where the run happens, already holds results or a
//   checkpoint (has_resumable_state()), so a rerun continues instead of starting over.
// * signal() forwards at most one signal per run: a second SIGINT would end a trainer on its
//   emergency path, without a checkpoint, and a run can hear of one ^C twice (its own rank
//   and rank 0).
// * idle() waits about the given time while doing the runner's own work (receiving messages).
// * One thread uses a runner. Children never outlive their parent: each runs in its own
//   process group (a terminal ^C reaches only the parent, which forwards it once) with
//   PR_SET_PDEATHSIG=SIGTERM, and without the MPI launcher's variables in its environment
//   (mpi/launch.h), so a child of an MPI rank is an ordinary single-node process.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/runfiles/run_files.h"

namespace ringrl::sweeps {

/// The log of a child run, in its run directory.

/// One child run: the arguments after the executable (with "--run-dir" `run_dir`, without
/// "--resume"), its run directory, and the log its stdout and stderr append to.
struct ChildRun {
  std::vector<std::string> args;
  std::filesystem::path run_dir;
  std::filesystem::path log;
};

class ChildRunner {
 public:
  virtual ~ChildRunner() = default;
  /// Starts `run` on `slot`; returns its id.
  virtual std::uint64_t start(std::size_t slot, const ChildRun& run) = 0;
  /// The run's wait status (as waitpid() gives it) once it ended; its run directory is then
  /// complete on this machine.
  virtual std::optional<int> poll(std::uint64_t id) = 0;
  /// Forwards `sig` to the run (the first time only).
  virtual void signal(std::uint64_t id, int sig) = 0;
  /// Waits about `d`.
  virtual void idle(std::chrono::milliseconds d) = 0;
};

/// Runs children on this machine (fork and exec of this binary).
class LocalChildRunner final : public ChildRunner {
 public:
  LocalChildRunner() = default;
  LocalChildRunner(const LocalChildRunner&) = delete;
  LocalChildRunner& operator=(const LocalChildRunner&) = delete;
  std::uint64_t start(std::size_t slot, const ChildRun& run) override;
  std::optional<int> poll(std::uint64_t id) override;
  void signal(std::uint64_t id, int sig) override;
  void idle(std::chrono::milliseconds d) override;
  /// Runs still going.
  std::size_t running() const noexcept { return children_.size(); }

 private:
  struct Child {
    pid_t pid = -1;
    bool signalled = false;
  };
  std::map<std::uint64_t, Child> children_;
  std::uint64_t next_id_ = 1;
};

/// The run directory holds results.jsonl or checkpoint.bin: its run continues with --resume.
bool has_resumable_state(const std::filesystem::path& run_dir);

/// Starts `/proc/self/exe args...` with stdout and stderr appended to `log`, in its own
/// process group, dying with its parent, without the MPI launcher's variables. Throws
/// std::system_error when fork fails.
pid_t spawn_child(const std::vector<std::string>& args, const std::filesystem::path& log);

/// The last non-blank line of a child run's log, cut to 300 characters ("" when there is none):
/// what a failed run said last.
std::string last_log_line(const std::filesystem::path& log);

}  // namespace ringrl::sweeps
