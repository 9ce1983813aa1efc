// Batched torch forms of HIRO's goal arithmetic (spec hiro.md §6.2, §6.3), the batches the
// two levels train on (§8) and the high-level off-policy correction (§9), for the learner.
//
// Contract:
// * intrinsic_reward(): r_lo recomputed from stored (s, g, s') rows, the same formula as
//   hiro::intrinsic_reward (float32 on the device).
// * low_level_batch() / high_level_batch(): the column wiring from sampled replay rows (the
//   record float blocks of common/hiro/transition_record.h) to what one TD3 update consumes;
//   HiroLearner's updates build their batches with exactly these functions.
//     low:  x = s (+) g, a = a, r = r_lo(s, g, s'), x' = s' (+) g'.
//     high: x = s_t (+) G_t, r = R, x' = s_{t+c} (+) G_{t+c}; the action is the relabelled goal
//           (relabel() on the returned RelabelBatch: s_t, s_{t+c}, g_t, states, actions).
// * Relabeller::relabel() picks, per batch row, the goal used as the high-level action in the
//   critic loss:
//     sample (default): K = 10 candidates in this order: 8 draws N(delta, sigma_c^2) per dim
//       (sigma_c = 0.5 x half-range of the goal box), then delta = s_{t+c}[:k] - s_t[:k],
//       then the stored g_t; all 10 clipped to the goal box. Each candidate is propagated
//       along the stored states by h (g~_i = g~ + s_t[:k] - s_{t+i}[:k]); the low-level
//       policy (the CURRENT online actor, deterministic, with its own x,y masking) predicts
//       a^_i from s_{t+i} (+) g~_i; score = -sum_i sum_j ((a_i[j] - a^_i[j]) / half_range_a[j])^2.
//       The first maximum wins. One [B*K*c, obs+k] forward pass, no gradients.
//     fun:  one draw N(delta, (0.1 x half-range)^2) per dim, not clipped (§9.2).
//     none: the stored g_t (§9.3).
//   Gaussian draws come from the caller's Rng on the host, row-major over
//   [batch row][candidate][goal dim], so a seed fixes the candidates on every device.
// * One thread uses an instance; tensors live on the Relabeller's device.
#pragma once

#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "common/hiro/goal_space.h"
#include "common/hiro/transition_record.h"
#include "common/rng.h"
#include "learner/td3/td3.h"

namespace ringrl::hiro {

/// §9 goal_sample_strategy.
enum class RelabelStrategy { kSample, kFun, kNone };
/// "sample", "fun" (or "FuN"), "none" (or "None"); UsageError otherwise.
RelabelStrategy parse_relabel_strategy(const std::string& name);
const char* relabel_strategy_name(RelabelStrategy s) noexcept;

inline constexpr int kRelabelGaussianCandidates = 8;  // §9.1: Gaussian draws around delta
inline constexpr int kRelabelCandidates = 10;         // §9.1: 8 draws + delta + original
inline constexpr int kDeltaCandidate = 8;             // index of delta among the candidates
inline constexpr int kOriginalCandidate = 9;          // index of the stored goal
inline constexpr double kSampleSigmaFraction = 0.5;   // §9.1: sigma_c = 0.5 x half-range
inline constexpr double kFunSigmaFraction = 0.1;      // §9.2: sigma = 0.1 x half-range

/// r_lo = -sqrt(sum_{j<k} (s'[:, j] - (s[:, j] + g[:, j]))^2 + 1e-10): [B, >=k] x3 -> [B].
torch::Tensor intrinsic_reward(const torch::Tensor& s, const torch::Tensor& g, const torch::Tensor& s_next);

/// The low-level policy used for scoring: N input rows [N, obs + k] -> [N, act]. score() hands
/// it the B*K*c rows as sums of rows of two tables, row r = a[ia[r]] + b[ib[r]] (a: the stored
/// states with their goal shifts, [B*c, obs + k]; b: the candidates, [B*K, obs + k]; ia, ib:
/// int64 [N]), so that a policy whose first layer is linear can run it on each table once
/// instead of on every row (td3::Td3Agent::act_on_sums). A policy on whole rows converts
/// implicitly; it gets the rows formed.
class LowPolicy {
 public:
  using OnRows = std::function<torch::Tensor(const torch::Tensor&)>;
  using OnSums = std::function<torch::Tensor(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& ia,
                                             const torch::Tensor& ib)>;
  template <class F, class = std::enable_if_t<std::is_invocable_r_v<torch::Tensor, const F&, const torch::Tensor&>>>
  LowPolicy(F f) : on_rows_(std::move(f)) {}  // NOLINT(google-explicit-constructor): any row policy is one
  /// A policy that takes the sums as they are.
  static LowPolicy on_sums(OnSums f);

  /// On whole rows x [N, obs + k].
  torch::Tensor operator()(const torch::Tensor& x) const;
  /// On the rows a[ia[r]] + b[ib[r]].
  torch::Tensor operator()(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& ia,
                           const torch::Tensor& ib) const;

 private:
  LowPolicy() = default;
  OnRows on_rows_;
  OnSums on_sums_;
};

/// One high-level batch as relabelling needs it (device tensors).
struct RelabelBatch {
  torch::Tensor s;        // [B, obs]   s_t
  torch::Tensor s_next;   // [B, obs]   s_{t+c}
  torch::Tensor g;        // [B, k]     stored goal
  torch::Tensor states;   // [B, c, obs] s_t .. s_{t+c-1}
  torch::Tensor actions;  // [B, c, act] a_t .. a_{t+c-1}
};

/// The low-level TD3 batch of sampled Transition rows [B, row] (contract above).
td3::Td3Batch low_level_batch(const torch::Tensor& rows, const hiro::TransitionLayout& layout);

/// What one high-level update consumes: the relabelling inputs and the TD3 batch, whose action
/// `td3.a` (the relabelled goal) is left for the caller.
struct HighLevelBatch {
  RelabelBatch relabel;
  td3::Td3Batch td3;
};
/// The high-level batch of sampled MetaTransition rows [B, row] (contract above).
HighLevelBatch high_level_batch(const torch::Tensor& rows, const hiro::MetaTransitionLayout& layout);

struct RelabelResult {
  torch::Tensor goals;       // [B, k] the chosen goals
  torch::Tensor candidates;  // [B, K, k] (sample only)
  torch::Tensor scores;      // [B, K] (sample only)
  torch::Tensor choice;      // [B] int64 candidate index (sample only)
};

class Relabeller {
 public:
  /// `action_low/high`: the low-level action box (its half-range normalises the errors).
  Relabeller(RelabelStrategy strategy, const hiro::GoalSpace& goals, const std::vector<float>& action_low,
             const std::vector<float>& action_high, torch::Device device);

  RelabelResult relabel(const RelabelBatch& batch, const LowPolicy& policy, Rng& rng) const;

  /// Scores of given candidates [B, K, k] (no clipping here): [B, K].
  torch::Tensor score(const RelabelBatch& batch, const torch::Tensor& candidates, const LowPolicy& policy) const;

  RelabelStrategy strategy() const noexcept { return strategy_; }

 private:
  // Host N(0,1) draws [B, n, k] on the device.
  torch::Tensor normals(std::int64_t rows, std::int64_t n, Rng& rng) const;

  RelabelStrategy strategy_;
  int goal_dim_;
  torch::Device device_;
  torch::Tensor goal_low_, goal_high_, goal_half_range_;  // [k]
  torch::Tensor action_half_range_;                       // [act]
};

}  // namespace ringrl::hiro
