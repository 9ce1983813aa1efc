#include "learner/top_k_queue.h"

#include <algorithm>
#include <cstring>

#include "common/errors.h"

namespace ringrl::learner {

namespace {

constexpr char kQueueMagic[8] = {'R', 'R', 'L', 'T', 'O', 'P', 'K', '1'};

/// a ranks above b: higher score, or equal score and inserted earlier.
bool ranks_above(const MaxUniquePriorityQueue::Item& a, const MaxUniquePriorityQueue::Item& b) {
  return a.score > b.score || (a.score == b.score && a.seq < b.seq);
}

template <typename T>
void put(std::string* out, const T& v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

template <typename T>
T get(const std::string& in, std::size_t* pos) {
  if (in.size() - *pos < sizeof(T)) throw UsageError("top-k queue bytes are truncated");
  T v;
  std::memcpy(&v, in.data() + *pos, sizeof(T));
  *pos += sizeof(T);
  return v;
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

const MaxUniquePriorityQueue::Item& MaxUniquePriorityQueue::min() const {
  return items_.at(min_index());
}

std::vector<MaxUniquePriorityQueue::Item> MaxUniquePriorityQueue::sorted() const {
  std::vector<Item> out = items_;
  std::sort(out.begin(), out.end(), ranks_above);
  return out;
}

const MaxUniquePriorityQueue::Item& MaxUniquePriorityQueue::sample(std::mt19937_64& rng) const {
  std::uniform_int_distribution<std::size_t> pick(0, items_.size() - 1);
  return items_.at(pick(rng));
}

std::string MaxUniquePriorityQueue::serialize() const {
  std::string out(kQueueMagic, sizeof(kQueueMagic));
  put<std::uint64_t>(&out, capacity_);
  put<std::uint64_t>(&out, next_seq_);
  put<std::uint64_t>(&out, items_.size());
  for (const Item& it : items_) {
    put<double>(&out, it.score);
    put<std::uint64_t>(&out, it.seq);
    put<std::uint64_t>(&out, it.tokens.size());
    out.append(reinterpret_cast<const char*>(it.tokens.data()),
               it.tokens.size() * sizeof(std::int32_t));
  }
  return out;
}

MaxUniquePriorityQueue MaxUniquePriorityQueue::deserialize(const std::string& bytes) {
  if (bytes.size() < sizeof(kQueueMagic) ||
      std::memcmp(bytes.data(), kQueueMagic, sizeof(kQueueMagic)) != 0) {
    throw UsageError("not a top-k queue checkpoint (bad magic)");
  }
  std::size_t pos = sizeof(kQueueMagic);
  const auto capacity = get<std::uint64_t>(bytes, &pos);
  MaxUniquePriorityQueue q(static_cast<std::size_t>(capacity));
  q.next_seq_ = get<std::uint64_t>(bytes, &pos);
  const auto count = get<std::uint64_t>(bytes, &pos);
  if (count > capacity) {
    throw UsageError("top-k queue checkpoint holds " + std::to_string(count) +
                     " items, more than its capacity " + std::to_string(capacity));
  }
  for (std::uint64_t k = 0; k < count; ++k) {
    Item it;
    it.score = get<double>(bytes, &pos);
    it.seq = get<std::uint64_t>(bytes, &pos);
    const auto len = get<std::uint64_t>(bytes, &pos);
    if ((bytes.size() - pos) / sizeof(std::int32_t) < len) {
      throw UsageError("top-k queue bytes are truncated");
    }
    it.tokens.resize(static_cast<std::size_t>(len));
    std::memcpy(it.tokens.data(), bytes.data() + pos, len * sizeof(std::int32_t));
    pos += len * sizeof(std::int32_t);
    if (q.contains(it.tokens)) throw UsageError("top-k queue checkpoint repeats a program");
    q.items_.push_back(std::move(it));
  }
  if (pos != bytes.size()) throw UsageError("top-k queue checkpoint has trailing bytes");
  return q;
}

}  // namespace ringrl::learner
