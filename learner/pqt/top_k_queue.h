// MaxUniquePriorityQueue: the PQT "top-k" buffer of the best programs seen (spec §5.4).
//
// Contract:
// * Holds at most capacity() items (score, token tuple). Uniqueness is by the exact token
//   tuple among the items currently held; an evicted tuple may enter again later.
// * The items are the original's heapq min-heap array (common/py_heapq.h), ordered by score
//   alone, as MPQItemContainer compares them: between equal scores there is no tie-break, the
//   heap's shape decides.
// * push(): a tuple already held is ignored (its score is not updated); if not full the item
//   is heappush-ed; if full, heappushpop: the item enters only if its score is strictly above
//   the root's (on a tie with the minimum the NEW item is the one discarded), and then the
//   root leaves. When several held items share the minimum score, the one evicted is the root,
//   which is where heapq's sifts left it (not the newest nor the oldest in general).
// * heap(): the heap array; sample() draws an index into it uniformly (with replacement, the
//   caller's RNG), as random_sample's np.random.choice(len(heap)) does.
// * max(): the first item of the heap array with the highest score (get_max); min(): the root
//   (get_min); sorted(): iter_in_order (highest score first, equal scores in array order).
// * save()/load(): capacity and the heap array, through the byte codec (common/byte_codec.h),
//   for checkpoints; load() rebuilds the heap by pushing the items in saved order, which gives
//   the saved array back. A state of the older format (RRLTOPK2: items unordered, with their
//   insertion numbers) loads with its items pushed in insertion order: the same programs, in a
//   valid heap whose order among ties may differ from the one the run would have had. load()
//   throws CorruptData naming what is wrong on a truncated, malformed or foreign state.
// * Torch-free. Not thread-safe: one owner (the learner thread) uses it.
// * Cost: push is O(capacity + length) (linear duplicate scan; capacity is 10 in the paper).
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
    double score = 0.0;  // the episode's total reward
    Tokens tokens;       // the episode's tokens, EOS included if sampled
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

  /// The first highest-score item of the heap array / the root. Precondition: !empty().
  const Item& max() const;
  const Item& min() const;

  /// Held items, best first (equal scores in heap-array order).
  std::vector<Item> sorted() const;

  /// The heap array (heapq's invariant: no item's score is below its parent's).
  const std::vector<Item>& heap() const { return items_; }

  /// heap()[i] for i drawn uniformly (with replacement). Precondition: !empty().
  const Item& sample(std::mt19937_64& rng) const;

  /// Writes the state (capacity included) for load().
  void save(ByteWriter& w) const;
  /// The queue save() wrote; CorruptData (from r.fail) on bad state.
  static MaxUniquePriorityQueue load(ByteReader& r);

  void clear() { items_.clear(); }

 private:
  static MaxUniquePriorityQueue load_items(ByteReader& r, bool heap_order);

  std::size_t capacity_;
  std::vector<Item> items_;  // heapq's array
};

}  // namespace ringrl::learner
