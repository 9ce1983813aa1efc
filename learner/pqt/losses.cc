#include "learner/pqt/losses.h"

#include <cmath>
#include <limits>

#include "common/errors.h"

namespace ringrl::learner {

namespace {

/// x where mask > 0, else 0; safe for huge |x| (no 0 * inf).
torch::Tensor masked(const torch::Tensor& x, const torch::Tensor& mask) { return x.masked_fill(mask <= 0, 0.0); }

}  // namespace

torch::Tensor action_log_probs(const torch::Tensor& log_probs, const torch::Tensor& actions) {
  return log_probs.gather(2, actions.unsqueeze(2)).squeeze(2);
}

torch::Tensor advantages(const torch::Tensor& rewards, const torch::Tensor& baselines, const torch::Tensor& mask) {
  torch::NoGradGuard no_grad;
  return masked(rewards.unsqueeze(1) - baselines.unsqueeze(0), mask);
}

torch::Tensor pg_loss(const torch::Tensor& action_log_probs, const torch::Tensor& advantages, const torch::Tensor& mask,
                      double multiplier, const c10::optional<torch::Tensor>& weights) {
  torch::Tensor a = advantages;
  if (weights.has_value()) {
    const torch::Tensor w = weights->dim() == 1 ? weights->unsqueeze(1) : *weights;
    a = a * w.detach();
  }
  const torch::Tensor per_step = masked(action_log_probs, mask) * masked(a, mask);
  return -multiplier * per_step.sum(1).mean();
}

torch::Tensor entropy(const torch::Tensor& log_probs, const torch::Tensor& mask, double multiplier) {
  const torch::Tensor lp = log_probs.clamp_min(kEntropyLogFloor);
  return entropy_from_steps(-(torch::exp(lp) * lp).sum(2), mask, multiplier);
}

torch::Tensor entropy_from_steps(const torch::Tensor& per_step, const torch::Tensor& mask, double multiplier) {
  return multiplier * masked(per_step, mask).sum(1).mean();
}

torch::Tensor topk_loss(const torch::Tensor& action_log_probs, const torch::Tensor& mask) {
  return (-masked(action_log_probs, mask)).sum(1).mean();
}

void update_ema_baselines(std::vector<double>* baselines, const std::vector<float>& rewards,
                          const std::vector<std::int32_t>& lengths, double decay) {
  if (rewards.size() != lengths.size()) {
    throw UsageError("EMA baseline update: " + std::to_string(rewards.size()) + " rewards but " +
                     std::to_string(lengths.size()) + " lengths");
  }
  std::vector<double>& b = *baselines;
  for (std::size_t i = 0; i < rewards.size(); ++i) {
    const auto len = static_cast<std::size_t>(lengths[i]);
    if (len > b.size()) {
      throw UsageError("EMA baseline update: length " + std::to_string(len) + " exceeds the " +
                       std::to_string(b.size()) + " baselines");
    }
    const double r = rewards[i];
    for (std::size_t t = 0; t < len; ++t) b[t] = decay * b[t] + (1.0 - decay) * r;
  }
}

std::vector<double> replay_importance_weights(const std::vector<double>& log_q, const std::vector<double>& log_p,
                                              double a, bool normalize) {
  if (log_q.size() != log_p.size()) {
    throw UsageError("replay weights: " + std::to_string(log_q.size()) + " log q but " + std::to_string(log_p.size()) +
                     " log p");
  }
  if (!(a >= 0.0 && a <= 1.0)) {
    throw UsageError("replay weights: mixing fraction must be in [0, 1], got " + std::to_string(a));
  }
  std::vector<double> w(log_q.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    // q/p in log space: sequence probabilities of 100 tokens underflow any float.
    const double ratio = std::isinf(log_q[i]) && log_q[i] < 0 ? 0.0 : std::exp(log_q[i] - log_p[i]);
    w[i] = 1.0 / ((1.0 - a) + a * ratio);
    sum += w[i];
  }
  if (normalize && sum > 0.0) {
    const double scale = static_cast<double>(w.size()) / sum;
    for (double& x : w) x *= scale;
  }
  return w;
}

}  // namespace ringrl::learner
