// `ringrl env list|rollout|render` and `ringrl bench env` (the maze envs of envs/maze).
//
//   env list [--json]
//   env rollout --env NAME --steps N --policy random|zero [--seed S] [--task single|multi]
//               [--out traj.csv] [--json]
//   env render --env NAME [--traj traj.csv] --out maze.png [--px-per-cell P]
//   env render --env NAME --policy FILE --out ant.mp4|ant.gif [--width W --height H --fps F
//              --every N --steps S --seed K]   (actors/hiro/hiro_policy.h: render_policy_video)
//   bench env --env NAME [--seconds T | --steps N] [--rounds R] [--seed S] [--clock cpu|wall]
//             [--json]
//
// A rollout runs N env steps, resetting after each 500-step episode (episode k, counted from
// 0, is reset with seed S + k); `episodes` is the number of episodes begun. The random policy
// draws uniform actions in the action box from its own generator seeded with S.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/hiro/hiro_policy.h"
#include "app/cli_numbers.h"
#include "app/commands.h"
#include "bench/env_bench.h"
#include "common/errors.h"
#include "envs/env.h"
#include "envs/maze/factory.h"
#include "envs/maze/render.h"
#include "envs/maze/trajectory.h"

namespace ringrl::app {
namespace {

namespace maze = envs::maze;

constexpr std::uint64_t kPolicyStream = 0x5DEECE66DULL;  // policy generator = seed ^ this
constexpr long kMaxRolloutSteps = 1'000'000'000L;

struct RolloutOptions {
  std::string env;
  long steps = 0;
  std::string policy = "random";
  std::uint64_t seed = 0;
  std::string task = "single";
  std::string out;
  bool json = false;
};

struct RenderCmdOptions {
  std::string env;
  std::string traj;
  std::string out;
  int px_per_cell = maze::RenderOptions().pixels_per_cell;
  std::string policy;  // with it: a video of one evaluation episode
  actors::PolicyVideoOptions video;
};

struct BenchCmdOptions {
  bench::EnvBenchOptions bench;
  std::string clock = "cpu";
  bool json = false;
};

void run_list(bool json) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const maze::MazeEnvInfo& info : maze::maze_env_catalog()) {
    const bool available = !info.mujoco || maze::have_mujoco();
    int obs = 0;
    int act = 0;
    if (available) {
      const envs::EnvSpec spec = maze::maze_env_spec(info.name);
      obs = spec.obs_dim;
      act = spec.action_dim;
    }
    if (json) {
      all.push_back({{"env", info.name},
                     {"obs_dim", obs},
                     {"action_dim", act},
                     {"mujoco", info.mujoco},
                     {"available", available},
                     {"description", info.description}});
    } else {
      std::printf("%-16s obs %2d  act %d  %s%s\n", info.name.c_str(), obs, act, info.description.c_str(),
                  available ? "" : " (not built: no MuJoCo)");
    }
  }
  if (json) std::printf("%s\n", all.dump().c_str());
}

