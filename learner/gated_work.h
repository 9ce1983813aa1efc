// GatedWork: the run driver's side of the work gate (common/work_gate.h) for an algorithm that
// bounds its lag (Algorithm::units_ahead() > 0): who works on which unit (learner/work_dealer.h),
// the order units reach the algorithm in (learner/unit_order.h), and each participant's permits.
//
// Contract:
// * take() maps a record's unit tag to the run's ticket through its participant and offers it
//   to the unit order (`feed` is the driver's: it hands one record to the algorithm, false when
//   the algorithm takes no more for now); release() feeds what the order held back.
// * permits() is called after each publication: it skips the units dead actors held, deals the
//   units the permits allow (the units the algorithm retired, counted in records: retired,
//   discarded by the driver, or never to come from a skipped unit; plus `ahead`), and returns
//   each participant's own permits.
// * skip_stalled() skips a unit that has not come for the unit timeout while later ones wait,
//   and lets its participant take another.
// * Records of units already passed are dropped and counted per participant (late_of()).
// * One thread uses an instance (the driver's main thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/spsc_ring.h"
#include "learner/actor_source.h"
#include "learner/unit_order.h"
#include "learner/work_dealer.h"

namespace ringrl::learner {

class GatedWork {
 public:
  using Clock = UnitOrder::Clock;

  /// `room[p]`: the units participant p may hold at once.
  GatedWork(const std::vector<std::uint32_t>& room, std::uint64_t records_per_unit, Clock::duration unit_timeout)
      : per_unit_(records_per_unit < 1 ? 1 : records_per_unit),
        order_(per_unit_),
        dealer_(room, per_unit_),
        timeout_(unit_timeout),
        late_(room.size(), 0),
        permits_(room.size(), 0) {}

  /// One record of participant `p`'s actor `slot` (see the contract); false when `feed` refused it.
  template <class Feed>
  bool take(std::uint32_t p, std::uint32_t slot, const RecordView& rec, Feed&& feed) {
    const std::optional<std::uint64_t> ticket = dealer_.ticket(p, rec.unit);
    if (!ticket) {  // a unit passed and forgotten
      order_.count_late();
      ++late_[p];
      return true;
    }
    const std::uint64_t late = order_.late();
    if (!order_.offer(slot, *ticket, rec, feed)) return false;
    if (order_.late() != late) ++late_[p];
    dealer_.arrived(*ticket);
    return true;
  }
  template <class Feed>
  std::uint64_t release(Feed&& feed) {
    return order_.release(feed);
  }

  /// Skips the next unit when it stalled (see the contract); returns its ticket when it did.
  std::optional<std::uint64_t> skip_stalled(Clock::time_point now) {
    if (!order_.skip_stalled(now, timeout_)) return std::nullopt;
    const std::uint64_t ticket = order_.next() - 1;
    dealer_.release(ticket);
    return ticket;
  }

  /// Each participant's permits (see the contract): `lost`, the units dead actors held;
  /// `records_passed`, the records the algorithm retired and the driver discarded.
  const std::vector<std::uint64_t>& permits(const std::vector<LostUnit>& lost, std::uint64_t records_passed,
                                            std::uint64_t ahead) {
    for (const LostUnit& u : lost)
      if (const auto t = dealer_.ticket_of_local(u.participant, u.ticket)) {
        order_.lost(*t);
        dealer_.release(*t);
      }
    dealer_.forget_below(order_.next());
    // In whole units: a unit half fed before its actor died completes with the next one's records.
    const std::uint64_t passed = records_passed + order_.missing();
    dealer_.deal((passed + per_unit_ - 1) / per_unit_ + ahead);
    for (std::uint32_t p = 0; p < dealer_.participants(); ++p) permits_[p] = dealer_.local_permits(p);
    return permits_;
  }

  std::uint64_t late() const noexcept { return order_.late(); }
  std::uint64_t late_of(std::uint32_t p) const { return late_.at(p); }
  std::uint64_t skipped() const noexcept { return order_.skipped(); }

 private:
  std::uint64_t per_unit_;
  UnitOrder order_;
  WorkDealer dealer_;
  Clock::duration timeout_;
  std::vector<std::uint64_t> late_;     // per participant
  std::vector<std::uint64_t> permits_;  // per participant, as permits() left them
};

}  // namespace ringrl::learner
