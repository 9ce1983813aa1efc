#include "config/hiro_config.h"

#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "config/pqt_config.h"
#include "common/errors.h"
#include "common/run_segment.h"
#include "common/runfiles/config.h"
#include "learner/threads.h"

namespace ringrl::config {
namespace {

using runfiles::get;

constexpr const char* kAuto = "auto";
constexpr std::uint64_t kIntMax = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
constexpr std::uint64_t kU32Max = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kMaxLearnerThreads = learner::kMaxTaskThreads;

// Every unsigned integer setting of configs/hiro.json and the whole numbers it accepts: the
// file, each --set and the resolved config are checked against this one table before
// anything starts (common/runfiles/config.h).
const runfiles::UnsignedKeys& unsigned_keys() {
  static const runfiles::UnsignedKeys keys = {
      {"meta_period", 1, kIntMax},     {"hidden", 1, kIntMax},
      {"batch_size", 1, kIntMax},      {"update_period", 1, kIntMax},
      {"replay_capacity", 1, kU64Max}, {"seed", 0, kU64Max},
      {"actors", 1, kMaxActors},       {"initial_steps", 0, kU64Max},
      {"high_every", 1, kU32Max},      {"publish_every", 1, kU32Max},
      {"throttle_slack", 0, kU32Max},  {"eval_every", 1, kU64Max},
      {"eval_episodes", 1, kU32Max},   {"max_env_steps", 0, kU64Max},
      {"repetitions", 1, kU32Max},     {"learner_threads", 0, kMaxLearnerThreads},
  };
  return keys;
}

}  // namespace

nlohmann::json resolve_hiro_config(const std::string& file, const std::vector<std::string>& overrides) {
  nlohmann::json cfg = runfiles::load_config(file.empty() ? config_dir() + "/hiro.json" : file);
  runfiles::check_unsigned(cfg, unsigned_keys());  // the file as written
  runfiles::apply_overrides(cfg, overrides, unsigned_keys());
  runfiles::check_unsigned(cfg, unsigned_keys());
  return cfg;
}

HiroEnvChoice hiro_env_choice(const nlohmann::json& cfg) {
  HiroEnvChoice c;
  c.env = get<std::string>(cfg, "env");
  const envs::maze::MazeEnvInfo& info = envs::maze::maze_env_info(c.env);  // UsageError lists the names
  const bool ant = info.mujoco && c.env != "point-maze";
  const std::string goal = get<std::string>(cfg, "goal_space");
  c.goal_space =
      goal == kAuto ? (ant ? hiro::GoalSpaceKind::kOrig : hiro::GoalSpaceKind::kXy) : hiro::parse_goal_space(goal);
  const bool maze_kind = info.maze == envs::maze::MazeKind::kMaze;
  c.targets = get<std::string>(cfg, "targets");
  if (c.targets == kAuto) c.targets = maze_kind ? "multi" : "single";
  const envs::maze::TaskMode mode = envs::maze::parse_task_mode(c.targets, "targets (or auto)");
  if (maze_kind) {
    c.fixed_target = mode == envs::maze::TaskMode::kSingle;  // the Maze envs always sample; the actor pins G
  } else {
    c.env_options.task_mode = mode;
  }
  if (!info.mujoco) c.env_options.max_step = get<double>(cfg, "kinematic_max_step");
  return c;
}

hiro::HiroTrainOptions hiro_train_options_from(const nlohmann::json& cfg) {
  const HiroEnvChoice c = hiro_env_choice(cfg);
  hiro::HiroTrainOptions t;
  hiro::HiroOptions& l = t.learner;
  l = hiro::make_hiro_options(c.env, c.goal_space, c.env_options);
  l.meta_period = get<int>(cfg, "meta_period");
  l.hidden = get<int>(cfg, "hidden");
  l.actor_lr = get<double>(cfg, "actor_lr");
  l.critic_lr = get<double>(cfg, "critic_lr");
  l.tau = get<double>(cfg, "tau");
  l.gamma_low = get<double>(cfg, "gamma_low");
  l.gamma_high = get<double>(cfg, "gamma_high");
  l.batch_size = get<int>(cfg, "batch_size");
  l.update_period = get<int>(cfg, "update_period");
  l.target_noise = get<double>(cfg, "target_noise");
  l.target_noise_clip = get<double>(cfg, "target_noise_clip");
  l.replay_capacity = get<std::uint64_t>(cfg, "replay_capacity");
  l.relabel = get<std::string>(cfg, "relabel");
  l.device = get<std::string>(cfg, "device");
  l.td3_kernel = get<std::string>(cfg, "td3_kernel");
  l.cuda_graphs = runfiles::has(cfg, "cuda_graphs") ? get<std::string>(cfg, "cuda_graphs") : "auto";
  l.device_replay = get<std::string>(cfg, "device_replay");
  // A run directory from before these keys ran PyTorch's Adam and true skips; its --resume
  // goes on that way.
  l.adam_form = runfiles::has(cfg, "adam_form") ? get<std::string>(cfg, "adam_form") : "torch";
  l.actor_zero_grad_steps = runfiles::has(cfg, "actor_zero_grad_steps") && get<bool>(cfg, "actor_zero_grad_steps");
  l.precision = runfiles::has(cfg, "learner_precision") ? get<std::string>(cfg, "learner_precision") : "fp32";
  l.seed = get<std::uint64_t>(cfg, "seed");
  t.env = c.env;
  t.targets = c.targets;
  t.actors = get<std::uint32_t>(cfg, "actors");
  t.initial_steps = get<std::uint64_t>(cfg, "initial_steps");
  t.high_every = get<std::uint32_t>(cfg, "high_every");
  t.publish_every = get<std::uint32_t>(cfg, "publish_every");
  t.throttle_slack = get<std::uint32_t>(cfg, "throttle_slack");
  t.eval = get<bool>(cfg, "eval");
  t.eval_every = get<std::uint64_t>(cfg, "eval_every");
  t.eval_episodes = get<std::uint32_t>(cfg, "eval_episodes");
  t.success_threshold = get<double>(cfg, "success_threshold");
  t.stop_on_success = get<bool>(cfg, "stop_on_success");
  t.max_env_steps = get<std::uint64_t>(cfg, "max_env_steps");
  t.max_seconds = get<double>(cfg, "max_seconds");
  t.repetitions = get<std::uint32_t>(cfg, "repetitions");
  t.checkpoint_every_s = get<double>(cfg, "checkpoint_every_s");
  t.actor_nice = runfiles::has(cfg, "actor_nice") ? get<int>(cfg, "actor_nice") : 0;
  t.metrics_every_s = get<double>(cfg, "metrics_every_s");
  // Absent in run directories from before the key: auto.
  t.learner_threads = runfiles::has(cfg, "learner_threads") ? get<std::uint32_t>(cfg, "learner_threads") : 0;
  l.threads = static_cast<int>(learner::resolve_learner_threads(t.learner_threads, t.actors));
  (void)actors::parse_next_goal(get<std::string>(cfg, "next_goal"));
  t.learner.validate();  // the rest once run_dir is known (run_hiro_training)
  return t;
}

actors::HiroActorOptions hiro_actor_options_from(const nlohmann::json& cfg) {
  const HiroEnvChoice c = hiro_env_choice(cfg);
  actors::HiroActorOptions a;
  a.env = c.env;
  a.env_options = c.env_options;
  a.fixed_target = c.fixed_target;
  a.goal_space = c.goal_space;
  a.meta_period = get<int>(cfg, "meta_period");
  a.hidden = get<int>(cfg, "hidden");
  a.low_noise = get<double>(cfg, c.env == "point-maze" ? "point_maze_low_noise" : "low_noise");
  a.high_noise = get<double>(cfg, "high_noise");
  a.next_goal = actors::parse_next_goal(get<std::string>(cfg, "next_goal"));
  a.train_actors = get<std::uint32_t>(cfg, "actors");
  a.throttle_slack = get<std::uint32_t>(cfg, "throttle_slack");
  a.eval_every = get<std::uint64_t>(cfg, "eval_every");
  a.eval_episodes = get<std::uint32_t>(cfg, "eval_episodes");
  a.validate();
  return a;
}

}  // namespace ringrl::config
