// `ringrl train hiro`, `ringrl bench hiro-actor`, and the `hiro` / `hiro-eval` actor kinds.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "actors/hiro/hiro_actor.h"
#include "app/actor_registry.h"
#include "app/cli_numbers.h"
#include "app/commands.h"
#include "app/hiro_config.h"
#include "common/errors.h"
#include "common/runfiles/config.h"

namespace ringrl::app {
namespace {

namespace fs = std::filesystem;

constexpr int kInterruptedStatus = 130;
constexpr int kBenchSteps = 2000;                  // env steps and inferences timed by `bench hiro-actor`
constexpr std::uint64_t kBenchSeed = 1;            // weights drawn for the benchmark
constexpr std::uint32_t kMaxTrainActors = 255;     // --actors upper bound (one more slot is the evaluator's)
constexpr std::uint32_t kMaxRepetitions = 100000;  // --repetitions upper bound

struct TrainCli {
  std::string env, goal, targets, correction, config, run_dir, device;
  std::vector<std::string> sets;
  std::optional<std::uint32_t> actors, repetitions;
  std::optional<std::uint64_t> max_env_steps, seed;
  std::optional<double> max_seconds;
  bool resume = false;
};

std::string default_run_dir(const std::string& env) {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return fmt::format("runs/hiro-{}-{}", env.empty() ? "env" : env, stamp);
}

int run_train(const TrainCli& c) {
  std::vector<std::string> sets;
  if (!c.env.empty()) sets.push_back("env=" + c.env);
  if (!c.goal.empty()) sets.push_back("goal_space=" + c.goal);
  if (!c.targets.empty()) sets.push_back("targets=" + c.targets);
  if (!c.correction.empty()) sets.push_back("relabel=" + c.correction);
  if (c.actors) sets.push_back(fmt::format("actors={}", *c.actors));
  if (c.repetitions) sets.push_back(fmt::format("repetitions={}", *c.repetitions));
  if (c.max_env_steps) sets.push_back(fmt::format("max_env_steps={}", *c.max_env_steps));
  if (c.seed) sets.push_back(fmt::format("seed={}", *c.seed));
  if (c.max_seconds) sets.push_back(fmt::format("max_seconds={}", *c.max_seconds));
  if (!c.device.empty()) sets.push_back("device=" + c.device);
  sets.insert(sets.end(), c.sets.begin(), c.sets.end());

  const std::string run_dir = c.run_dir.empty() ? default_run_dir(c.env) : c.run_dir;
  const fs::path resolved = fs::path(run_dir) / runfiles::kResolvedConfigName;
  // --resume: the run's own settings, plus new overrides.
  const nlohmann::json cfg = c.resume && fs::exists(resolved) ? resolve_hiro_config(resolved.string(), sets)
                                                              : resolve_hiro_config(c.config, sets);
  td3::HiroTrainOptions t = hiro_train_options_from(cfg);
  (void)hiro_actor_options_from(cfg);  // the actors' side must be valid too, before any file is written
  t.run_dir = run_dir;
  t.resume = c.resume;
  t.validate();  // every setting, before the run directory is written
  fs::create_directories(run_dir);
  t.config_path = runfiles::write_resolved(cfg, run_dir).string();
  spdlog::info("train: hiro on {} ({}, {} targets, correction {}), {} actor(s){}, run directory {}", t.env,
               hiro::goal_space_name(t.learner.goal_space.kind), t.targets, t.learner.relabel, t.actors,
               t.eval ? " + evaluator" : "", run_dir);
  const learner::DriverSummary s = td3::run_hiro_training(t);
  for (const nlohmann::json& r : s.results) {
    const double seconds = r.value("seconds", 0.0);
    const auto steps = r.value("env_steps", std::uint64_t{0});
    std::printf(
        "repetition %u: env_steps=%llu  %.1f s  %.0f env steps/s  updates low %llu high %llu "
        "(%.3f / %.4f per env step)  eval success best %.2f final %.2f\n",
        r.value("global_rep", 0u), static_cast<unsigned long long>(steps), seconds,
        seconds > 0 ? static_cast<double>(steps) / seconds : 0.0,
        static_cast<unsigned long long>(r.value("low_updates", std::uint64_t{0})),
        static_cast<unsigned long long>(r.value("high_updates", std::uint64_t{0})),
        r.value("low_updates_per_env_step", 0.0), r.value("high_updates_per_env_step", 0.0),
        r.value("best_eval_success", 0.0), r.value("final_eval_success", 0.0));
  }
  std::printf("train: %.1f s, %.1f learner steps/s, lag p50 %llu max %llu, %u actor restarts; results in %s\n",
              s.seconds, s.updates_per_s, static_cast<unsigned long long>(s.lag_p50),
              static_cast<unsigned long long>(s.lag_max), s.actor_restarts, run_dir.c_str());
  std::fflush(stdout);
  return s.interrupted ? kInterruptedStatus : 0;
}

actors::HiroActorOptions actor_options(const ActorLaunch& launch) {
  if (launch.config_path.empty()) throw UsageError("the hiro actors need --config FILE (the run's resolved config)");
  actors::HiroActorOptions o = hiro_actor_options_from(runfiles::load_config(launch.config_path));
  o.segment = launch.segment;
  o.slot = launch.slot;
  o.seed = launch.seed;
  o.train_actors = static_cast<std::uint32_t>(std::stoul(launch.param("train_actors")));
  o.run_dir = launch.param("run_dir");
  o.validate();
  return o;
}

int hiro_actor_main(const ActorLaunch& launch) { return actors::run_hiro_actor(actor_options(launch)); }
int hiro_eval_main(const ActorLaunch& launch) { return actors::run_hiro_evaluator(actor_options(launch)); }

// Times one env step against one meta + low inference with weights of the learner's init
// scale (uniform draws; the numbers do not depend on their values).
int run_bench(const std::string& config, const std::vector<std::string>& sets, bool json) {
  const actors::HiroActorOptions o = hiro_actor_options_from(resolve_hiro_config(config, sets));
  actors::HiroCollector collector(o);
  const hiro::ActorBlobLayout& layout = collector.nets().layout();
  std::vector<std::byte> blob(layout.channel_bytes());
  write_blob_header(blob.data(), layout.blob());
  auto* payload = reinterpret_cast<float*>(blob.data() + sizeof(BlobHeader));
  envs::Rng rng(kBenchSeed);
  for (std::size_t i = 0; i < layout.blob().num_floats(); ++i)
    payload[i] = static_cast<float>(rng.uniform(-0.05, 0.05));
  std::string error;
  if (!collector.nets().load(blob, &error)) throw std::runtime_error(error);
  const auto [env_us, inf_us] = collector.time_step_and_inference(kBenchSteps);
  if (json) {
    std::printf("%s\n", nlohmann::json{{"env", o.env},
                                       {"goal_space", hiro::goal_space_name(o.goal_space)},
                                       {"hidden", o.hidden},
                                       {"env_step_us", env_us},
                                       {"inference_us", inf_us},
                                       {"ratio", inf_us / env_us}}
                            .dump()
                            .c_str());
  } else {
    std::printf("%s (%s, hidden %d): env step %.2f us, meta/c + low inference %.2f us, ratio %.3f\n", o.env.c_str(),
                hiro::goal_space_name(o.goal_space), o.hidden, env_us, inf_us, inf_us / env_us);
  }
  return 0;
}

void add_hiro_commands(CommandTree& tree) {
  register_actor_kind("hiro", hiro_actor_main);
  register_actor_kind("hiro-eval", hiro_eval_main);

  auto c = std::make_shared<TrainCli>();
  CLI::App* hiro = tree.train.add_subcommand("hiro", "HIRO: hierarchical TD3 with off-policy correction on a maze env");
  hiro->add_option("--env", c->env,
                   "ant-maze, ant-push, ant-fall, point-maze, kinematic-maze, kinematic-push or kinematic-fall");
  hiro->add_option("--goal", c->goal, "Goal space: orig (15-dim) or xy (default: orig on the ant envs, else xy)");
  hiro->add_option("--targets", c->targets, "Training targets: single (fixed) or multi (random); default per env");
  hiro->add_option("--correction", c->correction, "Off-policy correction: sample, fun or none");
  add_unsigned(*hiro, "--actors", c->actors, "Collector processes (plus one evaluator)", 1, kMaxTrainActors);
  add_unsigned(*hiro, "--max-env-steps", c->max_env_steps, "Env-step budget per repetition (0 = unlimited)");
  add_real(*hiro, "--max-seconds", c->max_seconds, "Wall-clock limit per repetition (0 = unlimited)", 0);
  add_unsigned(*hiro, "--seed", c->seed, "Base seed (repetition r uses seed + r)");
  add_unsigned(*hiro, "--repetitions", c->repetitions, "Independent repetitions", 1, kMaxRepetitions);
  hiro->add_option("--config", c->config, "Config file (default: configs/hiro.json)");
  hiro->add_option("--set", c->sets, "Override a config key: --set key=value (repeatable)");
  hiro->add_option("--run-dir", c->run_dir, "Run directory (default: runs/hiro-<env>-<time>)");
  hiro->add_flag("--resume", c->resume, "Continue the run in --run-dir from its checkpoint and results");
  hiro->add_option("--device", c->device, "auto, cpu or cuda:N");
  hiro->callback([c] {
    const int rc = run_train(*c);
    if (rc != 0) std::exit(rc);
  });

  struct BenchCli {
    std::string config;
    std::vector<std::string> sets;
    std::string env = "ant-maze";
    bool json = false;
  };
  auto b = std::make_shared<BenchCli>();
  CLI::App* bench = tree.bench.add_subcommand("hiro-actor", "One env step vs one HIRO meta + low-level inference");
  bench->add_option("--env", b->env, "Maze env")->capture_default_str();
  bench->add_option("--config", b->config, "Config file (default: configs/hiro.json)");
  bench->add_option("--set", b->sets, "Override a config key: --set key=value (repeatable)");
  bench->add_flag("--json", b->json, "One JSON line");
  bench->callback([b] {
    std::vector<std::string> sets{"env=" + b->env};
    sets.insert(sets.end(), b->sets.begin(), b->sets.end());
    const int rc = run_bench(b->config, sets, b->json);
    if (rc != 0) std::exit(rc);
  });
}

const CommandFamily kRegistration(kOrderTrain, add_hiro_commands);

}  // namespace

}  // namespace ringrl::app
