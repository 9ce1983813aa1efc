#include "learner/pqt/replay_buffer.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "common/errors.h"

namespace ringrl::learner {

namespace {

/// Opens a saved buffer, so a state read out of step fails at once.
constexpr char kStateTag[8] = {'R', 'R', 'L', 'R', 'P', 'B', '0', '2'};
constexpr std::size_t npos = static_cast<std::size_t>(-1);

std::size_t lowbit(std::size_t i) { return i & (~i + 1); }

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
      throw UsageError("replay buffer: token " + std::to_string(tokens[t]) + " at position " + std::to_string(t) +
                       ", expected 0..255");
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

void ProportionalReplayBuffer::save(ByteWriter& w) const {
  w.put_bytes(kStateTag, sizeof kStateTag);
  w.put<std::uint64_t>(capacity_);
  w.put<double>(temperature_);
  w.put<std::uint64_t>(items_.size());
  for (const Item& it : items_) {
    w.put<double>(it.reward);
    w.put_string(it.program);
  }
}

void ProportionalReplayBuffer::load(ByteReader& r) {
  char tag[sizeof kStateTag];
  r.get_bytes(tag, sizeof tag);
  if (std::memcmp(tag, kStateTag, sizeof tag) != 0) r.fail("not a replay buffer state (bad tag)");
  const auto capacity = r.get<std::uint64_t>();
  const auto temperature = r.get<double>();
  if (capacity != capacity_ || temperature != temperature_) {
    r.fail("replay buffer saved with capacity " + std::to_string(capacity) + " and temperature " +
           std::to_string(temperature) + ", this one has " + std::to_string(capacity_) + " and " +
           std::to_string(temperature_));
  }
  const auto n = r.get<std::uint64_t>();
  if (n > capacity_) {
    r.fail("replay buffer holds " + std::to_string(n) + " programs, more than its capacity " +
           std::to_string(capacity_));
  }
  // Rebuilt by pushing into a fresh buffer: the index structures come out as push() makes them.
  ProportionalReplayBuffer fresh(capacity_, temperature_);
  std::string program;
  std::vector<std::int32_t> tokens;
  for (std::uint64_t k = 0; k < n; ++k) {
    const auto reward = r.get<double>();
    program = r.get_string();
    if (!std::isfinite(std::exp(reward / temperature_))) {
      r.fail("replay buffer item " + std::to_string(k) + " has reward " + std::to_string(reward) +
             ", whose weight is not finite");
    }
    tokens.assign(program.size(), 0);
    for (std::size_t t = 0; t < program.size(); ++t) tokens[t] = static_cast<unsigned char>(program[t]);
    if (!fresh.push(tokens.data(), tokens.size(), reward)) {
      r.fail("replay buffer repeats a program (item " + std::to_string(k) + ")");
    }
  }
  *this = std::move(fresh);
}

}  // namespace ringrl::learner
