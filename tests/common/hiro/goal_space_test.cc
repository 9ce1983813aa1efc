// Goal spaces, the goal transition h, the intrinsic and meta rewards (spec hiro.md §2, §6).
#include "common/hiro/goal_space.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "common/errors.h"

namespace ringrl::hiro {
namespace {

std::vector<float> orig_high() { return {10, 10, 0.5f, 1, 1, 1, 1, 0.5f, 0.3f, 0.5f, 0.3f, 0.5f, 0.3f, 0.5f, 0.3f}; }
std::vector<float> negate(std::vector<float> v) {
  for (float& x : v) x = -x;
  return v;
}

TEST(GoalSpace, ParsesNames) {
  EXPECT_EQ(parse_goal_space("hiro_orig"), GoalSpaceKind::kOrig);
  EXPECT_EQ(parse_goal_space("xy"), GoalSpaceKind::kXy);
  EXPECT_THROW(parse_goal_space("hiro_repr"), UsageError);
  EXPECT_STREQ(goal_space_name(GoalSpaceKind::kOrig), "hiro_orig");
}

TEST(GoalSpace, XyIsTwoDimsPlusMinusTenUnmasked) {
  const GoalSpace gs = make_goal_space(GoalSpaceKind::kXy, 7, {}, {}, "point-maze");
  EXPECT_EQ(gs.dim, 2);
  EXPECT_FALSE(gs.mask_xy);
  for (int j = 0; j < 2; ++j) {
    EXPECT_EQ(gs.low[j], -10.0f);
    EXPECT_EQ(gs.high[j], 10.0f);
    EXPECT_EQ(gs.mid(j), 0.0f);
    EXPECT_EQ(gs.half_range(j), 10.0f);
  }
}

TEST(GoalSpace, OrigTakesTheEnvBoxAndMasks) {
  const GoalSpace gs = make_goal_space(GoalSpaceKind::kOrig, 30, negate(orig_high()), orig_high(), "ant-maze");
  EXPECT_EQ(gs.dim, 15);
  EXPECT_TRUE(gs.mask_xy);
  EXPECT_EQ(gs.high, orig_high());
  float g[15];
  for (int j = 0; j < 15; ++j) g[j] = (j % 2 == 0 ? 1.0f : -1.0f) * 20.0f;
  gs.clip(g);
  for (int j = 0; j < 15; ++j) EXPECT_EQ(std::fabs(g[j]), orig_high()[j]) << j;
}

TEST(GoalSpace, RejectsWhatCannotWork) {
  EXPECT_THROW(make_goal_space(GoalSpaceKind::kOrig, 7, {}, {}, "point-maze"), UsageError);
  EXPECT_THROW(make_goal_space(GoalSpaceKind::kOrig, 14, negate(orig_high()), orig_high(), "x"), UsageError);
  EXPECT_THROW(make_goal_space(GoalSpaceKind::kXy, 1, {}, {}, "x"), UsageError);
  auto bad = orig_high();
  bad[3] = -2.0f;  // high < low
  EXPECT_THROW(make_goal_space(GoalSpaceKind::kOrig, 30, negate(orig_high()), bad, "x"), UsageError);
  EXPECT_THROW(make_goal_space(GoalSpaceKind::kOrig, 30, {1.0f}, orig_high(), "x"), UsageError);
}

TEST(GoalTransition, KeepsTheAbsoluteTargetFixed) {
  const float s[3] = {1.0f, 2.0f, 0.5f};
  const float g[3] = {3.0f, -1.0f, 0.25f};
  const float s_next[3] = {1.5f, 1.0f, 0.75f};
  float g_next[3];
  goal_transition(s, g, s_next, 3, g_next);
  EXPECT_FLOAT_EQ(g_next[0], 2.5f);  // 1 + 3 - 1.5
  EXPECT_FLOAT_EQ(g_next[1], 0.0f);  // 2 - 1 - 1
  EXPECT_FLOAT_EQ(g_next[2], 0.0f);  // 0.5 + 0.25 - 0.75
  for (int j = 0; j < 3; ++j) EXPECT_FLOAT_EQ(s[j] + g[j], s_next[j] + g_next[j]);
  // Only the first k dims take part: k = 2 leaves g_next[2] alone.
  g_next[2] = 42.0f;
  goal_transition(s, g, s_next, 2, g_next);
  EXPECT_EQ(g_next[2], 42.0f);
}

TEST(GoalTransition, MultiStepFormMatchesRepeatedH) {
  const float states[4][2] = {{0, 0}, {1, 0.5f}, {2.5f, 1}, {3, -2}};
  const float g0[2] = {4.0f, 3.0f};
  float g[2] = {g0[0], g0[1]};
  for (int i = 1; i < 4; ++i) {
    float next[2];
    goal_transition(states[i - 1], g, states[i], 2, next);
    g[0] = next[0];
    g[1] = next[1];
    float direct[2];
    goal_at(states[0], states[i], g0, 2, direct);
    EXPECT_FLOAT_EQ(direct[0], g[0]) << i;
    EXPECT_FLOAT_EQ(direct[1], g[1]) << i;
  }
}

TEST(IntrinsicReward, IsMinusTheDistanceToTheTarget) {
  const float s[3] = {1.0f, 2.0f, 9.0f};
  const float g[3] = {3.0f, 4.0f, 9.0f};
  const float s_next[3] = {1.0f, 2.0f, -9.0f};                // dim 2 is beyond k = 2
  EXPECT_FLOAT_EQ(intrinsic_reward(s, g, s_next, 2), -5.0f);  // 3-4-5
  const float at[2] = {4.0f, 6.0f};
  EXPECT_FLOAT_EQ(intrinsic_reward(s, g, at, 2), static_cast<float>(-std::sqrt(1e-10)));
}

TEST(MetaReward, IsATenthOfTheSum) {
  const float r[10] = {-1, -2, -3, -4, -5, -6, -7, -8, -9, -10};
  EXPECT_FLOAT_EQ(meta_reward(r, 10), -5.5f);
  EXPECT_FLOAT_EQ(meta_reward(r, 1), -0.1f);
  EXPECT_EQ(meta_reward(r, 0), 0.0f);
}

TEST(MaskXy, ZeroesTheFirstTwoInputs) {
  float x[4] = {1, 2, 3, 4};
  mask_xy(x);
  EXPECT_EQ(x[0], 0.0f);
  EXPECT_EQ(x[1], 0.0f);
  EXPECT_EQ(x[2], 3.0f);
  EXPECT_EQ(x[3], 4.0f);
}

}  // namespace
}  // namespace ringrl::hiro
