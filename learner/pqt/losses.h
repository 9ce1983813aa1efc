// Loss terms of one PG / PQT update (spec §5.3, pitfalls 11-13). Pure functions on tensors.
//
// Shapes: logits [N, T, V] (raw, EOS masked), actions [N, T] int64, mask [N, T] float (1 for
// t < len). All results are scalars (0-dim tensors) that autograd can differentiate, except
// where noted.
// * pg_loss       = -M * mean_i sum_t log pi(a_it) * A_it * w_it   (M = 64, §5.3)
// * entropy       =  M * mean_i sum_t -sum_a pi log pi              (the loss adds -beta * H)
// * topk_loss     =  mean_k sum_t CE(logits_kt, a_kt)               (no M)
// * advantages    =  R_i - b_t, masked, no gradient
// * ema update    :  b_t <- d b_t + (1 - d) R_i for t < len_i, episodes in order (after step)
// * replay weights (§5.5): w_i = 1 / ((1 - a) + a q_i / p_i), optionally normalised to sum B.
// Torch header: learner internals and tests only.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace ringrl::learner {

/// log pi(a_it) for the taken actions: [N, T] (unmasked).
torch::Tensor action_log_probs(const torch::Tensor& log_probs, const torch::Tensor& actions);

/// Per-step advantages R_i - b_t, [N, T], zero where mask is 0. rewards [N], baselines [T].
torch::Tensor advantages(const torch::Tensor& rewards, const torch::Tensor& baselines, const torch::Tensor& mask);

/// REINFORCE term. `weights` (optional, [N, T] or [N], no grad) multiply the advantages
/// (lag importance weights, replay importance weights).
torch::Tensor pg_loss(const torch::Tensor& action_log_probs, const torch::Tensor& advantages, const torch::Tensor& mask,
                      double multiplier, const c10::optional<torch::Tensor>& weights = c10::nullopt);

/// Log-probabilities below this are exactly p = 0 in float32 (exp underflows below ~-104);
/// the entropy clamps them, which keeps p log p at 0 with a finite gradient even next to the
/// -2.4e38 EOS logit, without changing any value that float32 can represent.
inline constexpr double kEntropyLogFloor = -1.0e4;

/// Entropy H of the sampling distributions (masked, mean over N, times multiplier).
torch::Tensor entropy(const torch::Tensor& log_probs, const torch::Tensor& mask, double multiplier);
/// The same from the per-step entropies -sum_a pi log pi [N, T].
torch::Tensor entropy_from_steps(const torch::Tensor& per_step, const torch::Tensor& mask, double multiplier);

/// Top-k cross-entropy: mean over the N programs of the masked per-step CE sum.
torch::Tensor topk_loss(const torch::Tensor& action_log_probs, const torch::Tensor& mask);

/// Sequential EMA baseline update (§5.3): for each episode in order, for t < len_i.
void update_ema_baselines(std::vector<double>* baselines, const std::vector<float>& rewards,
                          const std::vector<std::int32_t>& lengths, double decay);

/// Replay importance weights of §5.5. log_q[i]: log of the replay sampling probability
/// (-inf for an on-policy episode not in the buffer); log_p[i]: log sequence probability
/// under the current policy; a = nr / B. With normalize, rescaled to sum to B.
std::vector<double> replay_importance_weights(const std::vector<double>& log_q, const std::vector<double>& log_p,
                                              double a, bool normalize);

}  // namespace ringrl::learner
