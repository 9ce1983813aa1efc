// Whole runs spread over the ranks of an MPI job (`mpirun -np N ringrl tune|train ...`).
//
// Rank 0 holds the session directory and decides what runs where; every rank, rank 0
// included, runs child runs (sweeps/child_runs.h) on its own slots (its GPUs, or --parallel CPU
// slots), each a complete single-node run in the rank's node directory. The messages are
// mpi/job_messages.h.
//
// Contract:
// * open_cluster() is collective: every rank calls it once, after the command validated its
//   settings. Each worker sends its version, the fingerprint of its settings and its slots;
//   rank 0 refuses the job when any differs from its own (UsageError, one line naming the
//   rank and what differs; the workers then exit with status 2 without a word).
// * ClusterJobs (rank 0) is a ChildRunner over every rank's slots: slots [0, local) are rank
//   0's, the others the workers' in rank order. A worker's run ends when its kExit arrives;
//   unless the worker shares rank 0's directory (it finds the session token there), the
//   run's directory comes with it and replaces rank 0's copy (a checkpoint.bin that is gone
//   on the worker goes on rank 0 too). start() sends rank 0's copy of the run's files along;
//   the worker writes those it lacks, so a rerun on another node continues the run.
// * finish() tells every worker that no run is left; call it once every run has ended.
// * run_job_worker() is a worker's whole life: it returns the exit status of the command
//   (0, or 130 after SIGINT/SIGTERM).
// * Only the command's main thread calls these (mpi/comm.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sweeps/child_runs.h"
#include "mpi/comm.h"

namespace ringrl::sweeps {

/// One run slot of the job.
struct ClusterSlot {
  int rank = 0;
  std::string host;
  std::string device;  // "cpu", "cuda:0": what the run on it is given
};

/// What every rank tells open_cluster().
struct ClusterSetup {
  std::filesystem::path session_dir;  // rank 0's
  std::filesystem::path node_dir;     // this rank's ("{rank}" already replaced)
  std::vector<std::string> devices;   // this rank's slots
  std::uint64_t fingerprint = 0;      // of the settings every rank must share
  /// Rank 0's own last check before it welcomes the workers (e.g. that the session directory
  /// holds the same session); its UsageError refuses the job.
  std::function<void()> check_on_rank0;
  /// This rank's own failed check (a per-host preflight), "" when none: it goes to rank 0 in
  /// the hello, which refuses the job naming the rank, so no rank is left in a collective.
  std::string local_error;
};

/// What open_cluster() gives a rank.
struct ClusterStart {
  std::unique_ptr<class ClusterJobs> jobs;  // rank 0
  bool refused = false;  // a worker of a job rank 0 refused: exit with status 2, rank 0 says why
  bool shared = false;   // a worker whose node directory is rank 0's session directory
};

class ClusterJobs final : public ChildRunner {
 public:
  ClusterJobs(mpi::Comm& comm, ClusterSetup setup, std::vector<ClusterSlot> slots, std::vector<bool> shared);
  ~ClusterJobs() override;
  /// Every slot of the job, rank 0's first.
  const std::vector<ClusterSlot>& slots() const noexcept { return slots_; }
  /// Per slot: what a run on it is given (its device), and how the log names it
  /// ("cuda:0 of rank 2 (host)").
  std::vector<std::string> devices() const;
  std::vector<std::string> slot_names() const;
  std::uint64_t start(std::size_t slot, const ChildRun& run) override;
  std::optional<int> poll(std::uint64_t id) override;
  void signal(std::uint64_t id, int sig) override;
  void idle(std::chrono::milliseconds d) override;
  /// Tells every worker to exit (once).
  void finish();

 private:
  struct Remote {
    int rank = 0;
    std::filesystem::path dir;  // rank 0's copy
    std::optional<int> status;
  };
  void receive();

  mpi::Comm& comm_;
  ClusterSetup setup_;
  std::vector<ClusterSlot> slots_;
  std::vector<bool> shared_;  // per rank: the worker's node directory is rank 0's session directory
  LocalChildRunner local_;
  std::size_t local_slots_ = 0;
  std::map<std::uint64_t, std::uint64_t> local_ids_;  // our id -> local_'s
  std::map<std::uint64_t, Remote> remote_;
  std::uint64_t next_id_ = 1;
  bool finished_ = false;
};

/// The collective start (see the contract). Rank 0 gets its ClusterJobs (or a UsageError
/// when it refuses the job); a worker gets no jobs and then calls run_job_worker().
ClusterStart open_cluster(mpi::Comm& comm, const ClusterSetup& setup);

/// A worker's life: runs what rank 0 sends until it says finish. `shared`: open_cluster()'s.
/// Returns the exit status.
int run_job_worker(mpi::Comm& comm, const ClusterSetup& setup, bool shared);

/// Under mpirun or srun with more than one rank (mpi/launch.h): this process's communicator;
/// otherwise null, and the command runs on this machine alone. Throws UsageError(mpi::kNoMpi)
/// under a launcher in a build without MPI.
std::unique_ptr<mpi::Comm> join_mpi_job();

/// "{rank}" in `dir` replaced by `rank` (node directories given once for every rank).
std::filesystem::path node_dir_for(const std::string& dir, int rank);

}  // namespace ringrl::sweeps
