// The run's control block and per-actor slots, both in the run segment.
//
// ControlBlock: written by the learner (stop flag, phase, global counters); read by everyone.
// ActorSlot: one per actor. The actor process owning the slot writes heartbeat, its counters
// and its weights version; the supervisor (learner process) writes pid, state and restarts.
// Every field is a lock-free atomic so either side may read it at any time; counters are
// monotonic and read as approximations (relaxed), except where noted.
//
// Memory ordering: the learner's store of `stop` (release) happens after everything it wants
// actors to see before stopping; an actor that loads `stop` != 0 (acquire) sees it. `phase` is
// stored with release and read with acquire, so whoever sees a phase sees what its writer did
// before it. `work_permits` is stored with release after the weights the permits allow sampling
// with were published, and actors load it with acquire before they claim a unit (a CAS on
// `work_claimed`) and read the weights: an actor that claims unit n sees the weights published
// before permit n was granted (common/work_gate.h). Everything else (heartbeats, counters, pid,
// state, best_reward_bits) is relaxed: status for display and watchdogs that never guards other
// data. Every access names its order.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ringrl {

enum class RunPhase : std::uint32_t { kStarting = 0, kRunning = 1, kDraining = 2, kStopped = 3 };
enum class ActorState : std::uint32_t { kEmpty = 0, kStarting = 1, kRunning = 2, kExited = 3, kFailed = 4 };

struct alignas(64) ControlBlock {
  std::atomic<std::uint32_t> stop;              // non-zero: every actor finishes its batch and exits
  std::atomic<std::uint32_t> phase;             // RunPhase
  std::atomic<std::uint64_t> npe;               // programs executed (learner's count)
  std::atomic<std::uint64_t> env_steps;         // environment steps (learner's count)
  std::atomic<std::uint64_t> learner_steps;     // optimiser steps
  std::atomic<std::uint64_t> best_reward_bits;  // double, bit-cast; see load/store helpers
  std::uint32_t num_actors;                     // immutable after layout
  std::uint32_t reserved;
  std::atomic<std::uint64_t> work_permits;      // learner: units actors may claim in total (work_gate.h)
  std::atomic<std::uint64_t> work_claimed;      // actors: units claimed in total (CAS below work_permits)
};

/// The control-block counter a run's budget lives in: `key` "env_steps" names env_steps, any
/// other (the budget keys are "npe" and "env_steps") npe.
inline std::atomic<std::uint64_t>& budget_counter(ControlBlock& c, const char* key) noexcept {
  return std::strcmp(key, "env_steps") == 0 ? c.env_steps : c.npe;
}

struct alignas(64) ActorSlot {
  std::atomic<std::int32_t> pid;               // supervisor: current process, 0 = none
  std::atomic<std::uint32_t> state;            // ActorState; supervisor and actor
  std::atomic<std::uint64_t> heartbeat_ns;     // actor: steady_now_ns() of its last heartbeat
  std::atomic<std::uint32_t> restarts;         // supervisor: restarts so far
  std::atomic<std::uint32_t> incarnation;      // supervisor: bumped on each (re)start
  std::atomic<std::uint64_t> records;          // actor: records pushed
  std::atomic<std::uint64_t> items;            // actor: programs executed / env steps
  std::atomic<std::uint64_t> weights_version;  // actor: version it currently acts with
  std::atomic<std::uint64_t> ring_stalls;      // actor: times the ring was full (back-pressure)
  std::atomic<std::uint64_t> work_claimed;     // actor: units this slot claimed (every incarnation)
  std::atomic<std::uint64_t> work_ticket;      // actor: 1 + the ticket of the unit it claimed last, 0 = none
};

static_assert(std::is_standard_layout_v<ControlBlock> && std::is_standard_layout_v<ActorSlot>);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<std::int32_t>::is_always_lock_free);
static_assert(sizeof(ActorSlot) == 128 && sizeof(ControlBlock) == 64);

inline double load_double(const std::atomic<std::uint64_t>& bits) noexcept {
  const std::uint64_t b = bits.load(std::memory_order_relaxed);  // a display value; guards nothing
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}
inline void store_double(std::atomic<std::uint64_t>& bits, double d) noexcept {
  std::uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  bits.store(b, std::memory_order_relaxed);  // a display value; guards nothing
}

}  // namespace ringrl
