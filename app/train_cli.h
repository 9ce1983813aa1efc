// The command-line options that every `ringrl train <algo>` on the run driver shares, and how
// they become config overrides.
//
// Contract:
// * add_train_run_options() declares, in this order: --actors, the budget option (--max-npe or
//   --max-env-steps), --max-seconds, --repetitions, --seed, --config, --set, --run-dir,
//   --resume, --parallel, --node-dir (and the hidden --only-repetition that a spread run gives
//   each of its children). Numbers go through app/cli_numbers.h, so a bad value is one line
//   and status 2. Parsing only fills TrainRunCli; the command's callback calls
//   run_train_command(), which decides between a spread (--parallel above 1, or several MPI
//   ranks: sweeps/train_spread.h), one run across nodes, and the run itself.
// * train_overrides() returns `first` (the command's own keys, e.g. task=...), then one
//   key=value for each shared option that was given (actors, repetitions, the budget key,
//   seed, max_seconds), then every --set in order: later entries win.
// * resume_config() is, on --resume of a run directory that has one, the path of its resolved
//   config.json (the run's own settings, to which new overrides apply); else nothing, and the
//   run starts from --config (empty = the command's default file).
// * join_node_job() is how a command joins one run across nodes under mpirun (mpi/node_bridge.h):
//   `train pqt|ga|hiro` through run_train_command(), `bench npe` directly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/exit_status.h"
#include "common/runfiles/run_files.h"
#include "learner/actor_source.h"
#include "mpi/node_bridge.h"
#include "mpi/comm.h"

namespace ringrl::sweeps {
struct SpreadRequest;
}  // namespace ringrl::sweeps

namespace ringrl::app {

using sweeps::SpreadRequest;

inline constexpr std::uint32_t kMaxRepetitions = 100000;  // --repetitions upper bound
inline constexpr std::uint32_t kMaxParallel = 256;        // --parallel upper bound

struct TrainRunCli {
  std::string config, run_dir;
  std::vector<std::string> sets;
  std::optional<std::uint32_t> actors, repetitions;
  std::optional<std::uint32_t> parallel;         // repetitions at once (sweeps/train_spread.h)
  std::optional<std::uint32_t> only_repetition;  // a child of a spread run: this repetition only
  std::string node_dir;                          // under MPI: where ranks other than 0 run theirs
  std::optional<std::uint64_t> budget, seed;  // budget: --max-npe or --max-env-steps
  std::optional<double> max_seconds;
  double node_silence_s = static_cast<double>(mpi::kNodeSilence.count());  // under MPI: a silent node ends the run
  bool resume = false;
  learner::ActorSource* remote = nullptr;  // set by run_train_command in a run across nodes
};

/// What differs between the commands.
struct TrainRunOptionText {
  const char* budget_flag;      // "--max-npe"
  const char* budget_help;      // its help text
  const char* actors_help;      // "Actor processes"
  std::uint32_t max_actors;     // --actors upper bound
  const char* config_default;   // "configs/pqt.json"
  const char* run_dir_default;  // "runs/pqt-<task>-<mode>-<time>"
  bool uses_gpu = true;         // its learner runs on a GPU when there is one (GA: never)
};

/// Declares the shared options (see the contract) and registers the command's traits under
/// its name, for the spread and tuning (which name no algorithm).
void add_train_run_options(CLI::App& cmd, TrainRunCli& c, const TrainRunOptionText& text);

/// What a registered trainer (`train <name>`) can do.
struct TrainerTraits {
  bool uses_gpu = true;
};
/// The traits `train <name>` registered; throws UsageError for a name no command registered.
const TrainerTraits& trainer_traits(const std::string& name);

/// What join_node_job() made of this process. The job's communicator and rank 0's nodes live in
/// `until_exit` (app/commands.h), which outlives the run and its error report.
struct NodeJob {
  bool joined = false;               // one rank of several: this process is part of a run across nodes
  int rank = 0, ranks = 1;           // this process's rank; ranks in the job
  std::string run_dir;               // rank 0's run directory, the same on every rank
  std::filesystem::path node_dir;    // this rank's (on its own host): `node_dir` with {rank}, or RUN_DIR/node-<rank>
  std::optional<int> bridge_status;  // a rank other than 0: its node bridge ran; its exit status
  learner::ActorSource* remote = nullptr;  // rank 0: the other ranks' actors (RunSettings::remote)
};

/// Under mpirun/srun with several ranks (mpi/launch.h), joins the MPI job of one run across
/// nodes; otherwise returns joined = false and does nothing. Every rank takes rank 0's
/// `run_dir`. A rank other than 0 posts its hello and runs its node bridge in its node
/// directory (`node_dir` with "{rank}" replaced by its rank; empty: RUN_DIR/node-<rank>; it
/// waits for rank 0's welcome, then its plan, as long as rank 0 takes to send them) until rank
/// 0 stops it, and returns the bridge's exit status (2: refused). Rank 0 waits for every
/// node's hello, refuses the job (UsageError, one line naming the rank) when a node runs
/// another build, its `settings` (the words every rank must share) differ or it cannot write
/// its node directory, and returns with `remote` set. Once per process, from the main thread.
NodeJob join_node_job(const std::vector<std::string>& settings, const std::string& run_dir, const std::string& node_dir,
                      double node_silence_s, std::vector<std::shared_ptr<void>>& until_exit);

/// Runs `train <cmd>` as its command line asks, after parsing: the spread of its repetitions
/// (sweeps/train_spread.h), one run across the ranks of an MPI job (ranks other than 0 run
/// their node bridge; rank 0 runs `run` with c.run_dir the job's and c.remote the other ranks'
/// actors), or `run` alone. Returns the exit status.
int run_train_command(const CLI::App& cmd, TrainRunCli& c, std::vector<std::shared_ptr<void>>& until_exit,
                      const std::function<int()>& run);

/// The driver's only_repetition for the command line (-1: every repetition).
std::int64_t only_repetition(const TrainRunCli& c);

std::vector<std::string> train_overrides(const TrainRunCli& c, const std::string& budget_key,
                                         std::vector<std::string> first);

std::optional<std::string> resume_config(const TrainRunCli& c, const std::string& run_dir);

using runfiles::timestamped_run_dir;

}  // namespace ringrl::app
