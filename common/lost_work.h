// Work that dead actors claimed and never delivered (common/work_gate.h): the records a run
// must grant again, so that a unit an actor died holding does not stall the gate.
//
// Per actor slot it keeps the counts of the slot's current incarnation at its start. When the
// slot's deaths (restarts, plus one once it gave up) grow, the incarnation that ended owed
// records_per_unit records for each unit it claimed, and delivered what was taken from its
// ring since it started; the shortfall is lost. Over-counted when the ring still held records
// of the dead actor that are taken later: a dead actor can widen the bound by a unit, never
// stall the run.
//
// Used by the run driver for its own actors and by a node bridge for its node's
// (mpi/node_bridge.h). One thread uses an instance.
#pragma once

#include <cstdint>
#include <vector>

namespace ringrl {

class LostWork {
 public:
  LostWork(std::uint32_t slots, std::uint64_t records_per_unit)
      : per_unit_(records_per_unit < 1 ? 1 : records_per_unit), slots_(slots) {}

  /// Slot `slot` now: `deaths` so far, `claimed` units over every incarnation (the slot's
  /// work_claimed), `delivered` records taken from its ring in all.
  void observe(std::uint32_t slot, std::uint32_t deaths, std::uint64_t claimed, std::uint64_t delivered) {
    Incarnation& inc = slots_[slot];
    if (deaths == inc.deaths) return;
    const std::uint64_t owed = (claimed - inc.claimed) * per_unit_, got = delivered - inc.delivered;
    lost_ += owed > got ? owed - got : 0;
    inc = {deaths, claimed, delivered};
  }
  /// Records lost so far, over every slot.
  std::uint64_t records() const noexcept { return lost_; }

 private:
  struct Incarnation {
    std::uint32_t deaths = 0;                  // of the slot when the incarnation started
    std::uint64_t claimed = 0, delivered = 0;  // the slot's counts when it started
  };
  std::uint64_t per_unit_;
  std::vector<Incarnation> slots_;
  std::uint64_t lost_ = 0;
};

}  // namespace ringrl
