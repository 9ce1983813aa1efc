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
#include "config/hiro_config.h"
#include "app/train_cli.h"
#include "common/errors.h"
#include "common/exit_status.h"
#include "common/runfiles/config.h"

namespace ringrl::app {
using namespace ringrl::config;  // the config mappers
namespace {

namespace fs = std::filesystem;

constexpr int kBenchSteps = 2000;               // env steps and inferences timed by `bench hiro-actor`
constexpr std::uint64_t kBenchSeed = 1;         // weights drawn for the benchmark
constexpr std::uint32_t kMaxTrainActors = 255;  // --actors upper bound (one more slot is the evaluator's)

struct TrainCli : TrainRunCli {
  std::string env, goal, targets, correction, device;
};

int run_train(const TrainCli& c) {
  std::vector<std::string> own;
  if (!c.env.empty()) own.push_back("env=" + c.env);
  if (!c.goal.empty()) own.push_back("goal_space=" + c.goal);
  if (!c.targets.empty()) own.push_back("targets=" + c.targets);
  if (!c.correction.empty()) own.push_back("relabel=" + c.correction);
  if (!c.device.empty()) own.push_back("device=" + c.device);
  const std::vector<std::string> sets = train_overrides(c, "max_env_steps", own);
  const std::string run_dir =
      c.run_dir.empty() ? timestamped_run_dir("hiro-" + (c.env.empty() ? std::string("env") : c.env)) : c.run_dir;
  const nlohmann::json cfg = resolve_hiro_config(resume_config(c, run_dir).value_or(c.config), sets);
  hiro::HiroTrainOptions t = hiro_train_options_from(cfg);
  (void)hiro_actor_options_from(cfg);  // the actors' side must be valid too, before any file is written
  t.run_dir = run_dir;
  t.resume = c.resume;
  t.only_repetition = only_repetition(c);
  t.remote = c.remote;  // under mpirun: the other ranks' collectors (docs/cluster.md)
  t.validate();  // every setting, before the run directory is written
  fs::create_directories(run_dir);
  t.config_path = runfiles::write_resolved(cfg, run_dir).string();
  spdlog::info("train: hiro on {} ({}, {} targets, correction {}), {} actor(s){}, run directory {}", t.env,
               hiro::goal_space_name(t.learner.goal_space.kind), t.targets, t.learner.relabel, t.actors,
               t.eval ? " + evaluator" : "", run_dir);
  const learner::DriverSummary s = hiro::run_hiro_training(t);
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
  return s.interrupted ? kExitInterrupted : 0;
}

actors::HiroActorOptions actor_options(const ActorLaunch& launch) {
  if (launch.config_path.empty()) throw UsageError("the hiro actors need --config FILE (the run's resolved config)");
  actors::HiroActorOptions o = hiro_actor_options_from(runfiles::load_config(launch.config_path));
  o.segment = launch.segment;
  o.slot = launch.slot;
  o.seed = launch.seed;
  o.train_actors = static_cast<std::uint32_t>(std::stoul(launch.param("train_actors")));
  o.run_dir = launch.param("run_dir");
  if (launch.params.count("step_base") != 0) o.step_base = std::stoull(launch.param("step_base"));
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
  Rng rng(kBenchSeed);
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
  add_train_run_options(
      *hiro, *c,
      {"--max-env-steps", "Env-step budget per repetition (0 = unlimited)", "Collector processes (plus one evaluator)",
       kMaxTrainActors, "configs/hiro.json", "runs/hiro-<env>-<time>"});
  hiro->add_option("--device", c->device, "auto, cpu or cuda:N");
  hiro->callback([c, hiro, keep = &tree.until_exit, status = &tree.status] {
    *status = run_train_command(*hiro, *c, *keep, [&] { return run_train(*c); });
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
  bench->callback([b, status = &tree.status] {
    std::vector<std::string> sets{"env=" + b->env};
    sets.insert(sets.end(), b->sets.begin(), b->sets.end());
    *status = run_bench(b->config, sets, b->json);
  });
}

const CommandFamily kRegistration(kOrderTrain, add_hiro_commands);

}  // namespace

}  // namespace ringrl::app
