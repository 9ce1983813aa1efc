// Work that dead actors claimed (common/work_gate.h): the tickets of the units a run's actors
// held when they died, so that the learner skips them by ticket (learner/unit_order.h) rather
// than wait for records that will never come.
//
// Per actor slot it keeps the slot's work_ticket when its current incarnation started. When the
// slot's deaths (restarts, plus one once it gave up) grow, and the incarnation that ended
// claimed a unit, that unit (its last) is reported: an actor holds one unit at a time. The unit
// may have been delivered whole before the actor died; whoever skips it checks that first.
//
// Used by the actor pool (common/actor_pool.h) on the run driver's machine and on every node.
// One thread uses an instance.
#pragma once

#include <cstdint>
#include <vector>

namespace ringrl {

class LostWork {
 public:
  explicit LostWork(std::uint32_t slots) : slots_(slots) {}

  /// Slot `slot` now: `deaths` so far and its work_ticket (1 + its last claimed ticket, 0 =
  /// none). Appends the ticket of the unit the incarnation that ended held, if any, to `out`.
  void observe(std::uint32_t slot, std::uint32_t deaths, std::uint64_t work_ticket, std::vector<std::uint64_t>& out) {
    Incarnation& inc = slots_[slot];
    if (deaths == inc.deaths) return;
    if (work_ticket != inc.work_ticket && work_ticket != 0) out.push_back(work_ticket - 1);
    inc = {deaths, work_ticket};
  }

 private:
  struct Incarnation {
    std::uint32_t deaths = 0;       // of the slot when the incarnation started
    std::uint64_t work_ticket = 0;  // the slot's work_ticket when it started
  };
  std::vector<Incarnation> slots_;
};

}  // namespace ringrl
