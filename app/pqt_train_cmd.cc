// `ringrl train pqt` and the `pqt` actor kind.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "actors/pqt/pqt_actor.h"
#include "app/actor_registry.h"
#include "app/cli_numbers.h"
#include "app/commands.h"
#include "app/pqt_config.h"
#include "common/errors.h"
#include "common/run_segment.h"
#include "common/runfiles/config.h"
#include "envs/bf/scorer.h"

namespace ringrl::app {
namespace {

namespace fs = std::filesystem;

constexpr std::uint32_t kMaxRepetitions = 100000;  // --repetitions upper bound

struct TrainCli {
  std::string task, mode = "pqt", config, run_dir, device;
  std::vector<std::string> sets;
  std::optional<std::uint32_t> actors, repetitions;
  std::optional<std::uint64_t> max_npe, seed;
  std::optional<double> max_seconds;
  bool resume = false;
};

std::string default_run_dir(const std::string& task, const std::string& mode) {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return fmt::format("runs/pqt-{}-{}-{}", task.empty() ? "task" : task, mode, stamp);
}

int run_train(const TrainCli& c) {
  std::vector<std::string> sets;
  if (!c.task.empty()) sets.push_back("task=" + c.task);
  if (c.actors) sets.push_back(fmt::format("actors={}", *c.actors));
  if (c.repetitions) sets.push_back(fmt::format("repetitions={}", *c.repetitions));
  if (c.max_npe) sets.push_back(fmt::format("max_npe={}", *c.max_npe));
  if (c.seed) sets.push_back(fmt::format("seed={}", *c.seed));
  if (c.max_seconds) sets.push_back(fmt::format("max_seconds={}", *c.max_seconds));
  if (!c.device.empty()) sets.push_back("device=" + c.device);
  sets.insert(sets.end(), c.sets.begin(), c.sets.end());

  const std::string run_dir = c.run_dir.empty() ? default_run_dir(c.task, c.mode) : c.run_dir;
  nlohmann::json cfg;
  const fs::path resolved = fs::path(run_dir) / "config.json";
  if (c.resume && fs::exists(resolved)) {
    cfg = resolve_pqt_config(resolved.string(), "", sets);  // the run's own settings, plus new overrides
  } else {
    cfg = resolve_pqt_config(c.config, c.mode, sets);
  }
  learner::PqtTrainOptions t = train_options_from(cfg);
  const actors::PqtActorOptions actor_side = actor_options_from(cfg);  // must be valid too
  (void)bf::make_task(actor_side.task, actor_side.score);              // unknown task: error before any file is written
  t.run_dir = run_dir;
  t.resume = c.resume;
  t.validate();  // every setting, before the run directory is written
  fs::create_directories(run_dir);
  t.config_path = runfiles::write_resolved(cfg, run_dir).string();
  spdlog::info("train: task {}, mode {}, {} actor(s), run directory {}", t.task,
               learner::train_mode_name(t.learner.mode), t.actors, run_dir);
  const learner::TrainSummary s = learner::run_pqt_training(t);
  if (s.already_done) return 0;  // the driver said so in one line
  for (const auto& r : s.repetitions) {
    std::printf("repetition %u: %s  npe=%llu  steps=%llu  %.1f s  best_reward=%.4f\n", r.global_rep,
                r.found_solution ? "SOLVED" : "not solved", static_cast<unsigned long long>(r.npe),
                static_cast<unsigned long long>(r.num_batches), r.seconds, r.best_reward);
    std::printf("  %s program: %s\n", r.found_solution ? "correct" : "best",
                (r.found_solution ? r.code_solution : r.best_code).c_str());
  }
  std::printf(
      "train: %.0f NPE/s over %.1f s, %.1f learner steps/s, lag p50 %llu max %llu, %u actor restarts; results in %s\n",
      s.npe_per_s, s.seconds, s.learner_steps_per_s, static_cast<unsigned long long>(s.lag_p50),
      static_cast<unsigned long long>(s.lag_max), s.actor_restarts, run_dir.c_str());
  std::fflush(stdout);
  return s.interrupted ? 130 : 0;
}

int pqt_actor_main(const ActorLaunch& launch) {
  if (launch.config_path.empty()) throw UsageError("the pqt actor needs --config FILE (the run's resolved config)");
  const nlohmann::json cfg = runfiles::load_config(launch.config_path);
  actors::PqtActorOptions o = actor_options_from(cfg);
  o.segment = launch.segment;
  o.slot = launch.slot;
  o.seed = launch.seed;
  return actors::run_pqt_actor(o);
}

void add_pqt_train_commands(CommandTree& tree) {
  register_actor_kind("pqt", pqt_actor_main);

  auto c = std::make_shared<TrainCli>();
  CLI::App* pqt = tree.train.add_subcommand("pqt", "Program synthesis: PG / PQT (top-k) / PG+PQT on a BF coding task");
  pqt->add_option("--task", c->task, "BF task (see `ringrl bf tasks`)");
  pqt->add_option("--mode", c->mode, "Training mode; also a preset of the config (pqt, pg, pg+pqt, pqt-0ent, simplify)")
      ->capture_default_str();
  add_unsigned(*pqt, "--actors", c->actors, "Actor processes", 1, kMaxActors);
  add_unsigned(*pqt, "--max-npe", c->max_npe, "Programs-executed budget per repetition (0 = unlimited)");
  add_real(*pqt, "--max-seconds", c->max_seconds, "Wall-clock limit per repetition (0 = unlimited)", 0);
  add_unsigned(*pqt, "--repetitions", c->repetitions, "Independent repetitions, each with a fresh model", 1,
               kMaxRepetitions);
  add_unsigned(*pqt, "--seed", c->seed, "Base seed (repetition r uses seed + r)");
  pqt->add_option("--config", c->config, "Config file (default: configs/pqt.json)");
  pqt->add_option("--set", c->sets, "Override a config key: --set key=value (repeatable)");
  pqt->add_option("--run-dir", c->run_dir, "Run directory (default: runs/pqt-<task>-<mode>-<time>)");
  pqt->add_flag("--resume", c->resume, "Continue the run in --run-dir from its checkpoint and results");
  pqt->add_option("--device", c->device, "auto, cpu or cuda:N");
  pqt->callback([c] {
    const int rc = run_train(*c);
    if (rc != 0) std::exit(rc);
  });
}

const CommandFamily kRegistration(kOrderTrain, add_pqt_train_commands);

}  // namespace

}  // namespace ringrl::app
