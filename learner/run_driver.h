// The run driver: everything an actor-learner run does that is not the algorithm.
//
// run_training(algorithm, options) is the learner process of `ringrl train <algo>`. It
//   * sizes and creates the run segment (one ring per actor, the weight channel);
//   * launches the actors from one ActorLaunch per slot (common/actor_launch.h) and supervises
//     them (heartbeats, restarts with backoff, giving up when every slot failed); with
//     options.remote, other nodes run more actors (learner/remote_actors.h), numbered after
//     these, whose records it takes as its own and to which it publishes every blob;
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
// An algorithm plugs in through the Algorithm interface below. Every call comes from the
// learner process's main thread, in this order per repetition: begin_repetition, optionally
// load (resume), then any interleaving of on_record / ready / step / write_blob / reporting,
// then result. Errors: bad options throw UsageError before any process starts or any file is
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
#include "learner/remote_actors.h"

namespace ringrl::learner {

/// What an algorithm counts its budget in; the driver mirrors it into the control block.
enum class BudgetUnit { kPrograms, kEnvSteps };

/// What the driver tells an algorithm when it asks for a metrics row or a progress line.
struct DriverTick {
  std::uint32_t rep = 0;                   // repetition index (global)
  std::uint32_t repetitions = 0;           // repetitions in the run
  std::uint64_t budget = 0;                // budget used in this repetition
  double budget_per_s = 0;                 // since the previous tick
  double updates_per_s = 0;                // learner steps per second since the previous tick
  std::uint64_t lag_p50 = 0, lag_max = 0;  // over the records drained since the previous tick
  double seconds = 0;                      // of this repetition, resumed time included
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;

  // --- identity and sizing (constant for a run)
  /// Short name: the checkpoint's algorithm field and the actors' kind, e.g. "pqt".
  virtual std::string name() const = 0;
  /// record_type_bit() of every record type its actors push.
  virtual std::uint64_t record_mask() const = 0;
  /// Data bytes each actor ring needs (the driver rounds up to a power of two).
  virtual std::uint64_t ring_bytes() const = 0;
  /// Bytes of the weight blob.
  virtual std::size_t blob_bytes() const = 0;
  /// The budget's unit and its name in results.jsonl ("npe", "env_steps").
  virtual BudgetUnit budget_unit() const = 0;
  virtual const char* budget_key() const = 0;
  /// Adds kind-specific settings to an actor's launch (kind, segment, slot, seed, config are set).
  virtual void fill_launch(ActorLaunch& /*launch*/) const {}

  // --- actors on other nodes (options.remote; learner/remote_actors.h)
  /// Actors each remote node runs, given the driver's own slot count (default: as many).
  virtual std::uint32_t actors_per_node(std::uint32_t local_slots) const { return local_slots; }
  /// Called once, before the first repetition, when remote actors join: their slots are
  /// [first, first + count), after the driver's own.
  virtual void add_remote_slots(std::uint32_t /*first*/, std::uint32_t /*count*/) {}

  // --- the work gate (common/work_gate.h): a bound on what actors sample ahead of the learner
  /// Units of actor work (a unit: records_per_unit() records, e.g. one sampled batch) that
  /// actors may have claimed beyond the records it retired; 0 (the default) = no gate. The
  /// driver grants ceil((records_retired() + records it discarded + records lost with dead
  /// actors) / records_per_unit()) + units_ahead() permits, after each publication.
  virtual std::uint64_t units_ahead() const { return 0; }
  /// Records in one unit of actor work (>= 1).
  virtual std::uint64_t records_per_unit() const { return 1; }
  /// Records taken through on_record() that it no longer holds (trained on or discarded),
  /// counted over its whole life in this process (every repetition, never reset).
  virtual std::uint64_t records_retired() const { return 0; }

