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
// * Every program an actor executed and the learner drained counts once in NPE (§5.6), and
//   (when the top-k term is on) is offered to the priority queue: PQT is off-policy.
// * pace "actors": the learner drains every ring continuously and steps on the newest
//   batch_size episodes once at least batch_size new ones arrived; older unused episodes were
//   still counted and offered. pace "learner": the learner takes exactly batch_size episodes
//   (oldest first) per step and the small rings throttle the actors (on-policy ratio of the
//   original: one update per batch_size programs).
// * Policy lag = learner version - the version an episode was sampled with. PG corrects lagged
//   episodes with truncated per-token importance weights (PqtLearner), and episodes older than
//   max_policy_lag versions are not used for PG steps at all (counted as dropped).
//   Episodes made with the previous repetition's weights are discarded.
// * Checkpoints (RUN_DIR/checkpoint.bin, common/checkpoint.h) every checkpoint_every_s and on
//   SIGINT/SIGTERM hold the model, optimiser, queue, baselines, RNG and counters (episodes
//   drained but not yet trained on are not kept); resume continues the NPE count and keeps the queue.
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

struct PqtTrainOptions : RunSettings {
  LearnerOptions learner{};  // B, T, mode, hparams, device, seed
  std::string task = "reverse";
  std::string variant = "paper";  // paper | simplify
  std::uint32_t actors = 1;
  std::uint64_t max_npe = 0;  // 0 = unlimited
  std::uint32_t max_policy_lag = 8;
  Pace pace = Pace::kActors;

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
  std::uint64_t num_batches = 0;  // learner steps
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
  std::uint64_t lag_p50 = 0, lag_max = 0;  // over every drained episode
  std::uint64_t dropped_stale = 0;         // lag > max_policy_lag, not used for PG
  std::uint32_t actor_restarts = 0;
  bool interrupted = false;   // SIGINT/SIGTERM: checkpoint written, run paused
  bool already_done = false;  // --resume of a run whose repetitions are all done
};

TrainSummary run_pqt_training(const PqtTrainOptions& options);

/// The model of a PQT checkpoint or final model (RUN_DIR/model-rep<R>.ckpt), loaded into a
/// fresh learner made from `options` (the run's settings). Throws CorruptData when the file's
/// state does not fit them.
std::unique_ptr<PqtLearner> load_pqt_model(CheckpointReader& in, const LearnerOptions& options);

}  // namespace ringrl::learner
