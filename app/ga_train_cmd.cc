// `ringrl train ga` (the GA baseline, spec brain_coder §6.5) and the `ga` actor kind.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "actors/ga/ga_actor.h"
#include "app/actor_registry.h"
#include "app/cli_numbers.h"
#include "app/commands.h"
#include "config/ga_config.h"
#include "app/train_cli.h"
#include "common/errors.h"
#include "common/exit_status.h"
#include "common/parse_number.h"
#include "common/run_segment.h"
#include "common/runfiles/config.h"
#include "learner/ga/ga_algorithm.h"

namespace ringrl::app {
using namespace ringrl::config;  // the config mappers
namespace {

namespace fs = std::filesystem;

struct GaCli : TrainRunCli {
  std::string task;
};

int run_ga_train(const GaCli& c) {
  std::vector<std::string> own;
  if (!c.task.empty()) own.push_back("task=" + c.task);
  const std::vector<std::string> sets = train_overrides(c, "max_npe", own);
  const std::string run_dir =
      c.run_dir.empty() ? timestamped_run_dir("ga-" + (c.task.empty() ? std::string("task") : c.task)) : c.run_dir;
  const nlohmann::json cfg = resolve_ga_config(resume_config(c, run_dir).value_or(c.config), sets);
  ga::GaOptions o = ga_options_from(cfg);
  (void)ga_actor_options_from(cfg);
  o.run_dir = run_dir;
  o.resume = c.resume;
  o.only_repetition = only_repetition(c);
  o.remote = c.remote;  // under mpirun: the other ranks' evaluators (docs/cluster.md)
  o.validate();  // every setting and the task, before the run directory is written
  fs::create_directories(run_dir);
  o.config_path = runfiles::write_resolved(cfg, run_dir).string();
  spdlog::info(
      "train ga: task {}, population {}, crossover {}, mutation {}, {} actor(s), evaluator {}, run directory {}",
      o.task, o.population, o.crossover_rate, o.mutation_rate, o.actors, ga::evaluator_name(o.evaluator), run_dir);
  const ga::GaTrainSummary s = ga::run_ga_training(o);
  if (s.driver.already_done) return 0;  // the driver said so in one line
  for (const nlohmann::json& r : s.driver.results) {
    const bool solved = r.value("found_solution", false);
    std::printf("repetition %u: %s  npe=%llu  generations=%llu  %.1f s  best_reward=%.4f\n", r.value("global_rep", 0u),
                solved ? "SOLVED" : "not solved", static_cast<unsigned long long>(r.value("npe", std::uint64_t{0})),
                static_cast<unsigned long long>(r.value("generations", std::uint64_t{0})), r.value("seconds", 0.0),
                r.value("best_reward", 0.0));
    std::printf("  %s program: %s\n", solved ? "correct" : "best",
                r.value(solved ? "code_solution" : "best_code", std::string()).c_str());
  }
  // The rate from the first record exists only when actors score (records arrive).
  const std::string steady =
      s.driver.steady_budget_per_s > 0
          ? fmt::format("steady {:.0f} NPE/s from the first record; ", s.driver.steady_budget_per_s)
          : std::string();
  std::printf(
      "train ga: %.0f NPE/s over %.1f s (%s%.0f programs executed/s, %llu executed), %u actor restarts; "
      "results in %s\n",
      s.driver.budget_per_s, s.driver.seconds, steady.c_str(), s.executed_per_s,
      static_cast<unsigned long long>(s.executed), s.driver.actor_restarts, run_dir.c_str());
  std::fflush(stdout);
  return s.driver.interrupted ? kExitInterrupted : 0;
}

int ga_actor_main(const ActorLaunch& launch) {
  if (launch.config_path.empty()) throw UsageError("the ga actor needs --config FILE (the run's resolved config)");
  actors::GaActorOptions o = ga_actor_options_from(runfiles::load_config(launch.config_path));
  o.segment = launch.segment;
  o.slot = launch.slot;
  if (launch.params.count("run_slot") != 0) {  // a run across nodes (GaAlgorithm::fill_launch)
    o.run_slot = static_cast<std::int64_t>(parse_unsigned(launch.param("run_slot"), "run_slot", 0, kMaxActors));
    o.actors = static_cast<std::uint32_t>(parse_unsigned(launch.param("run_actors"), "run_actors", 1, kMaxActors));
  }
  return actors::run_ga_actor(o);
}

void add_ga_train_commands(CommandTree& tree) {
  register_actor_kind("ga", ga_actor_main);

  auto c = std::make_shared<GaCli>();
  CLI::App* cmd = tree.train.add_subcommand("ga", "Baseline: genetic algorithm over BF programs (spec §6.5, ga-20M)");
  cmd->add_option("--task", c->task, "BF task (see `ringrl bf tasks`)");
  add_train_run_options(*cmd, *c,
                        {"--max-npe", "Programs-executed budget per repetition (0 = unlimited; default 20000000)",
                         "Evaluator actor processes", kMaxActors, "configs/ga.json", "runs/ga-<task>-<time>",
                         /*uses_gpu=*/false});
  cmd->callback([c, cmd, keep = &tree.until_exit, status = &tree.status] {
    *status = run_train_command(*cmd, *c, *keep, [&] { return run_ga_train(*c); });
  });
}

const CommandFamily kRegistration(kOrderTrain, add_ga_train_commands);

}  // namespace
}  // namespace ringrl::app
