// ActorSource: one place a run's records come from and its weights go to. The run driver
// (learner/run_driver.h) holds a list of them and calls each alike: this machine's actor pool
// (LocalActors, learner/local_actors.h) and, in a run across nodes, the other nodes' actors
// (mpi/node_bridge.h's MpiRemoteActors). The segment is the one-machine transport; a remote
// source puts another behind the same verbs: start the actors, poll their records, publish
// weights, grant work, check them, stop them.
//
// Contract:
// * The driver calls every method from its main thread: start() once, after its first
//   publication is on its own weight channel and before any source's publish(); then
//   publish() after each of its publications, grant() when the run's work permits change,
//   poll() in its drain, budget() and check() every loop; stop() once, at the end (also after
//   an error).
// * Slots: a source's actor slots are [plan.first_slot, plan.first_slot + slots()), the
//   sources' ranges end to end in the driver's order; poll() gives take() those numbers.
// * Participants: the work gate's parties (a machine's actors; common/work_gate.h). The driver
//   deals the run's units to them (learner/work_dealer.h) and grants each its own permits;
//   each numbers its claims with its own (local) tickets.
// * Tickets: poll() offers records with their local unit tags; lost_units() gives the local
//   tickets of the units its actors died holding. The driver maps both to the run's tickets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/actor_launch.h"
#include "common/spsc_ring.h"

namespace ringrl::learner {

/// What a source needs to run its share of the run's actors as the driver's own run.
struct SourcePlan {
  std::uint64_t ring_capacity = 0;  // data bytes per actor ring
  std::size_t blob_bytes = 0;       // weight blob
  std::uint64_t record_mask = 0;    // record_type_bit() of every type the actors push
  std::uint32_t max_record_bytes = 0;
  std::uint32_t actors_per_node = 0;   // actors each other node runs (0: as many as the driver's own)
  /// The control-block counter the budget lives in ("npe" or "env_steps"): budget() stores the
  /// run's budget used there (actors pace themselves on it).
  std::string budget_counter;
  std::uint32_t first_slot = 0;  // the source's first actor slot
  /// The launch of (global) actor slot `slot`, as the driver would start it; a node replaces
  /// the segment and the config path with its own.
  std::function<ActorLaunch(std::uint32_t slot)> launch;
};

/// One participant's counts (a machine: this one, or a node), for metrics.csv and the log.
struct SourceStats {
  std::string name;              // "the 2 local actor(s)", "rank 1 (host)"
  std::uint64_t records = 0;     // taken by the driver so far
  std::uint32_t actors_running = 0;
  std::uint32_t restarts = 0;
};

/// A unit an actor died holding: its participant (numbered within its source) and local ticket.
struct LostUnit {
  std::uint32_t participant = 0;
  std::uint64_t ticket = 0;
};

class ActorSource {
 public:
  using Take = std::function<bool(std::uint32_t slot, const RecordView& record)>;
  virtual ~ActorSource() = default;
  /// Work-gate participants (>= 1; known before start()).
  virtual std::uint32_t participants() const = 0;
  /// Actor slots (known after start()).
  virtual std::uint32_t slots() const = 0;
  /// Starts the actors (see the contract for when).
  virtual void start(const SourcePlan& plan) = 0;
  /// Offers the records that arrived (see the contract); returns how many were taken.
  virtual std::uint64_t poll(const Take& take) = 0;
  /// The driver published `bytes` of `blob` as version `channel_version` of its channel.
  virtual void publish(const std::byte* blob, std::size_t bytes, std::uint64_t channel_version) = 0;
  /// The run's budget used so far, for the actors' control blocks.
  virtual void budget(std::uint64_t used) = 0;
  /// Each participant's permits: participant k's are `permits[k]` (local tickets below them).
  virtual void grant(const std::uint64_t* permits) = 0;
  /// Supervises; throws std::runtime_error naming what can no longer deliver.
  virtual void check() = 0;
  /// Appends the units its actors died holding since the last call: the driver skips them
  /// (learner/unit_order.h).
  virtual void lost_units(std::vector<LostUnit>& out) = 0;
  /// One entry per participant.
  virtual std::vector<SourceStats> stats() const = 0;
  /// Stops the actors; waits (bounded) for them.
  virtual void stop() = 0;
};

}  // namespace ringrl::learner
