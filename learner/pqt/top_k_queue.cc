#include "learner/pqt/top_k_queue.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "common/errors.h"
#include "common/py_heapq.h"

namespace ringrl::learner {

namespace {

/// Opens a saved queue, so a state read out of step fails at once. kQueueTag: the heap array;
/// kQueueTagUnordered: the format before it (items unordered, with insertion numbers).
constexpr char kQueueTag[8] = {'R', 'R', 'L', 'T', 'O', 'P', 'K', '3'};
constexpr char kQueueTagUnordered[8] = {'R', 'R', 'L', 'T', 'O', 'P', 'K', '2'};

/// heapq's order of MPQItemContainer: the score alone.
bool score_less(const MaxUniquePriorityQueue::Item& a, const MaxUniquePriorityQueue::Item& b) {
  return a.score < b.score;
}

}  // namespace

MaxUniquePriorityQueue::MaxUniquePriorityQueue(std::size_t capacity) : capacity_(capacity) {
  if (capacity < 1) throw UsageError("top-k queue capacity must be >= 1, got 0");
  items_.reserve(capacity);
}

bool MaxUniquePriorityQueue::contains(const Tokens& tokens) const {
  for (const Item& it : items_) {
    if (it.tokens == tokens) return true;
  }
  return false;
}

bool MaxUniquePriorityQueue::push(double score, Tokens tokens) {
  if (contains(tokens)) return false;
  Item item{score, std::move(tokens)};
  if (full()) return py_heappushpop(items_, item, score_less);  // item: the evicted root, or itself
  py_heappush(items_, std::move(item), score_less);
  return true;
}

const MaxUniquePriorityQueue::Item& MaxUniquePriorityQueue::max() const {
  std::size_t m = 0;
  for (std::size_t i = 1; i < items_.size(); ++i) {
    if (items_[i].score > items_[m].score) m = i;
  }
  return items_.at(m);
}

const MaxUniquePriorityQueue::Item& MaxUniquePriorityQueue::min() const { return items_.at(0); }

std::vector<MaxUniquePriorityQueue::Item> MaxUniquePriorityQueue::sorted() const {
  std::vector<Item> out;
  out.reserve(items_.size());
  for (std::size_t i : py_nlargest_order(items_, score_less)) out.push_back(items_[i]);
  return out;
}

const MaxUniquePriorityQueue::Item& MaxUniquePriorityQueue::sample(std::mt19937_64& rng) const {
  std::uniform_int_distribution<std::size_t> pick(0, items_.size() - 1);
  return items_.at(pick(rng));
}

void MaxUniquePriorityQueue::save(ByteWriter& w) const {
  w.put_bytes(kQueueTag, sizeof kQueueTag);
  w.put<std::uint64_t>(capacity_);
  w.put<std::uint64_t>(items_.size());
  for (const Item& it : items_) {
    w.put<double>(it.score);
    w.put_vector(it.tokens);
  }
}

MaxUniquePriorityQueue MaxUniquePriorityQueue::load(ByteReader& r) {
  char tag[sizeof kQueueTag];
  r.get_bytes(tag, sizeof tag);
  if (std::memcmp(tag, kQueueTag, sizeof tag) == 0) return load_items(r, /*heap_order=*/true);
  if (std::memcmp(tag, kQueueTagUnordered, sizeof tag) == 0) return load_items(r, /*heap_order=*/false);
  r.fail("not a top-k queue state (bad tag)");
}

MaxUniquePriorityQueue MaxUniquePriorityQueue::load_items(ByteReader& r, bool heap_order) {
  const auto capacity = r.get<std::uint64_t>();
  if (capacity < 1) r.fail("top-k queue capacity 0");
  // Built at capacity 1 and widened: the stored capacity is not trusted with an allocation.
  MaxUniquePriorityQueue q(1);
  q.capacity_ = static_cast<std::size_t>(capacity);
  std::uint64_t next_seq = 0;
  if (!heap_order) next_seq = r.get<std::uint64_t>();
  const auto count = r.get<std::uint64_t>();
  if (count > capacity) {
    r.fail("top-k queue holds " + std::to_string(count) + " items, more than its capacity " + std::to_string(capacity));
  }
  std::vector<std::pair<std::uint64_t, Item>> saved;  // (insertion number, item); 0s in heap order
  for (std::uint64_t k = 0; k < count; ++k) {
    Item it;
    it.score = r.get<double>();
    std::uint64_t seq = 0;
    if (!heap_order) {
      seq = r.get<std::uint64_t>();
      if (seq >= next_seq) {
        r.fail("top-k queue item " + std::to_string(k) + " has insertion number " + std::to_string(seq) +
               ", not below the next one " + std::to_string(next_seq));
      }
    }
    r.get_vector_into(it.tokens);
    for (const auto& s : saved) {
      if (s.second.tokens == it.tokens) r.fail("top-k queue repeats a program (item " + std::to_string(k) + ")");
    }
    saved.emplace_back(seq, std::move(it));
  }
  if (!heap_order) {
    std::stable_sort(saved.begin(), saved.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  for (const auto& s : saved) py_heappush(q.items_, s.second, score_less);
  if (heap_order) {
    for (std::size_t k = 0; k < saved.size(); ++k) {
      if (q.items_[k].tokens != saved[k].second.tokens) {
        r.fail("top-k queue items are not in heap order (item " + std::to_string(k) + ")");
      }
    }
  }
  return q;
}

}  // namespace ringrl::learner
