#include "learner/replay_buffer.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "common/errors.h"

namespace ringrl::learner {

namespace {

constexpr char kMagic[8] = {'R', 'R', 'L', 'R', 'P', 'B', '0', '1'};
constexpr std::size_t npos = static_cast<std::size_t>(-1);

std::size_t lowbit(std::size_t i) { return i & (~i + 1); }

template <typename T>
void put_raw(std::string* out, const T& v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <typename T>
T get_raw(const std::string& in, std::size_t* pos) {
  if (in.size() - *pos < sizeof(T)) throw UsageError("replay buffer state is truncated");
  T v;
  std::memcpy(&v, in.data() + *pos, sizeof(T));
  *pos += sizeof(T);
  return v;
}

}  // namespace

ProportionalReplayBuffer::ProportionalReplayBuffer(std::size_t capacity, double temperature)
    : capacity_(capacity), temperature_(temperature) {
  if (capacity < 1) throw UsageError("replay buffer capacity 0: expected at least 1");
  if (!(temperature > 0.0) || !std::isfinite(temperature)) {
    throw UsageError("replay_temperature " + std::to_string(temperature) + ": expected > 0");
  }
  tree_.push_back(0.0);  // index 0 is unused
}

std::string ProportionalReplayBuffer::program_of(const std::int32_t* tokens, std::size_t length) {
  std::string p(length, '\0');
  for (std::size_t t = 0; t < length; ++t) {
    if (tokens[t] < 0 || tokens[t] > 255) {
      throw UsageError("replay buffer: token " + std::to_string(tokens[t]) +
                       " at position " + std::to_string(t) + ", expected 0..255");
    }
    p[t] = static_cast<char>(static_cast<unsigned char>(tokens[t]));
  }
  return p;
}

std::size_t ProportionalReplayBuffer::find(const std::string& program) const {
  const auto range = slots_.equal_range(std::hash<std::string>{}(program));
  for (auto it = range.first; it != range.second; ++it) {
    if (items_[it->second].program == program) return it->second;
  }
  return npos;
}

void ProportionalReplayBuffer::fenwick_add(std::size_t slot, double delta) {
  for (std::size_t i = slot + 1; i < tree_.size(); i += lowbit(i)) tree_[i] += delta;
}

double ProportionalReplayBuffer::total_weight() const {
  double s = 0.0;
  for (std::size_t i = items_.size(); i > 0; i -= lowbit(i)) s += tree_[i];
  return s;
}

void ProportionalReplayBuffer::insert(Item item) {
  // Appending slot n (1-based i = n + 1): tree[i] covers (i - lowbit(i), i].
  const std::size_t i = items_.size() + 1;
  double covered = item.weight;
  for (std::size_t j = i - 1; j > i - lowbit(i); j -= lowbit(j)) covered += tree_[j];
  tree_.push_back(covered);
  slots_.emplace(std::hash<std::string>{}(item.program), items_.size());
  by_weight_.emplace(item.weight, items_.size());
  items_.push_back(std::move(item));
}

void ProportionalReplayBuffer::replace(std::size_t slot, Item item) {
  Item& old = items_[slot];
  const auto range = slots_.equal_range(std::hash<std::string>{}(old.program));
  for (auto it = range.first; it != range.second; ++it) {
    if (it->second == slot) {
      slots_.erase(it);
      break;
    }
  }
  const auto wr = by_weight_.equal_range(old.weight);
  for (auto it = wr.first; it != wr.second; ++it) {
    if (it->second == slot) {
      by_weight_.erase(it);
      break;
    }
  }
  fenwick_add(slot, item.weight - old.weight);
  slots_.emplace(std::hash<std::string>{}(item.program), slot);
  by_weight_.emplace(item.weight, slot);
  old = std::move(item);
}

bool ProportionalReplayBuffer::push(const std::int32_t* tokens, std::size_t length, double reward) {
  std::string program = program_of(tokens, length);
  if (find(program) != npos) return false;
  const double weight = std::exp(reward / temperature_);
  if (!std::isfinite(weight)) {
    throw UsageError("replay buffer: reward " + std::to_string(reward) + " / temperature " +
                     std::to_string(temperature_) + " overflows exp()");
  }
  Item item{std::move(program), reward, weight};
  if (items_.size() < capacity_) {
    insert(std::move(item));
    return true;
  }
  const auto lowest = by_weight_.begin();
  if (!(weight > lowest->first)) return false;  // ties keep the held item
  replace(lowest->second, std::move(item));
  return true;
}

const ProportionalReplayBuffer::Item& ProportionalReplayBuffer::sample(std::mt19937_64& rng) const {
  if (items_.empty()) throw UsageError("replay buffer: sample() on an empty buffer");
  const double total = total_weight();
  double u = std::uniform_real_distribution<double>(0.0, total)(rng);
  // Descend the tree: the largest prefix whose sum is <= u; the item after it holds u.
  const std::size_t n = items_.size();
  std::size_t step = 1;
  while (step * 2 <= n) step *= 2;
  std::size_t pos = 0;
  for (; step > 0; step /= 2) {
    if (pos + step <= n && tree_[pos + step] <= u) {
      pos += step;
      u -= tree_[pos];
    }
  }
  return items_[pos < n ? pos : n - 1];  // pos == n only through rounding at the very top
}

double ProportionalReplayBuffer::log_probability(const std::int32_t* tokens, std::size_t length) const {
  const std::size_t slot = find(program_of(tokens, length));
  if (slot == npos) return -std::numeric_limits<double>::infinity();
  return std::log(items_[slot].weight) - std::log(total_weight());
}

std::string ProportionalReplayBuffer::serialize() const {
  std::string out(kMagic, sizeof(kMagic));
  put_raw<std::uint64_t>(&out, items_.size());
  for (const Item& it : items_) {
    put_raw<double>(&out, it.reward);
    put_raw<std::uint64_t>(&out, it.program.size());
    out.append(it.program);
  }
  return out;
}

void ProportionalReplayBuffer::deserialize(const std::string& bytes) {
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    throw UsageError("replay buffer state has a bad magic: expected one written by this version");
  }
  std::size_t pos = sizeof(kMagic);
  const auto n = get_raw<std::uint64_t>(bytes, &pos);
  ProportionalReplayBuffer fresh(capacity_, temperature_);
  for (std::uint64_t k = 0; k < n; ++k) {
    const auto reward = get_raw<double>(bytes, &pos);
    const auto len = get_raw<std::uint64_t>(bytes, &pos);
    if (bytes.size() - pos < len) throw UsageError("replay buffer state is truncated");
    std::vector<std::int32_t> tokens(static_cast<std::size_t>(len));
    for (std::size_t t = 0; t < tokens.size(); ++t) {
      tokens[t] = static_cast<unsigned char>(bytes[pos + t]);
    }
    pos += static_cast<std::size_t>(len);
    fresh.push(tokens.data(), tokens.size(), reward);
  }
  if (pos != bytes.size()) throw UsageError("replay buffer state has trailing bytes");
  *this = std::move(fresh);
}

}  // namespace ringrl::learner