void run_rollout(const RolloutOptions& o) {
  if (o.steps < 1 || o.steps > kMaxRolloutSteps)
    throw UsageError(fmt::format("--steps {}: expected 1 to {}", o.steps, kMaxRolloutSteps));
  if (o.policy != "random" && o.policy != "zero")
    throw UsageError("--policy " + o.policy + ": expected random or zero");
  maze::MazeEnvOptions env_options;
  env_options.task_mode = maze::parse_task_mode(o.task, "--task");
  std::unique_ptr<envs::Env> env = maze::make_maze_env(o.env, env_options);
  const envs::EnvSpec& spec = env->spec();

  std::ofstream csv;
  if (!o.out.empty()) {
    csv.open(o.out);
    if (!csv) throw UsageError("--out " + o.out + ": cannot open for writing");
    maze::write_trajectory_header(csv);
  }
  std::vector<float> obs(static_cast<size_t>(spec.obs_dim));
  std::vector<float> action(static_cast<size_t>(spec.action_dim), 0.0f);
  Rng policy(o.seed ^ kPolicyStream);
  const bool random = o.policy == "random";

  int episodes = 0;
  const auto begin_episode = [&] {
    env->reset(o.seed + static_cast<std::uint64_t>(episodes), obs);
    if (csv.is_open())
      maze::write_trajectory_row(csv, {episodes, 0, obs[0], obs[1], 0.0, spec.task.distance(obs, env->context())});
    ++episodes;
  };

  const auto t0 = std::chrono::steady_clock::now();
  begin_episode();
  for (long k = 0; k < o.steps; ++k) {
    if (random)
      for (size_t i = 0; i < action.size(); ++i)
        action[i] = static_cast<float>(policy.uniform(spec.action.low[i], spec.action.high[i]));
    const envs::StepResult r = env->step(action, obs);
    if (csv.is_open())
      maze::write_trajectory_row(csv, {episodes - 1, r.info.t, obs[0], obs[1], r.reward, r.info.distance});
    if (r.done() && k + 1 < o.steps) begin_episode();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double steps_per_s = o.steps / seconds;
  if (csv.is_open()) {
    csv.close();
    if (!csv) throw std::runtime_error("cannot write " + o.out);
  }

  if (o.json) {
    nlohmann::ordered_json j;
    j["env"] = o.env;
    j["steps"] = o.steps;
    j["steps_per_s"] = steps_per_s;
    j["final_xy"] = {obs[0], obs[1]};
    j["episodes"] = episodes;
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf(
        "%s: %ld steps, %d episode(s), %.0f steps/s, final (x, y) = (%.3f, %.3f), "
        "distance to G %.3f\n",
        o.env.c_str(), o.steps, episodes, steps_per_s, obs[0], obs[1], spec.task.distance(obs, env->context()));
  }
}

// `env render --policy FILE --out ant.mp4`: one evaluation episode of a policy export.
void run_policy_video(const RenderCmdOptions& o) {
  actors::PolicyVideoOptions v = o.video;
  v.env = o.env;
  v.out = o.out;
  const actors::PolicyVideoResult r = actors::render_policy_video(o.policy, v);
  std::string block;
  if (r.has_block)
    block = fmt::format("; the block from ({:.2f}, {:.2f}, {:.2f}) to ({:.2f}, {:.2f}, {:.2f})", r.block_start[0],
                        r.block_start[1], r.block_start[2], r.block_end[0], r.block_end[1], r.block_end[2]);
  std::printf("wrote %s (%s, %d frames of %dx%d, %d env steps at the evaluation target): final distance %.3f, %s; "
              "the ant ends at (%.2f, %.2f)%s\n",
              o.out.c_str(), o.env.c_str(), r.frames, v.width, v.height, r.steps, r.final_distance,
              r.success ? "success" : "no success", r.final_x, r.final_y, block.c_str());
}

void run_render(const RenderCmdOptions& o) {
  if (!o.policy.empty()) return run_policy_video(o);
  const maze::Layout layout = maze::maze_env_layout(o.env);
  const maze::MazeEnvInfo& info = maze::maze_env_info(o.env);
  const envs::TaskSpec task = maze::task_for(info.maze, info.scale, maze::TaskMode::kSingle);
  std::vector<maze::TrajectoryRow> traj;
  if (!o.traj.empty()) traj = maze::read_trajectory_csv(o.traj);
  maze::RenderOptions options;
  options.pixels_per_cell = o.px_per_cell;
  maze::render_maze_png(o.out, layout, task, traj, options);
  std::printf("wrote %s (%s, %d x %d cells of %g units, %zu trajectory points)\n", o.out.c_str(), o.env.c_str(),
              layout.cols(), layout.rows(), layout.scale(), traj.size());
}

void run_bench(const BenchCmdOptions& o) {
  bench::EnvBenchOptions options = o.bench;
  if (o.clock == "cpu")
    options.clock = bench::BenchClock::kThreadCpu;
  else if (o.clock == "wall")
    options.clock = bench::BenchClock::kWall;
  else
    throw UsageError("--clock " + o.clock + ": expected cpu or wall");
  const bench::EnvBenchResult r = bench::run_env_bench(options);
  if (o.json) {
    std::printf("%s\n", bench::to_json(r).dump().c_str());
    return;
  }
  std::printf("%s: %.0f env steps/s", r.env.c_str(), r.env_steps_per_s);
  if (r.bare_physics_steps_per_s)
    std::printf(", bare mj_step %.0f /s, frame skip %d, efficiency %.3f", *r.bare_physics_steps_per_s, r.frame_skip,
                *r.efficiency);
  std::printf(" (one core, random actions, %s clock)\n", r.clock == bench::BenchClock::kWall ? "wall" : "thread CPU");
}

void add_env_commands(CommandTree& tree) {
  CLI::App& root = tree.root;
  CLI::App& bench_parent = tree.bench;
  CLI::App* env = root.add_subcommand("env", "Maze environments: list, rollout, render");
  env->require_subcommand(1);

  auto list_json = std::make_shared<bool>(false);
  CLI::App* list = env->add_subcommand("list", "List the environments");
  list->add_flag("--json", *list_json, "Print a JSON array");
  list->callback([list_json] { run_list(*list_json); });

  auto ro = std::make_shared<RolloutOptions>();
  CLI::App* rollout = env->add_subcommand("rollout", "Step an environment with a fixed policy");
  rollout->add_option("--env", ro->env, "Environment name (see `env list`)")->required();
  add_unsigned(*rollout, "--steps", ro->steps, "Env steps", 1, kMaxRolloutSteps)->required();
  rollout->add_option("--policy", ro->policy, "random or zero")->required();
  add_unsigned(*rollout, "--seed", ro->seed, "Seed of episode resets and the random policy");
  rollout->add_option("--task", ro->task, "Push/Fall training target: single or multi");
  rollout->add_option("--out", ro->out, "Write the trajectory as CSV");
  rollout->add_flag("--json", ro->json, "Print one JSON object");
  rollout->callback([ro] { run_rollout(*ro); });

  auto rd = std::make_shared<RenderCmdOptions>();
  CLI::App* render = env->add_subcommand(
      "render", "Draw a layout from above as PNG, or (--policy) a video of a policy export's evaluation episode");
  render->add_option("--env", rd->env, "Environment name")->required();
  render->add_option("--traj", rd->traj, "Trajectory CSV from `env rollout --out`");
  render->add_option("--out", rd->out, "PNG file to write (with --policy: .mp4 or .gif)")->required();
  add_unsigned(*render, "--px-per-cell", rd->px_per_cell, "Pixels per maze cell", 1);
  render->add_option("--policy", rd->policy, "A policy file (`checkpoint export --policy`): render a video");
  add_unsigned(*render, "--width", rd->video.width, "Video width (with --policy)", 16, 4096);
  add_unsigned(*render, "--height", rd->video.height, "Video height (with --policy)", 16, 4096);
  add_unsigned(*render, "--fps", rd->video.fps, "Video frames per second (with --policy)", 1, 240);
  add_unsigned(*render, "--every", rd->video.every, "Env steps per video frame (with --policy)", 1);
  add_unsigned(*render, "--steps", rd->video.steps, "Episode steps (with --policy; 0: the env's)");
  add_unsigned(*render, "--seed", rd->video.seed, "Reset seed of the episode (with --policy)");
  render->callback([rd] { run_render(*rd); });

  auto bo = std::make_shared<BenchCmdOptions>();
  CLI::App* b =
      bench_parent.add_subcommand("env", "Env steps/s with random actions, and bare mj_step/s of the same model");
  b->add_option("--env", bo->bench.env, "Environment name")->required();
  add_real(*b, "--seconds", bo->bench.seconds, "Total measuring time", 0);
  add_unsigned(*b, "--steps", bo->bench.steps,
               "Fixed work instead of --seconds: env steps per round (bare: x frame skip)");
  add_unsigned(*b, "--rounds", bo->bench.rounds, "Alternations of the env and physics phases", 1);
  add_unsigned(*b, "--seed", bo->bench.seed, "Seed of the action table and resets");
  b->add_option("--clock", bo->clock, "cpu: this thread's CPU time (default; robust to other load), or wall");
  b->add_flag("--json", bo->json, "Print one JSON object");
  b->callback([bo] { run_bench(*bo); });
}

const CommandFamily kRegistration(kOrderEnv, add_env_commands);

}  // namespace
}  // namespace ringrl::app
