// PqtLearner: one PG / PQT / PG+PQT update of the program policy per call (spec §5.3-§5.7).
//
// Contract:
// * Owns the policy parameters (learner/pqt/policy.h), the TF1 RMSProp state, the per-timestep
//   EMA baselines and the MaxUniquePriorityQueue. Torch stays behind the pimpl: this header
//   is torch-free, so the driver and the CLI include it cheaply.
// * step(batch) does, in this order (§5.7): validate; build tensors (pinned host staging +
//   non_blocking copies on CUDA); draw topk_batch_size programs from the queue (state left by
//   the previous step; the dummy [EOS] target if it is empty, see dummy_topk_on_empty_queue);
//   forward; total loss; backward; global-norm clip; RMSProp; EMA baseline update (episode
//   order); push the batch's argmax-reward episode (first index on ties) into the queue;
//   version += 1. The last two depend on the rewards only, so the code does them while it
//   builds the batch (after the queue draw); the results are those of this order. It returns
//   once all device work is done (its stats are read back).
// * Experience replay (§5.5, alpha > 0, PG modes only): a step takes fresh_batch_size()
//   fresh episodes (B - int(B*alpha) once the replay buffer holds anything, B before) and
//   adds int(B*alpha) programs drawn from the buffer (roulette wheel, weight
//   exp(R/replay_temperature)). Every PG row is weighted by 1/((1-a) + a q/p) (a = replayed
//   share, q = replay probability, p = sequence probability under the current policy),
//   normalised to sum to the row count if iw_normalize; with an empty buffer the PG
//   multipliers are zero for that step. The fresh episodes enter the buffer after the step.
//   Baselines, the queue push and the reward stats use the fresh episodes only.
// * Policy lag: an episode with policy_versions[i] != version() gets per-token truncated
//   importance weights min(is_clip, exp(log pi - log mu)) on its PG terms (lag_correction);
//   episodes of the current version get weight 1 exactly (on-policy math of §5.3).
// * One thread uses an instance. Bad options throw UsageError at construction; a bad batch
//   throws UsageError from step() before any state changes.
// * Device: "auto" (cuda:0 if torch::cuda::is_available(), else cpu), "cpu" or "cuda:N";
//   asking for CUDA where it is unavailable throws UsageError.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/byte_codec.h"
#include "common/pqt/policy_layout.h"
#include "learner/pqt/episode_batch.h"
#include "learner/pqt/replay_buffer.h"
#include "learner/pqt/top_k_queue.h"
#include "learner/profile.h"

namespace ringrl::learner {

/// Which loss terms are trained (spec §6.2): pg-20M, topk-20M, pg-topk-20M.
enum class TrainMode { kPg, kPqt, kPgPqt };
/// "pg" / "pqt" / "pg+pqt" (also accepts "topk" and "pg+topk"); UsageError otherwise.
TrainMode parse_train_mode(const std::string& name);
const char* train_mode_name(TrainMode mode);

/// How stale episodes (policy_versions[i] != version()) are weighted in the PG term.
enum class LagCorrection { kNone, kTruncatedPerToken };

/// How a CPU update computes its gradients: kFused runs learner/pqt/policy_pass.h (the
/// hand-written pass, no autograd), kEager the policy module under autograd (any device);
/// kAuto is fused on the CPU and eager elsewhere.
enum class PolicyKernel { kAuto, kFused, kEager };
/// "auto" / "fused" / "eager"; UsageError otherwise.
PolicyKernel parse_policy_kernel(const std::string& name);

/// Paper magic: PG and entropy are batch means times 64 (MAGIC_LOSS_MULTIPLIER, §5.3).
inline constexpr double kMagicLossMultiplier = 64.0;

struct LearnerOptions {
  PolicyShape shape{};
  int batch_size = 64;     // B: episodes per step (a step accepts 1..batch_size)
  int max_len = 100;       // T: timestep_limit
  bool eos_token = false;  // false: EOS logit forced to kEosMaskedLogit
  TrainMode mode = TrainMode::kPqt;

  double lr = 1e-4;
  double entropy_beta = 0.01;
  double pi_loss_hparam = 1.0;      // used in kPg / kPgPqt
  double topk_loss_hparam = 200.0;  // used in kPqt / kPgPqt
  int topk = 10;                    // queue capacity
  int topk_batch_size = 1;          // queue programs per step
  double regularizer = 0.0;         // L2 on LSTM kernels and output (not the embedding)
  double grad_clip = 50.0;          // global norm; <= 0 disables
  double param_init_factor = 0.5;
  double ema_baseline_decay = 0.99;
  double rms_decay = 0.99;
  double rms_epsilon = 1e-10;
  double rms_initial_accumulator = 1.0;
  /// Faithful quirk of §5.4: on an empty queue the top-k loss still runs on [EOS].
  bool dummy_topk_on_empty_queue = true;
  LagCorrection lag_correction = LagCorrection::kTruncatedPerToken;
  double is_clip = 1.0;                   // truncation c of the lag importance weights
  double alpha = 0.0;                     // replayed share of a PG batch (§5.5); 0 = no replay
  double replay_temperature = 1.0;        // replay weight exp(R / replay_temperature)
  bool iw_normalize = true;               // rescale the replay weights to sum to the batch size
  std::size_t replay_capacity = 1000000;  // unique programs held (see replay_buffer.h)
  std::string device = "auto";            // auto | cpu | cuda:N
  PolicyKernel policy_kernel = PolicyKernel::kAuto;
  /// Batches per pass (a departure when > 1, see step(batches)); 1 is the original.
  int batches_per_update = 1;
  std::uint64_t seed = 1;                 // parameter init and queue sampling

