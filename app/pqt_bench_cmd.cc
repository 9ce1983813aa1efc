// `ringrl bench npe`: end-to-end programs per second against the actor-only ceiling.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/pqt/pqt_actor.h"
#include "app/cli_numbers.h"
#include "app/commands.h"
#include "app/pqt_config.h"
#include "bench/pqt/learner_bench.h"
#include "bench/pqt/npe_bench.h"
#include "common/errors.h"
#include "common/run_segment.h"
#include "common/runfiles/config.h"
#include "learner/pqt/pqt_trainer.h"
#include "learner/threads.h"

namespace ringrl::app {
namespace {

namespace fs = std::filesystem;

struct NpeCli {
  std::string task = "reverse", mode = "pqt", config, device = "auto";
  std::vector<std::string> sets;
  std::uint32_t actors = 1;
  double seconds = 20;
  bool json = false;
};

void run_npe_bench(const NpeCli& c) {
  if (!(c.seconds > 0)) throw UsageError(fmt::format("--seconds {}: expected a positive number", c.seconds));
  std::vector<std::string> sets{
      "task=" + c.task,        "device=" + c.device, fmt::format("actors={}", c.actors),       "max_npe=0",
      "stop_on_success=false", "repetitions=1",      fmt::format("max_seconds={}", c.seconds), "checkpoint_every_s=0"};
  sets.insert(sets.end(), c.sets.begin(), c.sets.end());
  const nlohmann::json cfg = resolve_pqt_config(c.config, c.mode, sets);

  // 1. End to end: actors + rings + learner + weight broadcast.
  const fs::path dir = fs::temp_directory_path() / fmt::format("ringrl-bench-npe-{}", getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  learner::PqtTrainOptions t = train_options_from(cfg);
  t.run_dir = dir.string();
  t.config_path = runfiles::write_resolved(cfg, dir).string();
  t.quiet = true;
  learner::TrainSummary e2e;
  try {
    e2e = learner::run_pqt_training(t);
  } catch (...) {
    fs::remove_all(dir);
    throw;
  }
  fs::remove_all(dir);

  // 2. Actor-only ceiling with the same actors, the initial policy, no learner, no transport.
  const actors::PqtActorOptions ao = actor_options_from(cfg);
  learner::PqtLearner fresh(t.learner);
  std::vector<float> weights(fresh.layout().num_floats());
  fresh.write_blob(weights.data());
  const double ceiling = bench::actor_only_ceiling(ao, weights, c.actors, c.seconds);

  // 3. Learner alone on synthetic batches.
  learner::LearnerBenchOptions lb;
  lb.learner = t.learner;
  lb.seconds = std::min(c.seconds / 2, 5.0);
  lb.threads = static_cast<int>(learner::resolve_learner_threads(t.learner_threads, t.actors));
  const learner::LearnerBenchResult lr = learner::bench_learner_step(lb);

  const double efficiency = ceiling > 0 ? e2e.steady_npe_per_s / ceiling : 0;
  const nlohmann::json out = {{"bench", "npe"},
                              {"task", c.task},
                              {"mode", c.mode},
                              {"actors", c.actors},
                              {"npe_per_s", e2e.steady_npe_per_s},
                              {"npe_per_s_with_startup", e2e.npe_per_s},
                              {"actor_only_npe_per_s", ceiling},
                              {"efficiency", efficiency},
                              {"learner_updates_per_s", lr.ours_updates_per_s},
                              {"learner_steps_per_s_in_run", e2e.learner_steps_per_s},
                              {"learner_threads", lb.threads},
                              {"learner_eager_updates_per_s", lr.eager_updates_per_s},
                              {"learner_bare_updates_per_s", lr.bare_updates_per_s},
                              {"learner_flops_per_update", lr.flops_per_update},
                              {"learner_gflop_per_s", lr.ours_gflop_per_s},
                              {"lag_p50", e2e.lag_p50},
                              {"lag_max", e2e.lag_max},
                              {"max_lag", t.max_lag},
                              {"train_lag_max", e2e.train_lag_max},
                              {"device", lr.device},
                              {"seconds", c.seconds}};
  if (c.json) {
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf(
        "npe: %u actor(s), task %s, mode %s: end to end %.0f NPE/s, actor-only ceiling %.0f NPE/s, efficiency %.1f%%\n"
        "     learner alone %.1f updates/s (%.1f in the run), lag p50 %llu max %llu\n",
        c.actors, c.task.c_str(), c.mode.c_str(), e2e.steady_npe_per_s, ceiling, 100 * efficiency,
        lr.ours_updates_per_s, e2e.learner_steps_per_s, static_cast<unsigned long long>(e2e.lag_p50),
        static_cast<unsigned long long>(e2e.lag_max));
  }
  std::fflush(stdout);
}

void add_npe_bench_command(CommandTree& tree) {
  CLI::App& bench = tree.bench;
  auto n = std::make_shared<NpeCli>();
  CLI::App* npe = bench.add_subcommand("npe", "End-to-end programs executed per second vs the actor-only ceiling");
  npe->add_option("--task", n->task, "BF task")->capture_default_str();
  npe->add_option("--mode", n->mode, "pqt, pg, pg+pqt")->capture_default_str();
  add_unsigned(*npe, "--actors", n->actors, "Actor processes", 1, kMaxActors)->capture_default_str();
  add_real(*npe, "--seconds", n->seconds, "Seconds per measurement", 0)->capture_default_str();
  npe->add_option("--device", n->device, "auto, cpu or cuda:N")->capture_default_str();
  npe->add_option("--config", n->config, "Config file (default: configs/pqt.json)");
  npe->add_option("--set", n->sets, "Override a config key (repeatable)");
  npe->add_flag("--json", n->json, "Print one JSON object");
  npe->callback([n] { run_npe_bench(*n); });
}

const CommandFamily kRegistration(kOrderBench, add_npe_bench_command);

}  // namespace
}  // namespace ringrl::app
