// HiroPolicy: the noise-free two-level policy of spec hiro.md §7.1 (exploration off, §10.6),
// one env step at a time: what the evaluator runs, and what a policy file
// (common/hiro/policy_file.h) acts with.
//
// Contract:
// * act(s, G, a) is called once per env step with the observation s and the task target G
//   (context_dim floats). At step t of the episode (counted from reset()): when t % c == 0
//   the meta actor emits g = clip(mu_hi(s (+) G), goal box); otherwise the goal moves with the
//   goal transition g = h(s_{t-1}, g, s) (common/hiro/goal_space.h). Then
//   a = clip(mu_lo(s (+) g), action box).
// * It borrows the networks (they may be reloaded between steps) and copies the rest.
// * policy_actor_options() gives the actor options that rebuild a policy file's env and
//   networks (env, env options, goal space, c, hidden sizes); CorruptData (a damaged or
//   inconsistent file: exit 1) when the file's shapes do not match what that env gives.
// * render_policy_video() runs one noise-free evaluation episode of a policy file on its env at
//   the task's primary evaluation target and writes it as a video (envs/maze/video.h): a frame
//   at the reset and after every `every`-th step (1 + steps / every frames), the high level's
//   subgoal (observation[:2] + goal[:2], the intended x, y) drawn as a marker.
// * One thread uses an instance; act() does not allocate.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "actors/hiro/hiro_actor.h"
#include "actors/hiro/mlp.h"
#include "common/hiro/goal_space.h"
#include "common/hiro/policy_file.h"
#include "envs/env.h"

namespace ringrl::actors {

class HiroPolicy {
 public:
  HiroPolicy(ActorNets& nets, const hiro::GoalSpace& goals, const envs::Box& action, int obs_dim, int context_dim,
             int meta_period);

  /// A new episode: the next act() emits a goal.
  void reset() noexcept { t_ = 0; }
  /// The action at observation s under target G (contract above).
  void act(const float* s, const float* G, float* a);
  /// The goal in force for the last act() (k floats, relative to its observation).
  const std::vector<float>& goal() const noexcept { return g_; }
  /// Steps taken since reset().
  int steps() const noexcept { return t_; }

 private:
  ActorNets& nets_;
  hiro::GoalSpace goals_;
  envs::Box action_;
  int obs_, ctx_, c_;
  int t_ = 0;
  std::vector<float> g_, g_next_, prev_, meta_in_, low_in_;
};

/// The actor options of a policy file's env and networks (contract above).
HiroActorOptions policy_actor_options(const hiro::PolicyInfo& info);

struct PolicyVideoOptions {
  std::string env;  // the env the caller names: must be the policy's (empty: any)
  std::string out;  // .mp4 or .gif
  int width = 480, height = 360;
  int fps = 25;
  int every = 2;   // env steps per frame
  int steps = 0;   // 0: the env's episode length
  std::uint64_t seed = 0;  // the episode's reset seed
};

struct PolicyVideoResult {
  int frames = 0;
  int steps = 0;
  float final_distance = 0;
  bool success = false;  // final distance < the task's threshold (§10.6)
  float final_x = 0, final_y = 0;  // where the ant (or point) ends
  bool has_block = false;          // Push and Fall: where their block starts and ends
  std::array<double, 3> block_start{}, block_end{};
};

/// Renders one evaluation episode of the policy file `policy` (contract above).
PolicyVideoResult render_policy_video(const std::string& policy, const PolicyVideoOptions& options);

}  // namespace ringrl::actors
