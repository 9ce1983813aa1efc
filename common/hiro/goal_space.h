// HIRO goal spaces, the goal transition and the two rewards (spec hiro.md §2, §4, §6).
//
// Contract:
// * A GoalSpace is a pure value: the goal dimension k (goals live on obs[:k] and are
//   relative: the intended absolute target is s[:k] + g), the per-dimension goal box (also the
//   high-level action box) and whether the low level masks x,y (ZERO_OBS). make_goal_space()
//   validates once and throws UsageError naming the offending value; everything after that is
//   noexcept, allocation-free arithmetic on caller-owned float arrays.
//     hiro_orig: k = 15, the env's full-state box (envs::maze::maze_subgoal_box), x,y masked
//                in the low-level actor, the low-level critics and the relabel pass.
//     hiro_xy:   k = 2, box +-10 on every env, nothing masked.
// * Torch-free and MuJoCo-free: env facts come in as dimensions and a box.
// * Any thread may call anything here; nothing holds state.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ringrl::hiro {

/// The goal-space configurations of spec §2 (hiro_repr is out of scope).
enum class GoalSpaceKind { kOrig, kXy };

inline constexpr int kOrigGoalDim = 15;             // hiro_orig: k = the ant's qpos, obs[0:15]
inline constexpr int kXyGoalDim = 2;                // hiro_xy: k = (x, y)
inline constexpr float kXyGoalRange = 10.0f;        // hiro_xy box: +-10 per dim (§6.1)
inline constexpr int kMaskedInputDims = 2;          // ZERO_OBS masks network inputs 0, 1 (x, y)
inline constexpr double kIntrinsicEpsilon = 1e-10;  // inside the sqrt of r_lo (§6.3)
inline constexpr double kMetaRewardScale = 0.1;     // R = 0.1 x sum of c task rewards (§6.4)
inline constexpr int kDefaultMetaPeriod = 10;       // c: env steps per high-level decision (§3)

/// "hiro_orig" / "orig" or "hiro_xy" / "xy"; UsageError otherwise.
GoalSpaceKind parse_goal_space(const std::string& name);
/// "hiro_orig" or "hiro_xy".
const char* goal_space_name(GoalSpaceKind kind) noexcept;

/// A validated goal space (see the file comment).
struct GoalSpace {
  GoalSpaceKind kind = GoalSpaceKind::kXy;
  int dim = 0;             // k
  std::vector<float> low;  // goal box, k values
  std::vector<float> high;
  bool mask_xy = false;  // ZERO_OBS: low-level network inputs 0, 1 are multiplied by 0

  /// (high + low) / 2 of dimension j.
  float mid(int j) const noexcept;
  /// (high - low) / 2 of dimension j.
  float half_range(int j) const noexcept;
  /// Clips k values in place to the box.
  void clip(float* g) const noexcept;
};

/// Builds the goal space `kind` for an env with `obs_dim` observation floats whose full-state
/// goal box (hiro_orig) is [full_low, full_high] (empty when the env has none). Throws
/// UsageError when hiro_orig meets an env without a 15-dim full-state box, when obs_dim < k,
/// or when the box is malformed (sizes differ, low > high, non-finite).
GoalSpace make_goal_space(GoalSpaceKind kind, int obs_dim, const std::vector<float>& full_low,
                          const std::vector<float>& full_high, const std::string& env_name);

/// Network dimensions of one HIRO configuration (spec §4 table).
struct HiroDims {
  int obs_dim = 0;      // env observation
  int action_dim = 0;   // env action (low-level output)
  int goal_dim = 0;     // k (high-level output)
  int context_dim = 0;  // task context G: 2, or 3 for Fall

  /// Low-level actor input: obs (+) g.
  int low_input() const noexcept { return obs_dim + goal_dim; }
  /// High-level actor input: obs (+) G.
  int high_input() const noexcept { return obs_dim + context_dim; }
};

/// Goal transition h (§6.2): g_next[j] = s[j] + g[j] - s_next[j] for j < k. No clipping.
void goal_transition(const float* s, const float* g, const float* s_next, int k, float* g_next) noexcept;

/// Multi-step form used by relabelling (§6.2): the goal in force at state s_i of a segment
/// that started at s_start with goal g: out[j] = g[j] + s_start[j] - s_i[j].
void goal_at(const float* s_start, const float* s_i, const float* g, int k, float* out) noexcept;

/// Intrinsic reward (§6.3): -sqrt(sum_{j<k} (s_next[j] - (s[j] + g[j]))^2 + 1e-10).
float intrinsic_reward(const float* s, const float* g, const float* s_next, int k) noexcept;

/// High-level reward (§6.4): 0.1 x the sum of the `count` task rewards of one segment.
float meta_reward(const float* task_rewards, int count) noexcept;

/// ZERO_OBS on one low-level network input row: entries 0 and 1 (x, y) set to 0.
void mask_xy(float* input) noexcept;

}  // namespace ringrl::hiro
