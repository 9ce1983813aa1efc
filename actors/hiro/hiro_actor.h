// The HIRO actor processes (spec hiro.md §3, §7.1, §10.6): the collector, which steps a maze
// env with the meta and low-level policies plus exploration noise and pushes one Transition
// per env step and one MetaTransition per c steps, and the evaluator (kind "hiro-eval"),
// which runs noise-free episodes at the evaluation target every eval_every training env steps.
//
// Collection loop per episode (§7.1, exactly):
//   reset -> s_0, G (training sampler, or the fixed target); every c steps the meta policy
//   emits g = clip(mu_hi(s (+) G) + N(0, sigma_hi^2), goal box); every step
//   a = clip(mu_lo(s (+) g) + N(0, sigma_lo^2), action box); between decisions
//   g_next = h(s, g, s') = s[:k] + g - s'[:k]; at a decision boundary g_next is the freshly
//   emitted goal at s' (the reference), or h(s, g, s') with next_goal = "h" (the paper; the
//   fresh goal is still what the next segment executes). The first training steps come from
//   these untrained, noisy policies: there is no uniform-random phase (pitfall 23).
//   Episodes last the env's episode_length (500); with c = 10 an episode gives exactly 500
//   Transition and 50 MetaTransition records, states[i] aligned with actions[i].
//
// Random streams: everything random in a training episode (the env reset, hence the start
// and the training target, and the exploration noise of both levels) comes from the
// episode's key: run_episode(key) seeds the reset with mix_seed(seed, key) and the noise with
// mix_seed(mix_seed(seed, noise stream), key). A collector process keys each episode by the
// env steps its slot has pushed over the whole run when the episode begins: step_base (the
// learner's checkpointed count for the slot from earlier learner processes) plus the slot's
// `items` counter in the segment (every incarnation in this segment; counted before each
// transition is published). So a restarted actor continues after its predecessor: an episode
// of which any step reached the ring is never drawn again (only one that died before its first
// step can be).
//
// Evaluation (§10.6): noise off at both levels, same c schedule and goal transition, the task
// target fixed at the env's primary eval target; success iff the distance at the FINAL step
// is < the threshold. Eval steps are not env steps and never enter replay; the results go
// back as one kRecordHiroEval record, the trajectories to RUN_DIR/eval_trajectory.csv.
//
// Weights: every blob is checked (common/hiro/actor_blob.h) before use; a blob of another
// shape or layout version is refused with one log line and exit status kExitActorRefused.
//
// Pacing: the learner's rate limiter decides the update ratio. Each collector also keeps its
// pushes within throttle_slack env steps of its fair share of the steps the learner has taken
// (control block env_steps / train_actors), so that every actor's records keep flowing into
// the learner with one or several actors; it never changes the ratio.
//
// Processes are single-threaded; HiroCollector is used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/hiro/mlp.h"
#include "common/exit_status.h"
#include "common/hiro/goal_space.h"
#include "common/records.h"
#include "envs/env.h"
#include "envs/maze/factory.h"

namespace ringrl::actors {

/// Exit status of an actor that was handed a blob of another layout.

/// Which goal a transition at a decision boundary stores as g' (§7.1).
enum class NextGoal { kEmitted, kTransition };

struct HiroActorOptions {
  std::string segment;  // run segment name
  std::uint32_t slot = 0;
  std::uint64_t seed = 1;              // exploration noise and episode seeds
  std::uint64_t step_base = 0;         // env steps this slot pushed before this learner process (from the checkpoint)
  std::string env = "kinematic-maze";  // envs/maze/factory.h name
  envs::maze::MazeEnvOptions env_options{};
  bool fixed_target = false;  // train on the primary eval target (AntMaze/PointMaze)
  hiro::GoalSpaceKind goal_space = hiro::GoalSpaceKind::kXy;
  int meta_period = hiro::kDefaultMetaPeriod;  // c
  int hidden = 300;                            // both hidden layers, both networks
  double low_noise = 1.0;                      // sigma, env action units (§3; PointMaze 0.1)
  double high_noise = 1.0;                     // sigma, goal units (§3)
  NextGoal next_goal = NextGoal::kEmitted;
  std::uint32_t train_actors = 1;     // collectors in the run (fair-share throttle)
  std::uint32_t throttle_slack = 20;  // env steps a collector may run ahead of its share
  // evaluator
  std::uint64_t eval_every = 50000;  // training env steps between evaluations
  std::uint32_t eval_episodes = 50;
  std::string run_dir;  // where the evaluator writes eval_trajectory.csv
  bool require_parent_creator = true;

  /// Throws UsageError naming the first bad value.
  void validate() const;
};

/// Parses "emitted" (the reference) or "h" (the paper).
NextGoal parse_next_goal(const std::string& name);

/// Where the collector's records go.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  /// Called before every env step; false stops the episode (shutdown).
  virtual bool before_step() { return true; }
  /// A frame of `bytes` bytes to encode one record into; nullptr when stopping.
  virtual std::byte* reserve(std::uint32_t bytes) = 0;
  /// Publishes the reserved frame as a record of `type`.
  virtual void commit(RecordType type) = 0;
};

/// One row of an evaluation trajectory (the reset observation has t = 0).
struct EvalPoint {
  int t = 0;
  float x = 0, y = 0, reward = 0, distance = 0;
};

/// What one evaluation episode gave.
struct EvalEpisode {
  float final_distance = 0;
  bool success = false;  // final_distance < the task's threshold
};

/// The env, the goal space, the networks and the §7.1 loop of one actor.
class HiroCollector {
 public:
  explicit HiroCollector(const HiroActorOptions& options);
  ~HiroCollector();
  HiroCollector(const HiroCollector&) = delete;
  HiroCollector& operator=(const HiroCollector&) = delete;

  const envs::EnvSpec& spec() const noexcept;
  const hiro::GoalSpace& goal_space() const noexcept { return goal_space_; }
  ActorNets& nets() noexcept { return nets_; }
  /// The blob shape this actor expects (equal to the learner's HiroOptions::actor_blob_shape()).
  static hiro::ActorBlobShape blob_shape(const HiroActorOptions& options);

  /// One training episode with exploration noise, its randomness drawn from `key` (file
  /// comment; the records carry it as their episode); false when the sink stopped it.
  bool run_episode(std::uint64_t key, RecordSink& sink);
  /// One noise-free episode at `target` (context_dim floats); `trace` gets every observation.
  EvalEpisode eval_episode(std::uint64_t episode_seed, const float* target,
                           const std::function<void(const EvalPoint&)>& trace);

  /// Microseconds per env step and per meta + low inference (the meta net runs once per c
  /// steps, so one "inference" here is 1/c of a meta forward plus one low forward), each
  /// measured over `steps` steps.
  std::pair<double, double> time_step_and_inference(int steps);

 private:
  void emit_goal(const float* s, const float* context, bool explore, float* g);
  void act(const float* s, const float* g, bool explore, float* a);

  HiroActorOptions o_;
  std::unique_ptr<envs::Env> env_;
  hiro::GoalSpace goal_space_;
  ActorNets nets_;
  Rng noise_;
  int obs_ = 0, act_ = 0, k_ = 0, ctx_ = 0, c_ = 0;
  std::vector<float> meta_in_, low_in_;  // network inputs
};

/// Runs a collector process until stopped; returns its exit status (0 on a requested stop).
int run_hiro_actor(const HiroActorOptions& options);
/// Runs the evaluator process until stopped; returns its exit status.
int run_hiro_evaluator(const HiroActorOptions& options);

}  // namespace ringrl::actors
