// WorkDealer: which participant works on which unit of gated work (common/work_gate.h), for
// the run driver. Participants (this machine's actors; in a run across nodes, each other
// node's) pull their work: the permits number the units the run may have in flight, and each
// unit goes to a participant with room (the driver gives each two units per actor: the one it
// works on and the one waiting in its ring), the one holding fewest first (ties in turn). A participant's own gate numbers its claims 0, 1, ...
// (local tickets): its local permits are the units dealt to it, and its k-th local ticket is
// the k-th unit dealt to it. So a slow participant gets units only as fast as it delivers
// them, not every N-th unit of the run.
//
// Contract:
// * deal(permits) deals the run's tickets below `permits` not yet dealt while some participant
//   has room; local_permits(p) is what participant p's gate should allow.
// * ticket(p, tag) / ticket_of_local(p, local): the run's ticket of participant p's unit with
//   that local tag / local ticket; nullopt when it names no unit p holds (a unit forgotten).
// * A unit stops taking room when all its records arrived (arrived(), once per record) or
//   when it is released (its actor died, or the run skipped it); forget_below(t) drops what
//   it knows of units below ticket t (passed in the run's order: learner/unit_order.h).
// * One thread uses an instance (the driver's main thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "common/work_gate.h"

namespace ringrl::learner {

class WorkDealer {
 public:
  /// `room[p]`: the units participant p may hold at once.
  WorkDealer(const std::vector<std::uint32_t>& room, std::uint64_t records_per_unit)
      : per_unit_(records_per_unit < 1 ? 1 : records_per_unit) {
    parts_.resize(room.size());
    for (std::size_t p = 0; p < room.size(); ++p) parts_[p].room = room[p] < 1 ? 1 : room[p];
  }

  /// Deals tickets below `permits` (see the contract).
  void deal(std::uint64_t permits) {
    const std::size_t n = parts_.size();
    while (dealt_ < permits) {
      std::size_t best = n;
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t p = (turn_ + k) % n;
        if (parts_[p].holding < parts_[p].room && (best == n || parts_[p].holding < parts_[best].holding)) best = p;
      }
      if (best == n) return;  // everyone is busy: the rest waits for room
      Participant& part = parts_[best];
      owner_[dealt_] = {static_cast<std::uint32_t>(best), part.base + part.units.size()};
      part.units.push_back(Unit{dealt_});
      ++part.holding;
      ++dealt_;
      turn_ = (best + 1) % n;
    }
  }

  std::uint32_t participants() const noexcept { return static_cast<std::uint32_t>(parts_.size()); }
  std::uint64_t local_permits(std::uint32_t p) const { return parts_[p].base + parts_[p].units.size(); }
  /// Units dealt so far (the run's tickets below it are dealt).
  std::uint64_t dealt() const noexcept { return dealt_; }
  /// Units participant p holds (dealt, not whole and not released).
  std::uint32_t holding(std::uint32_t p) const { return parts_[p].holding; }

  std::optional<std::uint64_t> ticket(std::uint32_t p, std::uint16_t tag) const {
    const Participant& part = parts_[p];
    const std::uint64_t local = part.base + static_cast<std::uint16_t>(tag - unit_tag(part.base));
    return ticket_of_local(p, local);
  }
  std::optional<std::uint64_t> ticket_of_local(std::uint32_t p, std::uint64_t local) const {
    const Participant& part = parts_[p];
    if (local < part.base || local - part.base >= part.units.size()) return std::nullopt;
    return part.units[local - part.base].ticket;
  }

  /// One record of unit `ticket` arrived.
  void arrived(std::uint64_t ticket) {
    if (Unit* u = find(ticket); u != nullptr && ++u->arrived == per_unit_) free(ticket, *u);
  }
  /// Unit `ticket` takes no more room (its actor died, or the run skipped it).
  void release(std::uint64_t ticket) {
    if (Unit* u = find(ticket); u != nullptr) free(ticket, *u);
  }
  /// Forgets the units below `ticket` (see the contract).
  void forget_below(std::uint64_t ticket) {
    for (auto it = owner_.begin(); it != owner_.end() && it->first < ticket; it = owner_.erase(it)) {
      Participant& part = parts_[it->second.first];
      Unit& u = part.units.front();  // a participant's units are dealt, and forgotten, in ticket order
      if (!u.freed) --part.holding;
      part.units.pop_front();
      ++part.base;
    }
  }

 private:
  struct Unit {
    std::uint64_t ticket = 0;
    std::uint64_t arrived = 0;  // records of it so far
    bool freed = false;         // takes no room any more
  };
  struct Participant {
    std::uint32_t room = 1;
    std::uint32_t holding = 0;  // units dealt that take room
    std::uint64_t base = 0;     // local ticket of units.front()
    std::deque<Unit> units;     // dealt and not forgotten, in ticket order
  };

  Unit* find(std::uint64_t ticket) {
    const auto it = owner_.find(ticket);
    if (it == owner_.end()) return nullptr;
    Participant& part = parts_[it->second.first];
    return &part.units[it->second.second - part.base];
  }
  void free(std::uint64_t ticket, Unit& u) {
    if (u.freed) return;
    u.freed = true;
    --parts_[owner_.at(ticket).first].holding;
  }

  std::uint64_t per_unit_;
  std::vector<Participant> parts_;
  std::map<std::uint64_t, std::pair<std::uint32_t, std::uint64_t>> owner_;  // ticket -> (participant, local)
  std::uint64_t dealt_ = 0;
  std::size_t turn_ = 0;  // where the next tie goes
};

}  // namespace ringrl::learner
