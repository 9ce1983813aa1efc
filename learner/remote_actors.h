// Actors on other machines, as the run driver sees them: the transport seam of one run across
// nodes (docs/cluster.md). The shared-memory segment is the one-machine transport; a
// RemoteActors puts another behind the same four verbs: start the actors, poll their records,
// publish weights, grant work. mpi/node_bridge.h implements it on MPI.
//
// Contract:
// * The run driver (learner/run_driver.h) calls every method from its main thread: start()
//   once, before its first publication; then publish() after each of its own publications,
//   grant() when its work permits change, poll() in its drain, budget() and check() every
//   loop; stop() once, at the end (also after an error).
// * Remote actor slots are numbered after the local ones: the driver's slots are [0, local),
//   the remote ones [local, local + slots()); on_record() gets those numbers.
// * Record versions are versions of the driver's own weight channel (the transport maps its
//   nodes' channels back), so the driver maps them to learner versions as it maps its own.
// * poll() offers records in arrival order per slot until take() returns false; the record
//   refused is offered again first. A malformed message throws CorruptData; a node that died
//   or stopped answering makes check() throw std::runtime_error naming it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/actor_launch.h"
#include "common/spsc_ring.h"

namespace ringrl::learner {

/// What a node needs to run its share of the run's actors as the driver runs its own.
struct RemoteRunPlan {
  std::uint64_t ring_capacity = 0;  // data bytes per actor ring
  std::size_t blob_bytes = 0;       // weight blob
  std::uint64_t record_mask = 0;    // record_type_bit() of every type the actors push
  std::uint32_t max_record_bytes = 0;
  std::uint64_t records_per_unit = 1;  // records in one unit of work (the work gate)
  std::uint32_t actors_per_node = 0;   // actors each node runs (0: as many as the driver's slots)
  /// The control-block counter the driver mirrors its budget into ("npe" or "env_steps"): a
  /// node mirrors what budget() last carried into its own (actors pace themselves on it).
  std::string budget_counter;
  /// The launch of (global) actor slot `slot`, as the driver would start it; a node replaces
  /// the segment and the config path with its own.
  std::function<ActorLaunch(std::uint32_t slot)> launch;
};

/// One node's counts, for metrics.csv and the log.
struct RemoteNodeStats {
  std::string name;              // "rank 1 (host)"
  std::uint64_t records = 0;     // taken by the driver so far
  std::uint32_t actors_running = 0;
  std::uint32_t restarts = 0;
};

/// Of `permits` units of work (numbered 0, 1, ...), the ones that fall to participant `i` of
/// `n` in rotation (unit u to participant u % n): every participant's own gate, so that all of
/// them together never claim more than the run's permits, and the lag bound holds over the job.
/// kUnlimitedWork stays unlimited.
constexpr std::uint64_t work_share(std::uint64_t permits, std::uint64_t i, std::uint64_t n) noexcept {
  if (permits == ~std::uint64_t{0} || n <= 1) return permits;
  return permits > i ? (permits - i + n - 1) / n : 0;
}
static_assert(work_share(4, 0, 2) == 2 && work_share(4, 1, 2) == 2 && work_share(3, 1, 2) == 1);
static_assert(work_share(1, 0, 3) == 1 && work_share(1, 1, 3) == 0 && work_share(0, 0, 3) == 0);

class RemoteActors {
 public:
  using Take = std::function<bool(std::uint32_t slot, const RecordView& record)>;
  virtual ~RemoteActors() = default;
  /// Remote actor slots (numbered after the driver's `local` ones).
  virtual std::uint32_t slots() const = 0;
  /// Starts every node's actors; `local` is the number of the driver's own slots.
  virtual void start(const RemoteRunPlan& plan, std::uint32_t local) = 0;
  /// Offers the records that arrived (see the contract); returns how many were taken.
  virtual std::uint64_t poll(const Take& take) = 0;
  /// Sends a blob the driver's channel published as `channel_version`.
  virtual void publish(const std::byte* blob, std::size_t bytes, std::uint64_t channel_version) = 0;
  /// The run's budget used so far (what the driver stores in its control block), for the
  /// nodes' control blocks; sent with the next publication, or on its own when none follows soon.
  virtual void budget(std::uint64_t used) = 0;
  /// The run's work permits, in total (common/work_gate.h); node k (1-based) gets
  /// work_share(permits, k, nodes + 1), the driver's own actors share 0.
  virtual void grant(std::uint64_t permits) = 0;
  /// Throws std::runtime_error naming a node that failed or stopped answering.
  virtual void check() = 0;
  /// Records that remote actors claimed work for and will never deliver (they died holding
  /// it), over the run: the driver grants their units again, as it does for its own actors.
  virtual std::uint64_t lost_records() const = 0;
  /// Per node.
  virtual std::vector<RemoteNodeStats> stats() const = 0;
  /// Stops every node's actors; waits (bounded) for the nodes to confirm.
  virtual void stop() = 0;
};

}  // namespace ringrl::learner
