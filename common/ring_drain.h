// RingDrain: the one loop that drains actor rings (the run driver, the node bridge's record
// forwarder, `ringrl demo`).
//
// Contract:
// * pass() visits the sources round-robin, starting one source later on each pass, so a taker
//   that accepts only so many records (a rate limiter, a bounded batch) hears every actor in
//   turn. The sources are the rings, then `extra` more (the driver's remote actors, as one
//   more "ring"), drained by `drain_extra(k)`, which returns how many records it took.
// * At most kMaxPerRing records per ring per pass. `take(i, rec)` returns true to consume the
//   record (released from ring i and counted) or false to leave it in its ring and end the
//   pass there.
// * A corrupt ring throws std::runtime_error naming the actor and what is wrong.
// * drained()[i]: records taken from ring i since construction. One thread uses an instance.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "common/spsc_ring.h"

namespace ringrl {

class RingDrain {
 public:
  static constexpr std::uint32_t kMaxPerRing = 4096;  // records per ring per pass

  explicit RingDrain(std::uint32_t rings = 0) : drained_(rings, 0) {}

  /// One pass over the rings only; returns the records taken.
  template <class Take>
  std::uint64_t pass(std::vector<RingReader>& readers, Take&& take) {
    return pass(readers, 0, take, [](std::uint32_t) { return std::uint64_t{0}; });
  }

  /// One pass over the rings and `extra` more sources (see the contract).
  template <class Take, class DrainExtra>
  std::uint64_t pass(std::vector<RingReader>& readers, std::uint32_t extra, Take&& take, DrainExtra&& drain_extra) {
    const auto rings = static_cast<std::uint32_t>(readers.size());
    if (drained_.size() < rings) drained_.resize(rings, 0);
    const std::uint32_t n = rings + extra;
    if (n == 0) return 0;
    const std::uint32_t start = first_ % n;
    first_ = (start + 1) % n;
    std::uint64_t got = 0;
    for (std::uint32_t k = 0; k < n; ++k) {
      const std::uint32_t i = (start + k) % n;
      if (i >= rings) {
        got += drain_extra(i - rings);
        continue;
      }
      RecordView rec;
      for (std::uint32_t j = 0; j < kMaxPerRing; ++j) {
        const PeekStatus ps = readers[i].peek(rec);
        if (ps == PeekStatus::kEmpty) break;
        if (ps == PeekStatus::kCorrupt)
          throw std::runtime_error(fmt::format("actor {} ring is corrupt: {}", i, readers[i].error()));
        if (!take(i, rec)) return got;
        readers[i].release();
        ++drained_[i];
        ++got;
      }
    }
    return got;
  }

  const std::vector<std::uint64_t>& drained() const noexcept { return drained_; }

 private:
  std::uint32_t first_ = 0;
  std::vector<std::uint64_t> drained_;
};

}  // namespace ringrl