  // --- one repetition
  /// Starts repetition `rep` from scratch (a fresh model seeded for `rep`).
  virtual void begin_repetition(std::uint32_t rep) = 0;
  /// Updates made in this repetition (the learner version).
  virtual std::uint64_t version() const = 0;
  /// Takes one record from actor `actor`'s ring, made with learner version `version`. The
  /// bytes are valid only during the call. Throws std::runtime_error for a malformed record.
  virtual void on_record(std::uint32_t actor, const RecordView& record, std::uint64_t version) = 0;
  /// False while it holds as many records as it will take for now: the driver stops draining,
  /// and full rings hold the actors back.
  virtual bool wants_records() const { return true; }
  /// True when step() should run now.
  virtual bool ready() const = 0;
  /// One update; returns true when the weights changed and should be published.
  virtual bool step() = 0;
  /// Writes the current weights (blob_bytes() bytes).
  virtual void write_blob(std::byte* dst) const = 0;
  /// Budget used in this repetition, resumed part included.
  virtual std::uint64_t budget_used() const = 0;
  /// The repetition reached the algorithm's success criterion.
  virtual bool solved() const = 0;

  // --- state (checkpoints and the final model)
  /// Writes its sections (any names but "run", which is the driver's).
  virtual void save(CheckpointWriter& out) const = 0;
  /// Restores what save() wrote, after begin_repetition(rep) of the same repetition.
  virtual void load(CheckpointReader& in) = 0;

  // --- reporting
  /// Column names of its metrics rows; the first is "rep".
  virtual std::vector<std::string> metric_columns() const = 0;
  /// One metrics row, in metric_columns() order.
  virtual std::vector<double> metric_row(const DriverTick& tick) const = 0;
  /// The fields of the progress line.
  virtual std::vector<std::pair<std::string, std::string>> progress_fields(const DriverTick& tick) const = 0;
  /// Its fields of the repetition's results.jsonl line (the driver adds global_rep,
  /// max_global_repetitions, seconds, the budget, solved, summary, budget_key and the identity).
  virtual nlohmann::json result() const = 0;
  /// One human line for the log at the end of a repetition.
  virtual std::string describe_result() const = 0;
};

/// The run settings every algorithm's options share; a wing's options derive from it, so the
/// CLI and configs fill them once and the driver reads them as they are.
struct RunSettings {
  std::string run_dir;  // required
  std::uint32_t repetitions = 1;
  double max_seconds = 0;  // per repetition; 0 = unlimited
  bool stop_on_success = true;
  double checkpoint_every_s = 30;  // <= 0: only on interruption and at the end of a repetition
  double metrics_every_s = 1;
  std::string config_path;  // resolved config handed to each actor (--config)
  std::string executable;   // actor binary; empty = this process's binary
  bool resume = false;
  bool quiet = false;  // no progress line (benchmarks)
  std::string run_id;  // segment run id; empty = train-<pid>
  /// >= 0: run only this repetition of the `repetitions` (the others run elsewhere: `train
  /// --parallel`, the ranks of an MPI job); its results line is the one a whole run writes.
  std::int64_t only_repetition = -1;
  /// Actors on other nodes, taken as the driver's own (learner/remote_actors.h); null = none.
  /// Borrowed: outlives the run.
  RemoteActors* remote = nullptr;

  /// Throws UsageError naming the first bad field.
  void validate() const;
};

struct DriverOptions : RunSettings {
  std::uint32_t actors = 1;      // actor processes (slots)
  std::uint64_t max_budget = 0;  // per repetition; 0 = unlimited
  std::uint64_t seed = 1;        // base seed: actor seeds derive from it (common/seeds.h)
  std::uint32_t learner_threads = 1;  // torch intra-op threads of the learner process
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
  std::uint32_t actor_restarts = 0;
  bool interrupted = false;   // SIGINT/SIGTERM: checkpoint written, run paused
  bool already_done = false;  // --resume of a run whose repetitions are all done
};


/// Runs the whole training (see the file comment).
DriverSummary run_training(Algorithm& algorithm, const DriverOptions& options);

}  // namespace ringrl::learner
