// The work gate: how the learner bounds the policy lag of what actors sample.
//
// An actor that works in units (PQT: one batch of programs) claims a unit before it picks up
// the newest weights and samples it. The learner grants permits: the total number of units the
// actors may have claimed so far. With one update per unit and permits = units used + L + 1,
// every unit is sampled with weights at most L versions older than the learner's when it trains
// on it; L = 0 is the original's synchronous worker (sample, score, update, sample).
//
// Tickets: the claim counter's value before a claim is the unit's ticket (0, 1, 2, ... in claim
// order). An actor holds one unit at a time: it claims, makes and pushes the unit's records,
// each tagged with unit_tag(ticket) (RecordHeader::unit), then claims the next. The learner
// trains units in ticket order (learner/unit_order.h), so that unit n trains at the version the
// permit assumed whatever order the units arrive in; the slot's work_ticket names the unit an
// actor held when it died, so that the learner skips it by its ticket. The tag is the ticket's
// low 16 bits: the learner restores the ticket from the window of units in flight, which the
// permits bound (kMaxUnitsInFlight).
//
// Roles: grant_work() is called by the learner process only (one thread); try_claim_work() by
// any actor process, concurrently (a CAS on the control block's claim counter). Permits only
// grow; kUnlimitedWork turns the gate off (algorithms that do not bound their lag).
//
// Memory ordering: the learner publishes the weights a permit allows, then stores the permit
// count with release; try_claim_work() loads it with acquire before its CAS, so an actor that
// claims unit n and then reads the weight channel sees at least the weights published before
// permit n was granted. The CAS itself is relaxed: the claim counter orders nothing else. The
// slot's claim count and ticket are relaxed bookkeeping, read by the learner when the slot's
// actor died.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

#include "common/control_block.h"

namespace ringrl {

/// Permit count of an ungated run.
inline constexpr std::uint64_t kUnlimitedWork = std::numeric_limits<std::uint64_t>::max();

/// Most units that may be in flight (granted and not yet passed in ticket order) at once, so
/// that a 16-bit tag names its unit without doubt.
inline constexpr std::uint64_t kMaxUnitsInFlight = std::uint64_t{1} << 14;

/// The tag a record of unit `ticket` carries.
constexpr std::uint16_t unit_tag(std::uint64_t ticket) noexcept { return static_cast<std::uint16_t>(ticket); }

/// Learner: lets the actors claim up to `permits` units in total. Call after publishing the
/// weights those units must be sampled with.
inline void grant_work(ControlBlock& control, std::uint64_t permits) noexcept {
  control.work_permits.store(permits, std::memory_order_release);  // pairs with try_claim_work's acquire
}

/// Actor: claims one unit if a permit is free, and stores its ticket in `*ticket`; false when
/// every permit is taken.
[[nodiscard]] inline bool try_claim_work(ControlBlock& control, ActorSlot& slot, std::uint64_t* ticket) noexcept {
  const std::uint64_t permits = control.work_permits.load(std::memory_order_acquire);  // see the file comment
  std::uint64_t claimed = control.work_claimed.load(std::memory_order_relaxed);       // re-read by the CAS
  while (claimed < permits) {
    if (control.work_claimed.compare_exchange_weak(claimed, claimed + 1, std::memory_order_relaxed)) {
      slot.work_claimed.fetch_add(1, std::memory_order_relaxed);     // bookkeeping for lost units
      slot.work_ticket.store(claimed + 1, std::memory_order_relaxed);  // the unit it holds now
      *ticket = claimed;
      return true;
    }
  }
  return false;
}

}  // namespace ringrl
