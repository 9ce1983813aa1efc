// MaxUniquePriorityQueue: the PQT "top-k" buffer of the best programs seen (spec §5.4).
//
// Contract:
// * Holds at most capacity() items (score, token tuple). Uniqueness is by the exact token
//   tuple among the items currently held; an evicted tuple may enter again later.
// * push(): a tuple already held is ignored (its score is not updated); if not full the item
//   is inserted; if full the item is inserted and then the lowest score is evicted. On a tie
//   with the current minimum the NEW item is the one discarded (min-heap push-pop rule).
//   Among held items with equal scores, the one inserted earlier counts as the larger.
// * sample(): uniform over the held items, with replacement, driven by the caller's RNG.
// * save()/load(): the queue's whole state (capacity, insertion counter, items) through the
//   byte codec (common/byte_codec.h), for checkpoints. load() throws CorruptData naming what is
//   wrong on a truncated, malformed or foreign state.
// * Torch-free. Not thread-safe: one owner (the learner thread) uses it.
// * Cost: push is O(capacity + length) (linear scan; capacity is 10 in the paper).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "common/byte_codec.h"

namespace ringrl::learner {

class MaxUniquePriorityQueue {
 public:
  using Tokens = std::vector<std::int32_t>;
  struct Item {
    double score = 0.0;     // the episode's total reward
    Tokens tokens;          // the episode's tokens, EOS included if sampled
    std::uint64_t seq = 0;  // insertion order; breaks ties between held items
  };

  /// capacity >= 1, else UsageError.
  explicit MaxUniquePriorityQueue(std::size_t capacity);

  /// Applies the push rule above. Returns true iff the item is held after the call
  /// (false when it was a duplicate or was discarded at once).
  bool push(double score, Tokens tokens);

  std::size_t size() const { return items_.size(); }
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return items_.empty(); }
  bool full() const { return items_.size() >= capacity_; }
  bool contains(const Tokens& tokens) const;

  /// Highest / lowest item by (score, earlier insertion). Precondition: !empty().
  const Item& max() const;
  const Item& min() const;

  /// Held items, best first.
  std::vector<Item> sorted() const;

  /// One item drawn uniformly (with replacement). Precondition: !empty().
  const Item& sample(std::mt19937_64& rng) const;

  /// Writes the state (capacity included) for load().
  void save(ByteWriter& w) const;
  /// The queue save() wrote; CorruptData (from r.fail) on bad state.
  static MaxUniquePriorityQueue load(ByteReader& r);

  void clear() { items_.clear(); }

 private:
  std::size_t min_index() const;

  std::size_t capacity_;
  std::uint64_t next_seq_ = 0;
  std::vector<Item> items_;  // unordered
};

}  // namespace ringrl::learner
