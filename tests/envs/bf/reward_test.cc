// Tests of envs/bf/reward.h against hand-computed values (spec §3.1, §3.2).
#include "envs/bf/reward.h"

#include <gtest/gtest.h>

#include <vector>

namespace ringrl::bf {
namespace {

using Cells = std::vector<std::int64_t>;

std::int64_t distance(const Cells& pred, const Cells& target, std::int64_t base = 256) {
  return absolute_distance(pred.data(), pred.size(), target.data(), target.size(), base);
}

double reward(const Cells& pred, const Cells& target, std::int64_t base = 256) {
  return absolute_distance_reward(pred.data(), pred.size(), target.data(), target.size(), base);
}

TEST(BfReward, AbsoluteDistance) {
  EXPECT_EQ(distance({1, 2}, {1, 5}), 3);
  EXPECT_EQ(distance({}, {1, 2}), 512);      // each missing value costs base
  EXPECT_EQ(distance({1, 2, 3}, {1}), 512);  // each extra value costs base
  EXPECT_EQ(distance({9}, {1, 2}), 8 + 256);
  EXPECT_EQ(distance({300}, {1}), 299);  // not modular
  EXPECT_EQ(distance({8, 5, 12, 12, 12}, {8, 5, 12, 12, 15}, 27), 3);
  EXPECT_EQ(distance({}, {}), 0);
}

TEST(BfReward, AbsoluteDistanceReward) {
  EXPECT_EQ(reward({4, 0}, {4, 0}), 1.0);
  EXPECT_EQ(reward({}, {4, 0}), 0.0);
  EXPECT_EQ(reward({}, {}), 1.0);  // U = base when the target is empty
  EXPECT_EQ(reward({5}, {}), 0.0);
  EXPECT_EQ(reward({1, 2, 3, 4}, {1}), (256.0 - 768.0) / 256.0);  // negative when long
  EXPECT_EQ(reward({8, 5, 12, 12, 12}, {8, 5, 12, 12, 15}, 27), (135.0 - 3.0) / 135.0);
}

TEST(BfReward, CodeLengthFactor) {
  EXPECT_EQ(code_length_factor(100, 100, 100), 1.0);
  EXPECT_EQ(code_length_factor(7, 100, 100), 1.0);
  EXPECT_EQ(code_length_factor(26, 0, 100), 1.0 - (1.0 / 100.0) * 26.0);
  EXPECT_EQ(code_length_factor(0, 0, 100), 1.0);
  EXPECT_EQ(code_length_factor(150, 0, 100), 0.0);  // clipped
  EXPECT_EQ(code_length_factor(20, 10, 50), 1.0 - (1.0 / 40.0) * 10.0);
  EXPECT_EQ(code_length_factor(5, 10, 50), 1.0);  // clipped above
  EXPECT_EQ(code_length_factor(5, 60, 50), 1.0);  // max < min: no penalty
}

}  // namespace
}  // namespace ringrl::bf
