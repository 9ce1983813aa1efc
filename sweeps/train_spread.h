// `train <algo> --repetitions R` spread over processes: `--parallel P` repetitions at once on
// this machine, or over the ranks of an MPI job (`mpirun -np N ringrl train ...`).
//
// Each repetition r runs as one complete single-node child, `ringrl train <algo> <the same
// arguments> --run-dir RUN/rep-<r> --only-repetition r` (learner/run_driver.h: it runs only
// repetition r of R, with the seed, identity and results line of a whole run), on a slot: a
// GPU (one repetition per GPU; GA runs on the CPU) or one of --parallel CPU slots. When it
// ends, its results line is appended to RUN/results.jsonl and its final model copied to
// RUN/model-rep<r>.ckpt, so RUN holds what a one-process run of the R repetitions holds
// (lines in the order the repetitions ended). Under MPI, rank 0 holds RUN and hands out the
// repetitions; the other ranks run theirs in --node-dir and send the directories back
// (sweeps/cluster_jobs.h).
//
// Contract:
// * spread_requested() says whether the parsed command asks for it: --parallel above 1, or
//   more than one rank with --repetitions above 1. one_run_across_nodes() says whether it asks
//   for one run whose actors live on every rank instead (more than one rank and no repetitions
//   to spread; mpi/node_bridge.h): pqt, ga and hiro. refuse_several_ranks() is for commands
//   that run in one process only (`train random`): a UsageError (one line) on rank 0, rather
//   than N copies of one run in one directory.
// * run_spread() returns the command's exit status: 0, 1 when a repetition failed, 130 after
//   SIGINT/SIGTERM (forwarded once to every child, each writes its checkpoint). Rerun with
//   --resume to continue: finished repetitions are skipped, the others resume in their
//   rep-<r> directories.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ringrl::sweeps {

struct SpreadRequest {
  std::string algo;                // the `train` subcommand: "pqt", "ga", "hiro"
  bool uses_gpu = true;            // its TrainerTraits: one slot per GPU when there are GPUs
  std::vector<std::string> words;  // the command line after the executable, as given
  std::string run_dir;             // --run-dir (empty: a timestamped one)
  std::string node_dir;            // --node-dir (MPI ranks other than 0)
  std::uint32_t repetitions = 1;   // --repetitions
  std::uint32_t parallel = 0;      // --parallel (0: not given)
  bool resume = false;
};

/// True when the command runs its repetitions spread (see the contract); throws UsageError
/// for a spread it cannot run.
bool spread_requested(const SpreadRequest& q);

/// True for one run across the ranks of an MPI job (see the contract).
bool one_run_across_nodes(const SpreadRequest& q);

/// Under a launcher with more than one rank: throws UsageError saying that `command` runs in
/// one process (rank 0), and ends the other ranks with status 2 without a word.
void refuse_several_ranks(const std::string& command);

/// Runs the spread; returns the exit status.
int run_spread(const SpreadRequest& q);

/// `words` without --run-dir, --node-dir, --parallel, --only-repetition (and their values,
/// in either "--x v" or "--x=v" form) and --resume: the arguments every repetition shares.
std::vector<std::string> shared_train_words(const std::vector<std::string>& words);

}  // namespace ringrl::sweeps
