// ProportionalReplayBuffer: the experience replay of spec §5.5 (roulette wheel over unique
// programs, weight exp(R / temperature)).
//
// Contract:
// * Holds at most capacity() unique programs (exact token tuples). push() of a tuple already
//   held is ignored (weight not updated), as the original's unique mode does.
// * Weight of an item = exp(reward / temperature). sample() draws an item with probability
//   weight / total_weight(), with replacement, driven by the caller's RNG, in O(log n).
// * log_probability(tokens) = log(weight / total_weight()) for a held tuple, -inf otherwise
//   (the q of the §5.5 importance weights; 0 probability for fresh programs not held).
// * Capacity: the original's buffer is unbounded; here a full buffer replaces its
//   lowest-weight item when the new one weighs more, and drops the new one otherwise, so
//   memory stays bounded (about 150 bytes plus one byte per token per item). Tokens must
//   be in [0, 255] (UsageError otherwise): items store one byte per token.
// * save()/load(): the held programs and rewards through the byte codec
//   (common/byte_codec.h), streamed item by item for checkpoints; weights are recomputed on
//   load. load() refuses, with CorruptData naming what is wrong, a truncated or malformed
//   state and one saved with another capacity or temperature, and then leaves the buffer as
//   it was. Torch-free; one owner (the learner thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/byte_codec.h"

namespace ringrl::learner {

class ProportionalReplayBuffer {
 public:
  struct Item {
    std::string program;  // one byte per token
    double reward = 0.0;
    double weight = 0.0;  // exp(reward / temperature)
  };

  /// capacity >= 1 and temperature > 0, else UsageError.
  ProportionalReplayBuffer(std::size_t capacity, double temperature);

  /// Inserts (tokens, reward) under the rules above; true iff it is held afterwards.
  bool push(const std::int32_t* tokens, std::size_t length, double reward);

  /// Precondition: !empty().
  const Item& sample(std::mt19937_64& rng) const;
  double log_probability(const std::int32_t* tokens, std::size_t length) const;

  std::size_t size() const { return items_.size(); }
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return items_.empty(); }
  double temperature() const { return temperature_; }
  double total_weight() const;

  /// Writes the state for load().
  void save(ByteWriter& w) const;
  /// Replaces the contents with what save() wrote (see the contract).
  void load(ByteReader& r);

 private:
  static std::string program_of(const std::int32_t* tokens, std::size_t length);
  std::size_t find(const std::string& program) const;  // slot, or npos
  void fenwick_add(std::size_t slot, double delta);
  void insert(Item item);
  void replace(std::size_t slot, Item item);

  std::size_t capacity_;
  double temperature_;
  std::vector<Item> items_;
  std::vector<double> tree_;                                 // Fenwick tree of weights, 1-based
  std::unordered_multimap<std::size_t, std::size_t> slots_;  // hash(program) -> slot
  std::multimap<double, std::size_t> by_weight_;             // weight -> slot, for eviction
};

}  // namespace ringrl::learner
