// UnitOrder: the run driver's reorder buffer for gated work (common/work_gate.h). Units reach
// the learner in ticket order, whatever order they arrive in, so that each trains at the
// version its permit was granted for and the lag bound (max_lag) is exact, on one machine and
// across nodes.
//
// Contract:
// * Records come through offer() with the run's ticket of their unit (learner/work_dealer.h
//   maps a participant's tags). A record of a unit already passed (one skipped while its
//   records were on their way) is late: discarded and counted.
// * A record of the next unit goes to `feed` at once when no earlier record of that unit is
//   held; any other is copied and held until its unit is next. release() feeds the held records
//   of the next units, in order, while `feed` takes them. `feed(slot, view)` returns false when
//   the learner takes no more for now: offer() then returns false and the record stays where
//   it was (the source offers it again first).
// * A unit has records_per_unit records; the next unit is passed when that many were fed. A
//   unit is skipped (its held records dropped and counted late) when lost() named it and it
//   cannot be completed from what arrived, or when skip_stalled() finds it next for longer than
//   the timeout without one record of it while later units wait and the learner wanted records
//   (a unit its actor is slow with; when nothing arrives at all, the actors' own watchdogs
//   judge them).
// * missing(): records the skipped units never fed (records_per_unit less what was fed of
//   each): the driver counts them with the records the learner retired when it grants work, so
//   that a unit half fed before its actor died neither stalls the gate nor is counted twice.
// * One thread uses an instance (the driver's main thread).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "common/spsc_ring.h"

namespace ringrl::learner {

class UnitOrder {
 public:
  using Clock = std::chrono::steady_clock;

  explicit UnitOrder(std::uint64_t records_per_unit) : per_unit_(records_per_unit < 1 ? 1 : records_per_unit) {}

  /// Offers one record of actor `slot` of unit `ticket` (see the contract); false when `feed`
  /// refused it.
  template <class Feed>
  bool offer(std::uint32_t slot, std::uint64_t ticket, const RecordView& rec, Feed&& feed) {
    if (ticket < next_) {  // a unit already passed
      ++late_;
      return true;
    }
    if (ticket == next_ && held_.count(next_) == 0) {
      if (!feed(slot, rec)) {
        progress_ = Clock::now();  // the learner is the one behind
        return false;
      }
      passed_one();
      return true;
    }
    hold(ticket, slot, rec);
    return true;
  }

  /// Feeds the held records of the next units in order while `feed` takes them; skips a next
  /// unit that lost() named and that cannot be completed. Returns the records fed.
  template <class Feed>
  std::uint64_t release(Feed&& feed) {
    std::uint64_t fed = 0;
    for (;;) {
      auto it = held_.find(next_);
      const std::size_t have = it == held_.end() ? 0 : it->second.records.size() - it->second.fed;
      if (lost_.erase(next_) != 0 && got_ + have < per_unit_) {
        skip(it);
        continue;
      }
      if (it == held_.end()) return fed;
      Unit& unit = it->second;
      const std::uint64_t ticket = next_;
      while (unit.fed < unit.records.size() && next_ == ticket) {
        const Held& h = unit.records[unit.fed];
        RecordView v;
        v.type = h.type;
        v.version = h.version;
        v.data = h.bytes.data();
        v.length = static_cast<std::uint32_t>(h.bytes.size());
        if (!feed(h.slot, v)) {
          progress_ = Clock::now();
          return fed;
        }
        ++unit.fed;
        ++fed;
        passed_one();
      }
      late_ += unit.records.size() - unit.fed;  // more records than a unit has: not the learner's
      held_.erase(it);
      if (next_ == ticket) return fed;  // the unit is not complete yet: its next records come directly
    }
  }

  /// The actor that held unit `ticket` died (common/lost_work.h).
  void lost(std::uint64_t ticket) {
    if (ticket >= next_) lost_.insert(ticket);
  }

  /// Skips the next unit when nothing of it came for `timeout` while later units wait and the
  /// learner took records; true when it did.
  bool skip_stalled(Clock::time_point now, Clock::duration timeout) {
    if (held_.empty() || now - progress_ < timeout) return false;
    skip(held_.find(next_));
    return true;
  }

  std::uint64_t next() const noexcept { return next_; }
  /// Records discarded: of units already passed, or held for a unit that was skipped.
  std::uint64_t late() const noexcept { return late_; }
  /// Counts a record discarded before it was offered (its unit was forgotten).
  void count_late() noexcept { ++late_; }
  std::uint64_t skipped() const noexcept { return skipped_; }
  /// Records the skipped units never fed (see the contract).
  std::uint64_t missing() const noexcept { return missing_; }
  /// Records held for later units.
  std::size_t held() const noexcept {
    std::size_t n = 0;
    for (const auto& [t, u] : held_) n += u.records.size() - u.fed;
    return n;
  }

 private:
  struct Held {
    std::uint32_t slot = 0;
    std::uint16_t type = 0;
    std::uint64_t version = 0;
    std::vector<std::byte> bytes;
  };
  struct Unit {
    std::vector<Held> records;
    std::size_t fed = 0;  // records of it already fed
  };

  void hold(std::uint64_t ticket, std::uint32_t slot, const RecordView& rec) {
    Held h;
    h.slot = slot;
    h.type = rec.type;
    h.version = rec.version;
    h.bytes.assign(rec.data, rec.data + rec.length);
    held_[ticket].records.push_back(std::move(h));
  }
  void passed_one() {
    progress_ = Clock::now();
    if (++got_ == per_unit_) advance();
  }
  void advance() {
    ++next_;
    got_ = 0;
    progress_ = Clock::now();
  }
  void skip(std::map<std::uint64_t, Unit>::iterator it) {
    if (it != held_.end()) {
      late_ += it->second.records.size() - it->second.fed;
      held_.erase(it);
    }
    lost_.erase(next_);
    ++skipped_;
    missing_ += per_unit_ - got_;
    advance();
  }

  std::uint64_t per_unit_;
  std::uint64_t next_ = 0;  // the ticket of the unit fed now
  std::uint64_t got_ = 0;   // its records fed
  std::map<std::uint64_t, Unit> held_;
  std::set<std::uint64_t> lost_;
  std::uint64_t late_ = 0, skipped_ = 0, missing_ = 0;
  Clock::time_point progress_ = Clock::now();  // the next unit's last progress
};

}  // namespace ringrl::learner
