#include "actors/hiro/hiro_policy.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/errors.h"
#include "envs/maze/factory.h"

namespace ringrl::actors {

HiroPolicy::HiroPolicy(ActorNets& nets, const hiro::GoalSpace& goals, const envs::Box& action, int obs_dim,
                       int context_dim, int meta_period)
    : nets_(nets), goals_(goals), action_(action), obs_(obs_dim), ctx_(context_dim), c_(meta_period) {
  const auto k = static_cast<std::size_t>(goals.dim);
  g_.assign(k, 0.f);
  g_next_.assign(k, 0.f);
  prev_.assign(static_cast<std::size_t>(obs_), 0.f);
  meta_in_.assign(static_cast<std::size_t>(obs_ + ctx_), 0.f);
  low_in_.assign(static_cast<std::size_t>(obs_) + k, 0.f);
}

void HiroPolicy::act(const float* s, const float* G, float* a) {
  if (t_ % c_ == 0) {
    std::copy(s, s + obs_, meta_in_.begin());
    std::copy(G, G + ctx_, meta_in_.begin() + obs_);
    nets_.meta().forward(meta_in_.data(), g_.data());
    goals_.clip(g_.data());
  } else {
    hiro::goal_transition(prev_.data(), g_.data(), s, goals_.dim, g_next_.data());
    g_.swap(g_next_);
  }
  std::copy(s, s + obs_, prev_.begin());
  std::copy(s, s + obs_, low_in_.begin());
  std::copy(g_.begin(), g_.end(), low_in_.begin() + obs_);
  nets_.low().forward(low_in_.data(), a);
  for (std::size_t j = 0; j < action_.low.size(); ++j) a[j] = std::clamp(a[j], action_.low[j], action_.high[j]);
  ++t_;
}

HiroActorOptions policy_actor_options(const hiro::PolicyInfo& info) {
  HiroActorOptions o;
  o.env = info.env;
  o.env_options.task_mode = info.multi_target ? envs::maze::TaskMode::kMulti : envs::maze::TaskMode::kSingle;
  o.env_options.compact = info.compact;
  o.env_options.observe_block = info.observe_block;
  o.env_options.max_step = info.kinematic_max_step;
  o.goal_space = info.goal_space;
  o.meta_period = info.meta_period;
  o.hidden = info.shape.hidden1;
  o.validate();
  const hiro::ActorBlobShape want = HiroCollector::blob_shape(o);
  const hiro::ActorBlobShape& got = info.shape;
  if (got.meta_in != want.meta_in || got.meta_out != want.meta_out || got.low_in != want.low_in ||
      got.low_out != want.low_out || got.hidden1 != want.hidden1 || got.hidden2 != want.hidden2)
    throw UsageError(fmt::format("policy of networks {}->{} and {}->{} (hidden {}-{}) does not fit env {} with {}, "
                                 "which needs {}->{} and {}->{}",
                                 got.meta_in, got.meta_out, got.low_in, got.low_out, got.hidden1, got.hidden2, info.env,
                                 hiro::goal_space_name(info.goal_space), want.meta_in, want.meta_out, want.low_in,
                                 want.low_out));
  return o;
}

}  // namespace ringrl::actors
