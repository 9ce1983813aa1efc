// Sweep slots: where the children of a sweep run (`train --repetitions --parallel`,
// sweeps/train_spread.h; `tune`, app/tune_cmd.cc), and the one loop that keeps them busy.
//
// Contract:
// * sweep_devices(): one slot per visible GPU, at most `parallel` (0: every GPU), when the
//   trainer's learner uses a GPU and one is visible; otherwise `parallel` CPU slots (0: one).
//   A `parallel` above the GPU count is capped, with a warning that names `who`.
// * SweepSlots::open(): on one machine, those devices through a LocalChildRunner, after
//   `check`; in an MPI job (`comm` not null), every rank's slots through ClusterJobs
//   (sweeps/cluster_jobs.h: rank 0 runs `check` before it welcomes the workers, and its
//   UsageError refuses the job). On a rank other than 0 open() returns the exit status of its
//   life as a worker, which the caller returns; on rank 0 and on one machine it returns
//   nothing and the slots are ready. close() tells an MPI job's workers to exit (once).
// * run_on_slots(): starts work on every free slot until SlotWork::start() has nothing more,
//   polls the children every kPollInterval and hands each end to SlotWork::exited(); on
//   SIGINT/SIGTERM it forwards the signal once to every running child and starts nothing new.
//   Returns when no child runs: true when it forwarded a signal.
// * One thread uses them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mpi/comm.h"
#include "sweeps/child_runs.h"
#include "sweeps/cluster_jobs.h"

namespace ringrl::sweeps {

inline constexpr auto kPollInterval = std::chrono::milliseconds(100);

/// This machine's slots: what a child on each is given ("cuda:0", "cpu").
std::vector<std::string> sweep_devices(bool uses_gpu, std::uint32_t parallel, const char* who);

class SweepSlots {
 public:
  SweepSlots() = default;
  SweepSlots(const SweepSlots&) = delete;
  SweepSlots& operator=(const SweepSlots&) = delete;
  ~SweepSlots() { close(); }

  /// See the contract. `setup.devices` is set here; `setup.check_on_rank0` is `check`.
  std::optional<int> open(mpi::Comm* comm, std::vector<std::string> devices, ClusterSetup setup,
                          const std::function<void()>& check);
  void close();

  ChildRunner& runner() noexcept { return *runner_; }
  std::size_t size() const noexcept { return devices_.size(); }
  /// Per slot: what a child on it is given, and how the log names it ("cuda:0 of rank 2 (host)").
  const std::vector<std::string>& devices() const noexcept { return devices_; }
  const std::vector<std::string>& names() const noexcept { return names_; }

 private:
  LocalChildRunner local_;
  ClusterStart cluster_;
  ChildRunner* runner_ = &local_;
  std::vector<std::string> devices_, names_;
};

/// The work a sweep hands out, one child at a time per slot.
class SlotWork {
 public:
  virtual ~SlotWork() = default;
  /// Starts the next piece of work on free slot `slot`; its child's id, or nothing when no work
  /// is left to start.
  virtual std::optional<std::uint64_t> start(std::size_t slot) = 0;
  /// The child on `slot` ended with wait status `wstatus` (`stopping`: after a forwarded
  /// signal). The id of a child it started next on the slot (more of the same work), or nothing:
  /// the slot is free.
  virtual std::optional<std::uint64_t> exited(std::size_t slot, int wstatus, bool stopping) = 0;
};

/// Runs `work` on `slots` (see the contract); `who` names the sweep in the log ("tune") and
/// `children` what it runs ("trials").
bool run_on_slots(SweepSlots& slots, SlotWork& work, const std::string& who, const char* children);

}  // namespace ringrl::sweeps
