// `ringrl bench npe`: end-to-end programs per second against the actor-only ceiling.
//
// Under mpirun/srun with N ranks (docs/cluster.md, "Speed"), one invocation compares, with the
// same settings and --seconds each: rank 0 alone with N x --actors actors (the other ranks
// wait), then one run across the ranks (rank 0 with --actors actors, every other rank a node
// bridge with as many: the path `train pqt` takes under mpirun). Rank 0 checks the other
// ranks' settings before either run, and prints both figures; the actor-only ceiling and the
// learner alone are single-machine figures and are left out.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/pqt/pqt_actor.h"
#include "app/cli_numbers.h"
#include "app/commands.h"
#include "config/pqt_config.h"
#include "app/train_cli.h"
#include "bench/pqt/learner_bench.h"
#include "bench/pqt/npe_bench.h"
#include "common/errors.h"
#include "common/exit_status.h"
#include "common/run_segment.h"
#include "common/runfiles/config.h"
#include "learner/pqt/pqt_trainer.h"
#include "learner/actor_source.h"
#include "learner/threads.h"

namespace ringrl::app {
using namespace ringrl::config;  // the config mappers
namespace {

namespace fs = std::filesystem;

constexpr const char* kOneRankDir = "one-rank";  // under the bench's directory: rank 0 alone
constexpr const char* kAcrossDir = "across";     // the run across the ranks (nodes in node-<rank>)
constexpr int kRemoveTries = 5;                  // a bridge of this host may be removing its node directory at once

struct NpeCli {
  std::string task = "reverse", mode = "pqt", config, device = "auto";
  std::vector<std::string> sets;
  std::uint32_t actors = 1;
  double seconds = 20;
  bool json = false;
};

nlohmann::json npe_config(const NpeCli& c, std::uint32_t actors) {
  std::vector<std::string> sets{
      "task=" + c.task,        "device=" + c.device, fmt::format("actors={}", actors),         "max_npe=0",
      "stop_on_success=false", "repetitions=1",      fmt::format("max_seconds={}", c.seconds), "checkpoint_every_s=0"};
  sets.insert(sets.end(), c.sets.begin(), c.sets.end());
  return resolve_pqt_config(c.config, c.mode, sets);
}

// Removes `dir` and what is in it, also while a bridge of this host removes its part of it.
void remove_tree(const fs::path& dir) {
  std::error_code ec;
  for (int i = 0; i < kRemoveTries && fs::exists(dir, ec); ++i) fs::remove_all(dir, ec);
}

// One end-to-end run of `cfg` in `dir` (removed after it), with `remote` actors when not null.
learner::TrainSummary run_end_to_end(const nlohmann::json& cfg, const fs::path& dir, learner::ActorSource* remote) {
  remove_tree(dir);
  fs::create_directories(dir);
  learner::PqtTrainOptions t = train_options_from(cfg);
  t.run_dir = dir.string();
  t.config_path = runfiles::write_resolved(cfg, dir).string();
  t.quiet = true;
  t.remote = remote;
  learner::TrainSummary s;
  try {
    s = learner::run_pqt_training(t);
  } catch (...) {
    remove_tree(dir);
    throw;
  }
  remove_tree(dir);
  return s;
}

void bench_one_machine(const NpeCli& c, const nlohmann::json& cfg, const fs::path& dir) {
  // 1. End to end: actors + rings + learner + weight broadcast.
  const learner::PqtTrainOptions t = train_options_from(cfg);
  const learner::TrainSummary e2e = run_end_to_end(cfg, dir, nullptr);

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
                              {"dropped_stale", e2e.dropped_stale},
                              {"late_records", e2e.late_records},
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

// Rank 0 of an MPI job: rank 0 alone with every rank's actors, then the run across the ranks.
int bench_across_ranks(const NpeCli& c, const NodeJob& job, const fs::path& dir) {
  const std::uint32_t ranks = static_cast<std::uint32_t>(job.ranks);
  if (c.actors * ranks > kMaxActors)
    throw UsageError(fmt::format("--actors {} on {} ranks: rank 0 alone would run {} actors, expected at most {}",
                                 c.actors, ranks, c.actors * ranks, kMaxActors));
  const nlohmann::json cfg = npe_config(c, c.actors);
  const std::uint64_t max_lag = train_options_from(cfg).max_lag;

  learner::ActorSource* remote = job.remote;
  learner::TrainSummary one, across;
  try {
    // 1. Rank 0 alone with N x A actors; the bridges wait for their plan.
    one = run_end_to_end(npe_config(c, c.actors * ranks), dir / kOneRankDir, nullptr);
    // 2. The same run across the ranks: A actors here, A behind each node bridge.
    if (!one.interrupted) across = run_end_to_end(cfg, job.run_dir, remote);
  } catch (...) {
    remove_tree(dir);
    throw;
  }
  remove_tree(dir);
  // Interrupted: no figures; the bridges hear stop from rank 0's side of the nodes as it exits.
  if (one.interrupted || across.interrupted) return kExitInterrupted;
  nlohmann::json node_records = nlohmann::json::array();  // rank 1, 2, ...: records rank 0 took from each
  for (const learner::SourceStats& n : remote->stats()) node_records.push_back(n.records);

  const double ratio = one.steady_npe_per_s > 0 ? across.steady_npe_per_s / one.steady_npe_per_s : 0;
  const nlohmann::json out = {{"bench", "npe"},
                              {"task", c.task},
                              {"mode", c.mode},
                              {"ranks", ranks},
                              {"actors_per_rank", c.actors},
                              {"one_rank_actors", c.actors * ranks},
                              {"one_rank_npe_per_s", one.steady_npe_per_s},
                              {"one_rank_npe", one.npe},
                              {"one_rank_lag_p50", one.lag_p50},
                              {"one_rank_lag_max", one.lag_max},
                              {"one_rank_train_lag_max", one.train_lag_max},
                              {"one_rank_late_records", one.late_records},
                              {"across_npe_per_s", across.steady_npe_per_s},
                              {"across_npe", across.npe},
                              {"across_lag_p50", across.lag_p50},
                              {"across_lag_max", across.lag_max},
                              {"across_train_lag_max", across.train_lag_max},
                              {"across_late_records", across.late_records},
                              {"across_dropped_stale", across.dropped_stale},
                              {"across_node_records", node_records},
                              {"ratio", ratio},
                              {"loss_percent", 100 * (1 - ratio)},
                              {"max_lag", max_lag},
                              {"seconds", c.seconds}};
  if (c.json) {
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("npe over %u ranks: task %s, mode %s, max_lag %llu, %.0f s each\n", ranks, c.task.c_str(),
                c.mode.c_str(), static_cast<unsigned long long>(max_lag), c.seconds);
    std::printf("     rank 0 alone, %u actor(s): %.0f NPE/s, lag p50 %llu max %llu\n", c.actors * ranks,
                one.steady_npe_per_s, static_cast<unsigned long long>(one.lag_p50),
                static_cast<unsigned long long>(one.lag_max));
    std::printf(
        "     across the ranks, %u actor(s) each: %.0f NPE/s, lag p50 %llu max %llu, records from the nodes %s\n",
        c.actors, across.steady_npe_per_s, static_cast<unsigned long long>(across.lag_p50),
        static_cast<unsigned long long>(across.lag_max), node_records.dump().c_str());
    std::printf("     ratio %.3f (%+.1f%%)\n", ratio, 100 * (ratio - 1));
  }
  std::fflush(stdout);
  return kExitOk;
}

int run_npe_bench(const NpeCli& c, std::vector<std::shared_ptr<void>>& until_exit) {
  if (!(c.seconds > 0)) throw UsageError(fmt::format("--seconds {}: expected a positive number", c.seconds));
  const nlohmann::json cfg = npe_config(c, c.actors);  // bad settings: one line on every rank, before any joins
  const fs::path dir = fs::temp_directory_path() / fmt::format("ringrl-bench-npe-{}", getpid());
  // Under mpirun: ranks other than 0 are node bridges from here on (rank 0's plan comes after
  // its run alone), rank 0 has checked their settings.
  const NodeJob job = join_node_job(command_line(), (dir / kAcrossDir).string(), "", static_cast<double>(mpi::kNodeSilence.count()), until_exit);
  if (job.bridge_status) {
    std::error_code ec;  // this host's part of rank 0's directory, if rank 0 is elsewhere
    fs::remove_all(job.node_dir, ec);
    fs::remove(job.node_dir.parent_path(), ec);
    fs::remove(job.node_dir.parent_path().parent_path(), ec);
    return *job.bridge_status;
  }
  if (job.joined) return bench_across_ranks(c, job, fs::path(job.run_dir).parent_path());
  bench_one_machine(c, cfg, dir);
  return kExitOk;
}

void add_npe_bench_command(CommandTree& tree) {
  CLI::App& bench = tree.bench;
  auto n = std::make_shared<NpeCli>();
  CLI::App* npe =
      bench.add_subcommand("npe",
                           "End-to-end programs executed per second vs the actor-only ceiling (under mpirun: "
                           "rank 0 alone vs the run across the ranks, docs/cluster.md)");
  npe->add_option("--task", n->task, "BF task")->capture_default_str();
  npe->add_option("--mode", n->mode, "pqt, pg, pg+pqt")->capture_default_str();
  add_unsigned(*npe, "--actors", n->actors, "Actor processes", 1, kMaxActors)->capture_default_str();
  add_real(*npe, "--seconds", n->seconds, "Seconds per measurement", 0)->capture_default_str();
  npe->add_option("--device", n->device, "auto, cpu or cuda:N")->capture_default_str();
  npe->add_option("--config", n->config, "Config file (default: configs/pqt.json)");
  npe->add_option("--set", n->sets, "Override a config key (repeatable)");
  npe->add_flag("--json", n->json, "Print one JSON object");
  npe->callback([n, keep = &tree.until_exit, status = &tree.status] { *status = run_npe_bench(*n, *keep); });
}

const CommandFamily kRegistration(kOrderBench, add_npe_bench_command);

}  // namespace
}  // namespace ringrl::app
