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
#include "config/pqt_config.h"
#include "app/train_cli.h"
#include "common/errors.h"
#include "common/exit_status.h"
#include "common/run_segment.h"
#include "common/runfiles/config.h"
#include "envs/bf/scorer.h"

namespace ringrl::app {
using namespace ringrl::config;  // the config mappers
namespace {

namespace fs = std::filesystem;

struct TrainCli : TrainRunCli {
  std::string task, mode = "pqt", device;
};

int run_train(const TrainCli& c) {
  std::vector<std::string> own;
  if (!c.task.empty()) own.push_back("task=" + c.task);
  if (!c.device.empty()) own.push_back("device=" + c.device);
  const std::vector<std::string> sets = train_overrides(c, "max_npe", own);
  const std::string run_dir =
      c.run_dir.empty() ? timestamped_run_dir(fmt::format("pqt-{}-{}", c.task.empty() ? "task" : c.task, c.mode))
                        : c.run_dir;
  // --resume: the run's own settings (no preset applied again), plus new overrides.
  const std::optional<std::string> resumed = resume_config(c, run_dir);
  const nlohmann::json cfg =
      resumed ? resolve_pqt_config(*resumed, "", sets) : resolve_pqt_config(c.config, c.mode, sets);
  learner::PqtTrainOptions t = train_options_from(cfg);
  const actors::PqtActorOptions actor_side = actor_options_from(cfg);  // must be valid too
  (void)bf::make_task(actor_side.task, actor_side.score);              // unknown task: error before any file is written
  t.run_dir = run_dir;
  t.resume = c.resume;
  t.only_repetition = only_repetition(c);
  t.remote = c.remote;  // under mpirun: the other ranks' actors (docs/cluster.md)
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
      "train: %.0f NPE/s over %.1f s, %.1f learner steps/s, lag p50 %llu max %llu, %llu late, %u actor restarts; "
      "results in %s\n",
      s.npe_per_s, s.seconds, s.learner_steps_per_s, static_cast<unsigned long long>(s.lag_p50),
      static_cast<unsigned long long>(s.lag_max), static_cast<unsigned long long>(s.late_records), s.actor_restarts,
      run_dir.c_str());
  std::fflush(stdout);
  return s.interrupted ? kExitInterrupted : 0;
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
  add_train_run_options(*pqt, *c,
                        {"--max-npe", "Programs-executed budget per repetition (0 = unlimited)", "Actor processes",
                         kMaxActors, "configs/pqt.json", "runs/pqt-<task>-<mode>-<time>"});
  pqt->add_option("--device", c->device, "auto, cpu or cuda:N");
  pqt->callback([c, pqt, keep = &tree.until_exit, status = &tree.status] {
    *status = run_train_command(*pqt, *c, *keep, [&] { return run_train(*c); });
  });
}

const CommandFamily kRegistration(kOrderTrain, add_pqt_train_commands);

}  // namespace

}  // namespace ringrl::app
