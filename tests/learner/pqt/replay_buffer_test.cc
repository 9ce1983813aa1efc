// Tests for learner/pqt/replay_buffer.h: uniqueness, proportional sampling, eviction, state.
#include "learner/pqt/replay_buffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/byte_codec.h"
#include "common/errors.h"

namespace ringrl::learner {
namespace {

using Program = std::vector<std::int32_t>;

bool push(ProportionalReplayBuffer& b, const Program& p, double reward) { return b.push(p.data(), p.size(), reward); }
double log_q(const ProportionalReplayBuffer& b, const Program& p) { return b.log_probability(p.data(), p.size()); }
std::string key(const Program& p) {
  std::string s;
  for (auto t : p) s.push_back(static_cast<char>(t));
  return s;
}

TEST(ProportionalReplayBuffer, UniqueByProgramAndWeightedByReward) {
  ProportionalReplayBuffer b(100, 0.5);
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(push(b, {1, 2, 3}, 1.0));
  EXPECT_FALSE(push(b, {1, 2, 3}, 5.0));  // held already: ignored, weight unchanged
  EXPECT_TRUE(push(b, {1, 2}, 0.0));      // a prefix is another program
  EXPECT_TRUE(push(b, {4}, -1.0));
  ASSERT_EQ(b.size(), 3u);
  const double w1 = std::exp(1.0 / 0.5), w2 = 1.0, w3 = std::exp(-1.0 / 0.5);
  EXPECT_NEAR(b.total_weight(), w1 + w2 + w3, 1e-12);
  EXPECT_NEAR(log_q(b, {1, 2, 3}), std::log(w1 / (w1 + w2 + w3)), 1e-12);
  EXPECT_NEAR(log_q(b, {4}), std::log(w3 / (w1 + w2 + w3)), 1e-12);
  EXPECT_TRUE(std::isinf(log_q(b, {4, 4})) && log_q(b, {4, 4}) < 0);
}

TEST(ProportionalReplayBuffer, SamplesInProportionToWeight) {
  ProportionalReplayBuffer b(100, 1.0);
  const std::vector<double> weights = {1.0, 2.0, 7.0, 0.5, 4.5};
  for (std::size_t k = 0; k < weights.size(); ++k) {
    ASSERT_TRUE(push(b, {static_cast<std::int32_t>(k + 1)}, std::log(weights[k])));
  }
  std::mt19937_64 rng(7);
  std::map<std::string, int> seen;
  constexpr int kDraws = 200000;
  for (int i = 0; i < kDraws; ++i) ++seen[b.sample(rng).program];
  for (std::size_t k = 0; k < weights.size(); ++k) {
    const double expected = weights[k] / 15.0;
    const double got = seen[key({static_cast<std::int32_t>(k + 1)})] / static_cast<double>(kDraws);
    EXPECT_NEAR(got, expected, 0.005) << "item " << k;
  }
}

TEST(ProportionalReplayBuffer, FullBufferReplacesItsLightestItem) {
  ProportionalReplayBuffer b(2, 1.0);
  EXPECT_TRUE(push(b, {1}, std::log(1.0)));
  EXPECT_TRUE(push(b, {2}, std::log(3.0)));
  EXPECT_TRUE(push(b, {3}, std::log(2.0)));   // evicts {1}
  EXPECT_FALSE(push(b, {4}, std::log(1.5)));  // lighter than everything held
  EXPECT_FALSE(push(b, {5}, std::log(2.0)));  // a tie keeps the held item
  EXPECT_EQ(b.size(), 2u);
  EXPECT_TRUE(std::isinf(log_q(b, {1})));
  EXPECT_NEAR(b.total_weight(), 5.0, 1e-12);
  EXPECT_TRUE(push(b, {1}, std::log(10.0)));  // an evicted program may come back
  EXPECT_NEAR(b.total_weight(), 13.0, 1e-12);
  std::mt19937_64 rng(1);
  int ones = 0;
  for (int i = 0; i < 20000; ++i) ones += b.sample(rng).program == key({1}) ? 1 : 0;
  EXPECT_NEAR(ones / 20000.0, 10.0 / 13.0, 0.01);
}

TEST(ProportionalReplayBuffer, TreeMatchesABruteForceSumUnderChurn) {
  ProportionalReplayBuffer b(37, 0.25);
  std::map<std::string, double> held;  // brute force: program -> weight
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> tok(0, 8), len(1, 4);
  std::uniform_real_distribution<double> rew(-1.0, 2.0);
  for (int i = 0; i < 3000; ++i) {
    Program p(static_cast<std::size_t>(len(rng)));
    for (auto& t : p) t = tok(rng);
    const double r = rew(rng);
    const double w = std::exp(r / 0.25);
    const bool in = held.count(key(p)) != 0;
    bool expect = !in;
    std::string evict;
    if (!in && held.size() == 37) {
      auto lightest = held.begin();
      for (auto it = held.begin(); it != held.end(); ++it) {
        if (it->second < lightest->second) lightest = it;
      }
      expect = w > lightest->second;
      if (expect) evict = lightest->first;
    }
    ASSERT_EQ(push(b, p, r), expect) << "push " << i;
    if (!evict.empty()) held.erase(evict);
    if (expect) held[key(p)] = w;
    double total = 0.0;
    for (const auto& [k, v] : held) total += v;
    ASSERT_EQ(b.size(), held.size());
    ASSERT_NEAR(b.total_weight(), total, 1e-9 * total);
  }
}

std::string saved(const ProportionalReplayBuffer& b) {
  std::string bytes;
  StringSink sink(&bytes);
  ByteWriter w(sink);
  b.save(w);
  return bytes;
}

void load(ProportionalReplayBuffer& b, const std::string& bytes) {
  MemorySource src(bytes);
  ByteReader r(src, "test replay");
  b.load(r);
  r.expect_end();
}

TEST(ProportionalReplayBuffer, StateRoundTripsAndBadInputIsRefused) {
  ProportionalReplayBuffer b(10, 2.0);
  push(b, {1, 2}, 0.5);
  push(b, {200}, -0.25);
  push(b, {}, 0.1);  // the empty program is a program too
  ProportionalReplayBuffer c(10, 2.0);
  load(c, saved(b));
  EXPECT_EQ(c.size(), 3u);
  EXPECT_DOUBLE_EQ(log_q(c, {200}), log_q(b, {200}));
  EXPECT_DOUBLE_EQ(c.total_weight(), b.total_weight());
  EXPECT_EQ(saved(c), saved(b));
  std::mt19937_64 rb(5), rc(5);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(b.sample(rb).program, c.sample(rc).program);

  const std::string s = saved(b);
  for (std::size_t cut = 0; cut < s.size(); ++cut) {
    EXPECT_THROW(load(c, s.substr(0, cut)), CorruptData) << "cut at " << cut;
  }
  std::string bad = s;
  bad[0] = 'X';
  EXPECT_THROW(load(c, bad), CorruptData);
  EXPECT_THROW(load(c, s + "x"), CorruptData);
  ProportionalReplayBuffer other_capacity(11, 2.0), other_temperature(10, 1.0);
  EXPECT_THROW(load(other_capacity, s), CorruptData);
  EXPECT_THROW(load(other_temperature, s), CorruptData);
  ProportionalReplayBuffer dup(10, 2.0);
  push(dup, {7}, 0.0);
  push(dup, {8}, 0.0);
  std::string twice = saved(dup);
  twice[twice.size() - 1] = 7;  // the second program becomes a copy of the first
  EXPECT_THROW(load(c, twice), CorruptData);
  EXPECT_EQ(c.size(), 3u);  // a refused state leaves the buffer as it was
  EXPECT_DOUBLE_EQ(c.total_weight(), b.total_weight());
  EXPECT_THROW(push(c, {256}, 0.0), UsageError);
  EXPECT_THROW(push(c, {-1}, 0.0), UsageError);
  EXPECT_THROW(ProportionalReplayBuffer(0, 1.0), UsageError);
  EXPECT_THROW(ProportionalReplayBuffer(1, 0.0), UsageError);
  ProportionalReplayBuffer empty(1, 1.0);
  std::mt19937_64 rng(1);
  EXPECT_THROW(empty.sample(rng), UsageError);
}

}  // namespace
}  // namespace ringrl::learner
