#include "common/hiro/goal_space.h"

#include <algorithm>
#include <cmath>

#include "common/errors.h"

namespace ringrl::hiro {

GoalSpaceKind parse_goal_space(const std::string& name) {
  if (name == "hiro_orig" || name == "orig") return GoalSpaceKind::kOrig;
  if (name == "hiro_xy" || name == "xy") return GoalSpaceKind::kXy;
  throw UsageError("unknown goal space '" + name + "' (expected hiro_orig or hiro_xy)");
}

const char* goal_space_name(GoalSpaceKind kind) noexcept {
  return kind == GoalSpaceKind::kOrig ? "hiro_orig" : "hiro_xy";
}

float GoalSpace::mid(int j) const noexcept {
  const auto i = static_cast<std::size_t>(j);
  return (high[i] + low[i]) / 2.0f;
}

float GoalSpace::half_range(int j) const noexcept {
  const auto i = static_cast<std::size_t>(j);
  return (high[i] - low[i]) / 2.0f;
}

void GoalSpace::clip(float* g) const noexcept {
  for (std::size_t j = 0; j < low.size(); ++j) g[j] = std::clamp(g[j], low[j], high[j]);
}

GoalSpace make_goal_space(GoalSpaceKind kind, int obs_dim, const std::vector<float>& full_low,
                          const std::vector<float>& full_high, const std::string& env_name) {
  GoalSpace gs;
  gs.kind = kind;
  if (kind == GoalSpaceKind::kXy) {
    gs.dim = kXyGoalDim;
    gs.low.assign(kXyGoalDim, -kXyGoalRange);
    gs.high.assign(kXyGoalDim, kXyGoalRange);
    gs.mask_xy = false;
  } else {
    if (full_low.size() != full_high.size())
      throw UsageError("env " + env_name + ": full-state goal box has " + std::to_string(full_low.size()) +
                       " lower and " + std::to_string(full_high.size()) + " upper bounds");
    if (full_low.size() != static_cast<std::size_t>(kOrigGoalDim))
      throw UsageError("goal space hiro_orig needs a " + std::to_string(kOrigGoalDim) +
                       "-dim full-state goal box; env " + env_name + " has " + std::to_string(full_low.size()) +
                       " dims (use hiro_xy)");
    gs.dim = kOrigGoalDim;
    gs.low = full_low;
    gs.high = full_high;
    gs.mask_xy = true;
  }
  for (int j = 0; j < gs.dim; ++j) {
    const auto i = static_cast<std::size_t>(j);
    if (!std::isfinite(gs.low[i]) || !std::isfinite(gs.high[i]) || gs.low[i] > gs.high[i])
      throw UsageError("env " + env_name + ": goal box dim " + std::to_string(j) + " is [" + std::to_string(gs.low[i]) +
                       ", " + std::to_string(gs.high[i]) + "], expected finite low <= high");
  }
  if (obs_dim < gs.dim)
    throw UsageError("goal space " + std::string(goal_space_name(kind)) + " needs at least " + std::to_string(gs.dim) +
                     " observation dims; env " + env_name + " has " + std::to_string(obs_dim));
  return gs;
}

void goal_transition(const float* s, const float* g, const float* s_next, int k, float* g_next) noexcept {
  for (int j = 0; j < k; ++j) g_next[j] = s[j] + g[j] - s_next[j];
}

void goal_at(const float* s_start, const float* s_i, const float* g, int k, float* out) noexcept {
  for (int j = 0; j < k; ++j) out[j] = g[j] + s_start[j] - s_i[j];
}

float intrinsic_reward(const float* s, const float* g, const float* s_next, int k) noexcept {
  double sum = 0.0;
  for (int j = 0; j < k; ++j) {
    const double d = static_cast<double>(s_next[j]) - (static_cast<double>(s[j]) + g[j]);
    sum += d * d;
  }
  return static_cast<float>(-std::sqrt(sum + kIntrinsicEpsilon));
}

float meta_reward(const float* task_rewards, int count) noexcept {
  double sum = 0.0;
  for (int i = 0; i < count; ++i) sum += task_rewards[i];
  return static_cast<float>(kMetaRewardScale * sum);
}

void mask_xy(float* input) noexcept {
  for (int j = 0; j < kMaskedInputDims; ++j) input[j] = 0.0f;
}

}  // namespace ringrl::hiro
