// The work gate: how the learner bounds the policy lag of what actors sample.
//
// An actor that works in units (PQT: one batch of programs) claims a unit before it picks up
// the newest weights and samples it. The learner grants permits: the total number of units the
// actors may have claimed so far. With one update per unit and permits = units used + L + 1,
// every unit is sampled with weights at most L versions older than the learner's when it trains
// on it; L = 0 is the original's synchronous worker (sample, score, update, sample).
//
// Roles: grant_work() is called by the learner process only (one thread); try_claim_work() by
// any actor process, concurrently (a CAS on the control block's claim counter). Permits only
// grow; kUnlimitedWork turns the gate off (algorithms that do not bound their lag).
//
// Memory ordering: the learner publishes the weights a permit allows, then stores the permit
// count with release; try_claim_work() loads it with acquire before its CAS, so an actor that
// claims unit n and then reads the weight channel sees at least the weights published before
// permit n was granted. The CAS itself is relaxed: the claim counter orders nothing else. The
// slot's own claim counter is relaxed bookkeeping, read by the learner when the slot's actor
// died (units it claimed but never delivered are granted again).
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

#include "common/control_block.h"

namespace ringrl {

/// Permit count of an ungated run.
inline constexpr std::uint64_t kUnlimitedWork = std::numeric_limits<std::uint64_t>::max();

/// Learner: lets the actors claim up to `permits` units in total. Call after publishing the
/// weights those units must be sampled with.
inline void grant_work(ControlBlock& control, std::uint64_t permits) noexcept {
  control.work_permits.store(permits, std::memory_order_release);  // pairs with try_claim_work's acquire
}

/// Actor: claims one unit if a permit is free; false when every permit is taken.
[[nodiscard]] inline bool try_claim_work(ControlBlock& control, ActorSlot& slot) noexcept {
  const std::uint64_t permits = control.work_permits.load(std::memory_order_acquire);  // see the file comment
  std::uint64_t claimed = control.work_claimed.load(std::memory_order_relaxed);       // re-read by the CAS
  while (claimed < permits) {
    if (control.work_claimed.compare_exchange_weak(claimed, claimed + 1, std::memory_order_relaxed)) {
      slot.work_claimed.fetch_add(1, std::memory_order_relaxed);  // bookkeeping for lost units
      return true;
    }
  }
  return false;
}

}  // namespace ringrl
