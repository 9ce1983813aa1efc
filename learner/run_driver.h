// The run driver: everything an actor-learner run does that is not the algorithm.
//
// run_training(algorithm, options) is the learner process of `ringrl train <algo>`. It
//   * sizes and creates the run segment (one ring per actor, the weight channel);
//   * launches the actors from one ActorLaunch per slot (common/actor_launch.h) and supervises
//     them (heartbeats, restarts with backoff, giving up when every slot failed); with
//     options.remote, other nodes run more actors, numbered after these, whose records it
//     takes as its own and to which it publishes every blob: its loop calls both alike, as
//     actor sources (learner/actor_source.h);
//   * drains every ring with the algorithm's record-type mask, maps each record's weights
//     version to the learner version it was made with, and keeps lag statistics;
//   * steps the algorithm when it is ready and publishes its weight blob after every step that
//     asks for it (version bookkeeping: channel version -> learner version);
//   * writes metrics (metrics.csv, TensorBoard events, the progress line) every
//     metrics_every_s; checkpoints (RUN_DIR/checkpoint.bin) every checkpoint_every_s, on
//     SIGINT/SIGTERM, and the final model of every repetition (RUN_DIR/model-rep<R>.ckpt);
//   * resumes: completed repetitions (results.jsonl) are skipped, an interrupted one continues
//     from its checkpoint; the run identity (options.identity) must match on both;
//   * runs every repetition, or only options.only_repetition (one of a run spread over
//     processes: sweeps/train_spread.h), with the stop rules: the algorithm's success
//     (stop_on_success), the budget (max_budget, in the algorithm's unit: programs, env
//     steps), max_seconds;
//   * appends one results.jsonl line per repetition and returns a summary. Every line carries,
//     besides the algorithm's fields, `solved` (Algorithm::solved()), `summary`
//     (describe_result()) and `budget_key`, so that the repetition spread and tune print any
//     algorithm's outcome without knowing its fields.
//
// An algorithm plugs in through the Algorithm interface (learner/algorithm.h). Errors: bad options throw UsageError before any process starts or any file is
// written; a damaged checkpoint throws CorruptData (exit 1); a corrupt ring or actors that used
// up their restarts throw std::runtime_error (exit 1). The segment is removed and every actor
// reaped on every exit path.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/actor_launch.h"
#include "common/checkpoint.h"
#include "common/spsc_ring.h"
#include "learner/algorithm.h"
#include "learner/actor_source.h"

namespace ringrl::learner {

/// The run settings every algorithm's options share; a wing's options derive from it, so the
/// CLI and configs fill them once and the driver reads them as they are.
struct RunSettings {
  std::string run_dir;  // required
  std::uint32_t repetitions = 1;
  double max_seconds = 0;  // per repetition; 0 = unlimited
  bool stop_on_success = true;
  double checkpoint_every_s = 30;  // <= 0: only on interruption and at the end of a repetition
  double metrics_every_s = 1;
  /// Gated work (learner/unit_order.h): a unit that does not arrive this long while later ones
  /// wait is skipped, and its permit granted again.
  double unit_timeout_s = 60;
  std::string config_path;  // resolved config handed to each actor (--config)
  std::string executable;   // actor binary; empty = this process's binary
  /// Added to the local actors' nice value (0 to 19; ActorLaunch::nice, which a wing may lower
  /// for one slot in fill_launch): where actors and the learner's threads share the cores, the
  /// learner's threads then run first (a preempted learner thread holds up its partners at the
  /// next join; an actor waits less for a core than they do).
  int actor_nice = 0;
  bool resume = false;
  bool quiet = false;  // no progress line (benchmarks)
  std::string run_id;  // segment run id; empty = train-<pid>
  /// >= 0: run only this repetition of the `repetitions` (the others run elsewhere: `train
  /// --parallel`, the ranks of an MPI job); its results line is the one a whole run writes.
  std::int64_t only_repetition = -1;
  /// Actors on other nodes, taken as the driver's own (learner/actor_source.h; mpi/node_bridge.h);
  /// null = none. Borrowed: outlives the run.
  ActorSource* remote = nullptr;

  /// Throws UsageError naming the first bad field.
  void validate() const;
};

struct DriverOptions : RunSettings {
  std::uint32_t actors = 1;      // actor processes (slots)
  std::uint64_t max_budget = 0;  // per repetition; 0 = unlimited
  std::uint64_t seed = 1;        // base seed: actor seeds derive from it (common/seeds.h)
  /// Settings that define the run: stored in every checkpoint and results line, and compared
  /// on --resume (a changed value is a UsageError naming it).
  nlohmann::json identity = nlohmann::json::object();

  /// The shared settings of a wing's options, with the driver's own fields at their defaults.
  explicit DriverOptions(const RunSettings& run = {}) : RunSettings(run) {}
  /// Throws UsageError naming the first bad field.
  void validate() const;
};

struct DriverSummary {
  std::vector<nlohmann::json> results;  // results lines of the repetitions run now
  std::uint64_t budget = 0;             // records taken in this invocation
  double seconds = 0;                   // wall time of this invocation's training
  double budget_per_s = 0;              // budget / seconds (actor start-up included)
  double steady_budget_per_s = 0;       // from the first record to the end
  std::uint64_t updates = 0;            // learner steps in this invocation
  double updates_per_s = 0;
  std::uint64_t lag_p50 = 0, lag_max = 0;  // over every record taken
  std::uint64_t late_records = 0;   // gated work: records of units skipped (learner/unit_order.h)
  std::uint64_t skipped_units = 0;  // gated work: units skipped (a dead actor held them, or they stalled)
  std::uint32_t actor_restarts = 0;
  bool interrupted = false;   // SIGINT/SIGTERM: checkpoint written, run paused
  bool already_done = false;  // --resume of a run whose repetitions are all done
};


/// Runs the whole training (see the file comment).
DriverSummary run_training(Algorithm& algorithm, const DriverOptions& options);

}  // namespace ringrl::learner
