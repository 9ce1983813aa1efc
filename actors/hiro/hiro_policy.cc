#include "actors/hiro/hiro_policy.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/byte_codec.h"
#include "common/errors.h"
#include "envs/maze/ant_env.h"
#include "envs/maze/factory.h"
#include "envs/maze/video.h"

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
    throw CorruptData(fmt::format("policy of networks {}->{} and {}->{} (hidden {}-{}) does not fit env {} with {}, "
                                 "which needs {}->{} and {}->{}",
                                 got.meta_in, got.meta_out, got.low_in, got.low_out, got.hidden1, got.hidden2, info.env,
                                 hiro::goal_space_name(info.goal_space), want.meta_in, want.meta_out, want.low_in,
                                 want.low_out));
  return o;
}

PolicyVideoResult render_policy_video(const std::string& path, const PolicyVideoOptions& o) {
  if (o.every < 1) throw UsageError(fmt::format("--every {}: expected >= 1", o.every));
  const hiro::PolicyFile file = hiro::read_policy_file(path);
  const HiroActorOptions ao = policy_actor_options(file.info);
  if (!o.env.empty() && o.env != ao.env)
    throw UsageError(fmt::format("--env {}: the policy {} was trained on {}", o.env, path, ao.env));
  const auto env = envs::maze::make_maze_env(ao.env, ao.env_options);
  const envs::EnvSpec& spec = env->spec();
  const int steps = o.steps > 0 ? o.steps : spec.episode_length;
  envs::maze::MazeCamera camera(*env, o.width, o.height);  // refuses envs without MuJoCo first
  ActorNets nets(file.info.shape);
  std::string error;
  if (!nets.load(file.blob, &error)) throw CorruptData(fmt::format("policy file {}: {}", path, error));
  const envs::Box full = envs::maze::maze_subgoal_box(ao.env, ao.env_options);
  const hiro::GoalSpace goals = hiro::make_goal_space(ao.goal_space, spec.obs_dim, full.low, full.high, ao.env);
  const int ctx = spec.task.context_dim();
  HiroPolicy policy(nets, goals, spec.action, spec.obs_dim, ctx, ao.meta_period);
  const std::vector<float> G = spec.task.primary_target();
  std::vector<float> s(static_cast<std::size_t>(spec.obs_dim)), s1(s.size()),
      a(static_cast<std::size_t>(spec.action_dim));
  env->reset(o.seed, envs::Span<float>(s));
  env->set_context(envs::Span<const float>(G));
  envs::maze::VideoWriter video(o.out, o.width, o.height, o.fps);
  video.add(camera.frame(*env, nullptr));
  PolicyVideoResult r;
  const auto* ant = dynamic_cast<const envs::maze::AntMazeEnv*>(env.get());
  r.has_block = ant != nullptr && ant->has_block();
  if (r.has_block) r.block_start = ant->block_position();
  r.final_distance = spec.task.distance(envs::Span<const float>(s), envs::Span<const float>(G));
  for (int t = 0; t < steps; ++t) {
    policy.act(s.data(), G.data(), a.data());
    const double marker[2] = {s[0] + policy.goal()[0], s[1] + policy.goal()[1]};
    const envs::StepResult step = env->step(envs::Span<const float>(a), envs::Span<float>(s1));
    r.final_distance = step.info.distance;
    s.swap(s1);
    if ((t + 1) % o.every == 0) video.add(camera.frame(*env, marker));
  }
  video.close();
  r.frames = video.frames();
  r.steps = steps;
  r.final_x = s[0];
  r.final_y = s[1];
  if (r.has_block) r.block_end = ant->block_position();
  r.success = r.final_distance < spec.task.success_threshold;
  return r;
}

}  // namespace ringrl::actors
