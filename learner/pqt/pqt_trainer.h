// The program-synthesis training driver behind `ringrl train pqt` (spec brain_coder §5.6-§6.4,
// seed pg_train.py): the learner process of a run.
//
// run_pqt_training() runs PQT as one Algorithm on the run driver (learner/run_driver.h): the
// driver owns the segment, the actors, draining, publishing, metrics, checkpoints, resume and
// repetitions; this wing trains a fresh PqtLearner per repetition on the episodes the actors
// push and asks for a publication after every step. Per repetition the driver stops on success
// (stop_on_success), at max_npe, or after max_seconds, and appends one line to
// RUN_DIR/results.jsonl; RUN_DIR/model-rep<R>.ckpt keeps each repetition's final model.
//
// Data flow and counting:
// * pace "learner" (the default, the original's ratio): the learner takes exactly the
//   batch_size fresh episodes a step wants (oldest first) and the small rings throttle the
//   actors: one update per batch of programs. A batch counts in NPE (§5.6), its best reward
//   and its correct programs are noted when the learner steps on it (§5.7 steps 4 and 6), so
//   the stop rules, which the driver checks between steps, see whole trained batches.
//   pace "actors" (a departure): the learner drains every ring continuously and steps on the
//   newest batch_size episodes once at least batch_size new ones arrived; every drained
//   program counts on arrival, older unused ones included.
// * Top-k queue (when the top-k term is on): queue_offer "batch_best" (the default, §5.4):
//   only the step's argmax-reward episode (first index on ties) is pushed, after the step
//   (PqtLearner::step). queue_offer "arrival" (a departure): every drained program is also
//   offered on arrival, before the step that trains on it.
// * Policy lag = learner version when a step trains on an episode - the version it was
//   sampled with. Pace learner bounds it with the driver's work gate (common/work_gate.h): an
//   actor claims each batch before it samples it with the newest weights, and the wing allows
//   (max_lag + 1) * batches_per_update batches ahead of those it trained on. max_lag 0 is the
//   original's single synchronous worker: sample, score, update, sample (every episode trains
//   at lag 0). Episodes past max_lag (possible with pace actors, or briefly after an actor
//   died) are never used for a PG step (counted as dropped); lag within the bound is corrected
//   with truncated per-token importance weights (PqtLearner). Episodes made with the previous
//   repetition's weights are discarded.
// * Stop rules per batch: with batches_per_update K a step trains on fewer than K batches when
//   the budget (max_npe) ends sooner, and on none past the batch that found a solution (with
//   stop_on_success), so the NPE count and NPE-to-solve are exact to the batch.
// * Checkpoints (RUN_DIR/checkpoint.bin, common/checkpoint.h) every checkpoint_every_s and on
//   SIGINT/SIGTERM hold the model, optimiser, queue, baselines, RNG and counters (episodes
//   drained but not yet trained on are not kept; with pace learner they were not counted
//   either); resume continues the NPE count and keeps the queue.
//   Completed repetitions are skipped on resume.
//
// One thread calls it (the learner process's main thread).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/checkpoint.h"
#include "learner/pqt/pqt_update.h"
#include "learner/run_driver.h"

namespace ringrl::learner {

/// When the learner steps (see the file comment).
enum class Pace { kActors, kLearner };
/// "actors" / "learner"; UsageError otherwise.
Pace parse_pace(const std::string& name);
const char* pace_name(Pace pace);

/// Which programs the top-k queue is offered (see the file comment).
enum class QueueOffer { kBatchBest, kArrival };
/// "batch_best" / "arrival"; UsageError otherwise.
QueueOffer parse_queue_offer(const std::string& name);
const char* queue_offer_name(QueueOffer offer);

/// The default policy-lag bound: 0, the original's synchronous worker (docs/train.md).
inline constexpr std::uint32_t kDefaultMaxLag = 0;

struct PqtTrainOptions : RunSettings {
  LearnerOptions learner{};  // B, T, mode, hparams, device, seed
  std::string task = "reverse";
  std::string variant = "paper";  // paper | simplify
  std::uint32_t actors = 1;
  std::uint64_t max_npe = 0;  // 0 = unlimited
  /// Most versions an episode may lag when a PG step trains on it (see the file comment).
  std::uint32_t max_lag = kDefaultMaxLag;
  Pace pace = Pace::kLearner;
  QueueOffer queue_offer = QueueOffer::kBatchBest;
  /// The learner's threads (the fused pass's row shards, policy_pass.h; torch's intra-op
  /// threads on the eager path); 0 = auto, see learner/threads.h resolve_learner_threads().
  std::uint32_t learner_threads = 0;

  /// Throws UsageError naming the first bad field.
  void validate() const;
};

struct RepetitionResult {
  std::uint32_t global_rep = 0;
  bool found_solution = false;
  std::uint64_t npe = 0;
  std::string code_solution;
  double best_reward = -10.0;
  std::string best_code;
  std::uint64_t num_batches = 0;  // batches trained on
  std::uint64_t train_lag_max = 0;  // most lag of an episode a step trained on
  double seconds = 0.0;
};

struct TrainSummary {
  std::vector<RepetitionResult> repetitions;  // the ones run now (not the skipped ones)
  std::uint64_t npe = 0;                      // programs drained in this invocation
  double seconds = 0.0;                       // wall time of this invocation's training
  double npe_per_s = 0.0;                     // npe / seconds (actor start-up included)
  double steady_npe_per_s = 0.0;              // from the first drained episode to the end
  std::uint64_t learner_steps = 0;
  double learner_steps_per_s = 0.0;
  std::uint64_t lag_p50 = 0, lag_max = 0;  // over every drained episode, at drain time
  std::uint64_t train_lag_max = 0;         // over every episode a step trained on, at that step
  std::uint64_t dropped_stale = 0;         // lag > max_lag, not used for PG
  std::uint64_t late_records = 0;          // of a unit skipped (learner/unit_order.h), never trained on
  std::uint32_t actor_restarts = 0;
  bool interrupted = false;   // SIGINT/SIGTERM: checkpoint written, run paused
  bool already_done = false;  // --resume of a run whose repetitions are all done
};

TrainSummary run_pqt_training(const PqtTrainOptions& options);

/// The wing run_pqt_training() hands the run driver, for tests that feed it records and step
/// it by hand. `options` (validated) must outlive it.
std::unique_ptr<Algorithm> make_pqt_algorithm(const PqtTrainOptions& options);


/// The model of a PQT checkpoint or final model (RUN_DIR/model-rep<R>.ckpt), loaded into a
/// fresh learner made from `options` (the run's settings). Throws CorruptData when the file's
/// state does not fit them.
std::unique_ptr<PqtLearner> load_pqt_model(CheckpointReader& in, const LearnerOptions& options);

}  // namespace ringrl::learner
