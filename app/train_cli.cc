#include "app/train_cli.h"

#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <filesystem>

#include <fmt/format.h>

#include "app/cli_numbers.h"
#include "app/commands.h"
#include "sweeps/cluster_jobs.h"
#include "mpi/node_bridge.h"
#include "sweeps/train_spread.h"
#include "common/errors.h"
#include "common/runfiles/config.h"
#include "mpi/job_messages.h"

namespace ringrl::app {
using namespace ringrl::sweeps;  // child runs, the spread, tuning grids

namespace fs = std::filesystem;

std::map<std::string, TrainerTraits>& trainers() {
  static std::map<std::string, TrainerTraits> registered;  // filled on the main thread before parsing
  return registered;
}

const TrainerTraits& trainer_traits(const std::string& name) {
  const auto it = trainers().find(name);
  if (it == trainers().end()) throw UsageError(fmt::format("no trainer '{}' in this binary", name));
  return it->second;
}

void add_train_run_options(CLI::App& cmd, TrainRunCli& c, const TrainRunOptionText& text) {
  trainers()[cmd.get_name()] = TrainerTraits{text.uses_gpu};
  add_unsigned(cmd, "--actors", c.actors, text.actors_help, 1, text.max_actors);
  add_unsigned(cmd, text.budget_flag, c.budget, text.budget_help);
  add_real(cmd, "--max-seconds", c.max_seconds, "Wall-clock limit per repetition (0 = unlimited)", 0);
  add_unsigned(cmd, "--repetitions", c.repetitions, "Independent repetitions, each from scratch", 1,
               kMaxRepetitions);
  add_unsigned(cmd, "--seed", c.seed, "Base seed (repetition r uses seed + r)");
  cmd.add_option("--config", c.config, fmt::format("Config file (default: {})", text.config_default));
  cmd.add_option("--set", c.sets, "Override a config key: --set key=value (repeatable)");
  cmd.add_option("--run-dir", c.run_dir, fmt::format("Run directory (default: {})", text.run_dir_default));
  cmd.add_flag("--resume", c.resume, "Continue the run in --run-dir from its checkpoint and results");
  add_unsigned(cmd, "--parallel", c.parallel,
               "Repetitions at once, each its own process with its own actors (one per GPU with GPUs); "
               "needs --repetitions",
               1, kMaxParallel);
  cmd.add_option("--node-dir", c.node_dir,
                 "Under mpirun/srun: where ranks other than 0 run their repetitions (default: --run-dir on "
                 "their host), or in one run across nodes keep their files (default: RUN_DIR/node-{rank}); "
                 "\"{rank}\" is replaced by the rank");
  add_real(cmd, "--node-silence", c.node_silence_s,
           "Under mpirun/srun: seconds without a word from a node before rank 0 ends the run naming it", 0.001,
           mpi::kMaxNodeSilenceSeconds);
  add_unsigned(cmd, "--only-repetition", c.only_repetition, "Run only this repetition (what a spread run gives each "
                                                            "child)")
      ->group("");  // hidden: sweeps/train_spread.h
}

int run_train_command(const CLI::App& cmd, TrainRunCli& c, std::vector<std::shared_ptr<void>>& until_exit,
                      const std::function<int()>& run) {
  if (c.only_repetition) return run();  // one repetition of a spread run: runs as itself
  SpreadRequest q;
  q.algo = cmd.get_name();
  q.uses_gpu = trainer_traits(q.algo).uses_gpu;
  q.words = command_line();
  q.run_dir = c.run_dir;
  q.node_dir = c.node_dir;
  q.repetitions = c.repetitions.value_or(0);
  q.parallel = c.parallel.value_or(0);
  q.resume = c.resume;
  if (one_run_across_nodes(q)) {
    std::vector<std::string> settings = shared_train_words(q.words);
    settings.push_back(c.run_dir);
    const NodeJob job =
        join_node_job(settings, c.run_dir.empty() ? timestamped_run_dir(q.algo + "-nodes") : c.run_dir, c.node_dir,
                      c.node_silence_s, until_exit);
    if (job.bridge_status) return *job.bridge_status;
    if (job.joined) {
      c.run_dir = job.run_dir;
      c.remote = job.remote;  // rank 0 runs the command, with the other ranks' actors
    }
    return run();
  }
  if (spread_requested(q)) return run_spread(q);
  return run();
}

NodeJob join_node_job(const std::vector<std::string>& settings, const std::string& run_dir, const std::string& node_dir,
                      double node_silence_s, std::vector<std::shared_ptr<void>>& until_exit) {
  NodeJob job;
  std::shared_ptr<mpi::Comm> owned = join_mpi_job();
  if (!owned) return job;
  until_exit.push_back(owned);  // released last first: the nodes below, then the communicator
  mpi::Comm& comm = *owned;
  job.joined = true;
  job.rank = comm.rank();
  job.ranks = comm.size();
  job.run_dir = comm.broadcast(run_dir, 0);  // one directory: rank 0's
  mpi::BridgeSetup setup;
  setup.fingerprint = mpi::fingerprint(settings);
  setup.node_dir = node_dir_for(node_dir.empty() ? (fs::path(job.run_dir) / "node-{rank}").string() : node_dir,
                                comm.rank());
  setup.silence = std::chrono::duration<double>(node_silence_s);
  job.node_dir = setup.node_dir;
  if (comm.rank() != 0) {
    job.bridge_status = mpi::run_node_bridge(comm, setup);
    return job;
  }
  auto remote = std::make_shared<mpi::MpiRemoteActors>(comm, setup);
  until_exit.push_back(remote);
  job.remote = remote.get();
  return job;
}

std::int64_t only_repetition(const TrainRunCli& c) {
  return c.only_repetition ? static_cast<std::int64_t>(*c.only_repetition) : -1;
}

std::vector<std::string> train_overrides(const TrainRunCli& c, const std::string& budget_key,
                                         std::vector<std::string> first) {
  std::vector<std::string> sets = std::move(first);
  if (c.actors) sets.push_back(fmt::format("actors={}", *c.actors));
  if (c.repetitions) sets.push_back(fmt::format("repetitions={}", *c.repetitions));
  if (c.budget) sets.push_back(fmt::format("{}={}", budget_key, *c.budget));
  if (c.seed) sets.push_back(fmt::format("seed={}", *c.seed));
  if (c.max_seconds) sets.push_back(fmt::format("max_seconds={}", *c.max_seconds));
  sets.insert(sets.end(), c.sets.begin(), c.sets.end());
  return sets;
}

std::optional<std::string> resume_config(const TrainRunCli& c, const std::string& run_dir) {
  const std::filesystem::path resolved = std::filesystem::path(run_dir) / runfiles::kResolvedConfigName;
  if (c.resume && std::filesystem::exists(resolved)) return resolved.string();
  return std::nullopt;
}

}  // namespace ringrl::app