  /// §6.2 paper settings for a mode (pg-20M / topk-20M / pg-topk-20M).
  static LearnerOptions paper(TrainMode mode);
  /// Throws UsageError naming the first bad field.
  void validate() const;
  bool pg_enabled() const { return mode != TrainMode::kPqt && pi_loss_hparam != 0.0; }
  bool replay_enabled() const { return alpha > 0.0; }
  /// Programs drawn from the replay buffer per step once it is non-empty: int(B * alpha).
  int replay_rows() const { return static_cast<int>(batch_size * alpha); }
  /// Fresh programs a step takes once replay has a buffer (B, less replay_rows()): the size
  /// of an actor's batch, so that with max_lag 0 each step trains on programs sampled with
  /// the weights it starts from (docs/train.md).
  int fresh_rows() const { return replay_enabled() ? batch_size - replay_rows() : batch_size; }
  bool topk_enabled() const { return mode != TrainMode::kPg && topk > 0 && topk_loss_hparam != 0.0; }
};

/// What one step did. Loss terms are the unweighted values of §5.3 (before the hparams).
struct StepStats {
  std::uint64_t version = 0;  // version after the step
  double total_loss = 0.0;    // may be +inf on the first PQT step (dummy [EOS] target)
  double pg_loss = 0.0;       // L_pg (x64 included)
  double entropy = 0.0;       // H (x64 included)
  double topk_loss = 0.0;     // L_topk (batch mean, no x64)
  double grad_norm = 0.0;     // global norm before clipping
  bool clipped = false;
  double mean_reward = 0.0;
  double max_reward = 0.0;
  int argmax_index = 0;  // episode pushed into the queue
  bool pushed = false;   // it entered the queue
  int topk_samples = 0;  // real queue programs trained on (0 with the dummy)
  std::size_t queue_size = 0;
  double queue_max_score = 0.0;
  std::uint64_t lag_min = 0, lag_median = 0, lag_max = 0;  // version() - policy_version
  int stale_episodes = 0;
  int replayed_episodes = 0;  // rows drawn from the replay buffer
  std::size_t replay_size = 0;
};

class PqtLearner {
 public:
  explicit PqtLearner(const LearnerOptions& options);
  ~PqtLearner();
  PqtLearner(const PqtLearner&) = delete;
  PqtLearner& operator=(const PqtLearner&) = delete;

  /// One update (see the contract). `profiler` may be null.
  StepStats step(const EpisodeBatch& batch, PhaseProfiler* profiler = nullptr);
  /// k = batches.size() updates (1 <= k <= batches_per_update), processed as the original
  /// processes k consecutive batches: for batch j the EMA baselines, the queue draws and the
  /// queue push reflect batches 1..j-1 (none depends on the weights), then the k RMSProp updates
  /// run in order. The one departure: all k gradients are taken at the weights from before the
  /// first of them (asynchronous SGD with staleness below k), so they come from one pass over
  /// k B rows. Returns the last batch's stats; version() advances by k.
  StepStats step(const std::vector<EpisodeBatch>& batches, PhaseProfiler* profiler = nullptr);

  /// Copies the current parameters into `dst` (layout().num_floats() floats), host side.
  void write_blob(float* dst) const;
  /// Replaces the parameters from a blob (optimizer and baselines unchanged).
  void read_blob(const float* src);

  const PolicyLayout& layout() const;
  const LearnerOptions& options() const;
  std::uint64_t version() const;
  std::string device() const;                    // resolved, e.g. "cpu" or "cuda:0"
  const std::vector<double>& baselines() const;  // [T]
  const MaxUniquePriorityQueue& queue() const;
  MaxUniquePriorityQueue& queue();
  /// Fresh episodes the next step wants: batch_size, less replay_rows() once replay is on
  /// and its buffer is non-empty. step() accepts 1..batch_size - (rows it will replay).
  int fresh_batch_size() const;
  const ProportionalReplayBuffer& replay() const;

  /// A device synchronize for PhaseProfiler::set_device_sync while profiling on CUDA;
  /// empty on CPU.
  std::function<void()> device_synchronizer() const;

  /// Teacher-forced logits [B, T, vocab] (row-major, host) of the current policy for
  /// tokens [B, T] (the EOS mask applied); for tests and actor/learner agreement checks.
  std::vector<float> logits(const std::vector<std::int32_t>& tokens, int b, int t) const;

  /// Writes everything step() depends on, streamed through `w` (one checkpoint section):
  /// the layout fingerprint and T (max_len) it was made for, version, parameters and RMSProp
  /// accumulators (float32, blob order), baselines, sampling RNG, queue, replay buffer.
  void save(ByteWriter& w) const;
  /// Restores what save() wrote. A foreign or malformed state throws CorruptData (message
  /// from r.fail(), so it names the file and section) saying what is wrong: a different
  /// layout fingerprint, T, tensor size, replay capacity or temperature, a bad tag, a
  /// truncated or malformed field. Everything is decoded before anything is applied, so on a
  /// throw the learner is unchanged.
  void load(ByteReader& r);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringrl::learner
