#include "learner/hiro/hiro_ops.h"

#include "common/errors.h"

namespace ringrl::hiro {

using td3::Td3Batch;

RelabelStrategy parse_relabel_strategy(const std::string& name) {
  if (name == "sample") return RelabelStrategy::kSample;
  if (name == "fun" || name == "FuN") return RelabelStrategy::kFun;
  if (name == "none" || name == "None") return RelabelStrategy::kNone;
  throw UsageError("unknown goal_sample_strategy '" + name + "' (expected sample, fun or none)");
}

const char* relabel_strategy_name(RelabelStrategy s) noexcept {
  switch (s) {
    case RelabelStrategy::kSample:
      return "sample";
    case RelabelStrategy::kFun:
      return "fun";
    case RelabelStrategy::kNone:
      return "none";
  }
  return "?";
}

torch::Tensor intrinsic_reward(const torch::Tensor& s, const torch::Tensor& g, const torch::Tensor& s_next) {
  const std::int64_t k = g.size(1);
  const auto d = s_next.narrow(1, 0, k) - (s.narrow(1, 0, k) + g);
  return -torch::sqrt(d.pow(2).sum(1) + hiro::kIntrinsicEpsilon);
}

Td3Batch low_level_batch(const torch::Tensor& rows, const hiro::TransitionLayout& L) {
  const auto s = rows.narrow(1, L.s(), L.obs);
  const auto a = rows.narrow(1, L.a(), L.act);
  const auto s_next = rows.narrow(1, L.s_next(), L.obs);
  const auto g = rows.narrow(1, L.g(), L.goal);
  const auto g_next = rows.narrow(1, L.g_next(), L.goal);
  return Td3Batch{torch::cat({s, g}, 1), a, intrinsic_reward(s, g, s_next), torch::cat({s_next, g_next}, 1)};
}

HighLevelBatch high_level_batch(const torch::Tensor& rows, const hiro::MetaTransitionLayout& L) {
  const std::int64_t B = rows.size(0);
  HighLevelBatch out;
  RelabelBatch& rb = out.relabel;
  rb.s = rows.narrow(1, L.s(), L.obs);
  rb.s_next = rows.narrow(1, L.s_next(), L.obs);
  rb.g = rows.narrow(1, L.g(), L.goal);
  rb.states = rows.narrow(1, L.low_states(), L.steps * L.obs).reshape({B, L.steps, L.obs});
  rb.actions = rows.narrow(1, L.low_actions(), L.steps * L.act).reshape({B, L.steps, L.act});
  out.td3.x = torch::cat({rb.s, rows.narrow(1, L.context(), L.ctx)}, 1);
  out.td3.r = rows.select(1, L.reward());
  out.td3.x_next = torch::cat({rb.s_next, rows.narrow(1, L.context_next(), L.ctx)}, 1);
  return out;
}

Relabeller::Relabeller(RelabelStrategy strategy, const hiro::GoalSpace& goals, const std::vector<float>& action_low,
                       const std::vector<float>& action_high, torch::Device device)
    : strategy_(strategy), goal_dim_(goals.dim), device_(device) {
  if (goals.dim < 1 || goals.low.size() != static_cast<std::size_t>(goals.dim) || goals.high.size() != goals.low.size())
    throw UsageError("relabelling: goal box of " + std::to_string(goals.low.size()) +
                     " dims, expected k = " + std::to_string(goals.dim) + " >= 1");
  if (action_low.empty() || action_low.size() != action_high.size())
    throw UsageError("relabelling: action box has " + std::to_string(action_low.size()) + "/" +
                     std::to_string(action_high.size()) + " bounds");
  goal_low_ = torch::tensor(goals.low).to(device_);
  goal_high_ = torch::tensor(goals.high).to(device_);
  goal_half_range_ = (goal_high_ - goal_low_) / 2;
  const auto alow = torch::tensor(action_low);
  const auto ahigh = torch::tensor(action_high);
  const auto half = (ahigh - alow) / 2;
  if (!(half > 0).all().item<bool>())
    throw UsageError("relabelling: every low-level action dim needs high > low (its half-range normalises errors)");
  action_half_range_ = half.to(device_);
}

LowPolicy LowPolicy::on_sums(OnSums f) {
  LowPolicy p;
  p.on_sums_ = std::move(f);
  return p;
}

torch::Tensor LowPolicy::operator()(const torch::Tensor& x) const {
  if (on_rows_) return on_rows_(x);
  // Each row as itself plus a zero row.
  const auto n = x.size(0);
  const auto index = torch::arange(n, x.options().dtype(torch::kLong));
  return on_sums_(x, torch::zeros({1, x.size(1)}, x.options()), index, torch::zeros_like(index));
}

torch::Tensor LowPolicy::operator()(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& ia,
                                    const torch::Tensor& ib) const {
  if (on_sums_) return on_sums_(a, b, ia, ib);
  return on_rows_(a.index_select(0, ia) + b.index_select(0, ib));
}

torch::Tensor Relabeller::normals(std::int64_t rows, std::int64_t n, Rng& rng) const {
  auto host = torch::empty({rows, n, goal_dim_}, torch::kFloat);
  float* p = host.data_ptr<float>();
  for (std::int64_t i = 0; i < host.numel(); ++i) p[i] = static_cast<float>(rng.normal());
  return host.to(device_);
}

torch::Tensor Relabeller::score(const RelabelBatch& batch, const torch::Tensor& candidates,
                                const LowPolicy& policy) const {
  torch::NoGradGuard no_grad;
  const std::int64_t B = candidates.size(0), K = candidates.size(1), k = candidates.size(2);
  const std::int64_t c = batch.states.size(1), obs = batch.states.size(2), act = batch.actions.size(2);
  // Goal in force at each stored state: g~ + s_t[:k] - s_{t+i}[:k]. The policy input of row
  // (b, K, i), s_{t+i} (+) g~_i, is the sum of a[b, i] = s_{t+i} (+) (s_t[:k] - s_{t+i}[:k]) and
  // cand[b, K] = 0 (+) g~; all B*K*c rows in one call, in (b, K, i) order.
  const auto shift = batch.s.narrow(1, 0, k).unsqueeze(1) - batch.states.narrow(2, 0, k);  // [B, c, k]
  const auto a = torch::cat({batch.states, shift}, 2).reshape({B * c, obs + k});
  const auto cand = torch::cat({torch::zeros({B, K, obs}, candidates.options()), candidates}, 2).reshape({B * K, obs + k});
  const auto longs = candidates.options().dtype(torch::kLong);
  const auto rows = torch::arange(B, longs).view({B, 1, 1});
  const auto ia = (rows * c + torch::arange(c, longs).view({1, 1, c})).expand({B, K, c}).reshape({-1});
  const auto ib = (rows * K + torch::arange(K, longs).view({1, K, 1})).expand({B, K, c}).reshape({-1});
  const auto pred = policy(a, cand, ia, ib).reshape({B, K, c, act});
  const auto err = (batch.actions.unsqueeze(1) - pred) / action_half_range_;
  return -err.pow(2).sum({2, 3});
}

RelabelResult Relabeller::relabel(const RelabelBatch& batch, const LowPolicy& policy, Rng& rng) const {
  torch::NoGradGuard no_grad;
  RelabelResult r;
  const std::int64_t B = batch.g.size(0);
  const auto delta = batch.s_next.narrow(1, 0, goal_dim_) - batch.s.narrow(1, 0, goal_dim_);  // [B, k]
  switch (strategy_) {
    case RelabelStrategy::kNone:
      r.goals = batch.g;
      return r;
    case RelabelStrategy::kFun:
      r.goals = delta + kFunSigmaFraction * goal_half_range_ * normals(B, 1, rng).squeeze(1);
      return r;
    case RelabelStrategy::kSample:
      break;
  }
  // Candidates: 8 Gaussian draws around delta, delta, the original; all clipped to the box.
  const auto gauss =
      delta.unsqueeze(1) + kSampleSigmaFraction * goal_half_range_ * normals(B, kRelabelGaussianCandidates, rng);
  const auto raw = torch::cat({gauss, delta.unsqueeze(1), batch.g.unsqueeze(1)}, 1);  // [B, K, k]
  r.candidates = torch::max(torch::min(raw, goal_high_), goal_low_);
  r.scores = score(batch, r.candidates, policy);
  // First maximum: the smallest index whose score equals the row maximum.
  const auto best = std::get<0>(r.scores.max(1, /*keepdim=*/true));
  const auto index = torch::arange(kRelabelCandidates, r.scores.options().dtype(torch::kLong)).expand_as(r.scores);
  const auto masked = torch::where(r.scores == best, index, torch::full_like(index, kRelabelCandidates));
  r.choice = std::get<0>(masked.min(1));
  r.goals = r.candidates.gather(1, r.choice.view({B, 1, 1}).expand({B, 1, goal_dim_})).squeeze(1);
  return r;
}

}  // namespace ringrl::hiro
