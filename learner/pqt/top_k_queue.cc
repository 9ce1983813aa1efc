#include "learner/pqt/top_k_queue.h"

#include <algorithm>
#include <cstring>

#include "common/errors.h"

namespace ringrl::learner {

namespace {

/// Opens a saved queue, so a state read out of step fails at once.
constexpr char kQueueTag[8] = {'R', 'R', 'L', 'T', 'O', 'P', 'K', '2'};

/// a ranks above b: higher score, or equal score and inserted earlier.
bool ranks_above(const MaxUniquePriorityQueue::Item& a, const MaxUniquePriorityQueue::Item& b) {
  return a.score > b.score || (a.score == b.score && a.seq < b.seq);
}

}  // namespace

MaxUniquePriorityQueue::MaxUniquePriorityQueue(std::size_t capacity) : capacity_(capacity) {
  if (capacity < 1) throw UsageError("top-k queue capacity must be >= 1, got 0");
  items_.reserve(capacity + 1);
}

bool MaxUniquePriorityQueue::contains(const Tokens& tokens) const {
  for (const Item& it : items_) {
    if (it.tokens == tokens) return true;
  }
  return false;
}

std::size_t MaxUniquePriorityQueue::min_index() const {
  std::size_t m = 0;
  for (std::size_t i = 1; i < items_.size(); ++i) {
    if (ranks_above(items_[m], items_[i])) m = i;
  }
  return m;
}

bool MaxUniquePriorityQueue::push(double score, Tokens tokens) {
  if (contains(tokens)) return false;
  if (full()) {
    // Push-pop: the new item must beat the minimum strictly, else it is the one dropped.
    const std::size_t m = min_index();
    if (!(score > items_[m].score)) return false;
    items_[m] = Item{score, std::move(tokens), next_seq_++};
    return true;
  }
  items_.push_back(Item{score, std::move(tokens), next_seq_++});
  return true;
}

const MaxUniquePriorityQueue::Item& MaxUniquePriorityQueue::max() const {
  std::size_t m = 0;
  for (std::size_t i = 1; i < items_.size(); ++i) {
    if (ranks_above(items_[i], items_[m])) m = i;
  }
  return items_.at(m);
}

const MaxUniquePriorityQueue::Item& MaxUniquePriorityQueue::min() const { return items_.at(min_index()); }

std::vector<MaxUniquePriorityQueue::Item> MaxUniquePriorityQueue::sorted() const {
  std::vector<Item> out = items_;
  std::sort(out.begin(), out.end(), ranks_above);
  return out;
}

const MaxUniquePriorityQueue::Item& MaxUniquePriorityQueue::sample(std::mt19937_64& rng) const {
  std::uniform_int_distribution<std::size_t> pick(0, items_.size() - 1);
  return items_.at(pick(rng));
}

void MaxUniquePriorityQueue::save(ByteWriter& w) const {
  w.put_bytes(kQueueTag, sizeof kQueueTag);
  w.put<std::uint64_t>(capacity_);
  w.put<std::uint64_t>(next_seq_);
  w.put<std::uint64_t>(items_.size());
  for (const Item& it : items_) {
    w.put<double>(it.score);
    w.put<std::uint64_t>(it.seq);
    w.put_vector(it.tokens);
  }
}

MaxUniquePriorityQueue MaxUniquePriorityQueue::load(ByteReader& r) {
  char tag[sizeof kQueueTag];
  r.get_bytes(tag, sizeof tag);
  if (std::memcmp(tag, kQueueTag, sizeof tag) != 0) r.fail("not a top-k queue state (bad tag)");
  const auto capacity = r.get<std::uint64_t>();
  if (capacity < 1) r.fail("top-k queue capacity 0");
  // Built at capacity 1 and widened: the stored capacity is not trusted with an allocation.
  MaxUniquePriorityQueue q(1);
  q.capacity_ = static_cast<std::size_t>(capacity);
  q.next_seq_ = r.get<std::uint64_t>();
  const auto count = r.get<std::uint64_t>();
  if (count > capacity) {
    r.fail("top-k queue holds " + std::to_string(count) + " items, more than its capacity " + std::to_string(capacity));
  }
  for (std::uint64_t k = 0; k < count; ++k) {
    Item it;
    it.score = r.get<double>();
    it.seq = r.get<std::uint64_t>();
    r.get_vector_into(it.tokens);
    if (it.seq >= q.next_seq_) {
      r.fail("top-k queue item " + std::to_string(k) + " has insertion number " + std::to_string(it.seq) +
             ", not below the next one " + std::to_string(q.next_seq_));
    }
    if (q.contains(it.tokens)) r.fail("top-k queue repeats a program (item " + std::to_string(k) + ")");
    q.items_.push_back(std::move(it));
  }
  return q;
}

}  // namespace ringrl::learner
