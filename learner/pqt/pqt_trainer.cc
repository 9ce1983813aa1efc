#include "learner/pqt/pqt_trainer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/pqt/program_record.h"
#include "common/pqt/state_format.h"
#include "common/records.h"
#include "common/run_segment.h"
#include "common/runfiles/results_jsonl.h"
#include "common/seeds.h"
#include "common/work_gate.h"
#include "envs/bf/scorer.h"
#include "learner/run_driver.h"
#include "learner/threads.h"

namespace ringrl::learner {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kActorsPaceRingBytes = std::uint64_t{4} << 20;
constexpr std::uint32_t kLearnerPaceRingBatches = 2;  // a ring holds about this many batches
constexpr double kBestRewardRounding = 1e10;          // spec §5.6: compare after rounding to 10 decimals
constexpr double kInitialBestReward = -10.0;
constexpr int kPoolBatches = 4;  // drained episodes kept, in batches (at least batches_per_update)
constexpr const char* kPqtSection = "pqt";     // this wing's checkpoint section

// One drained episode, in learner version space.
struct Episode {
  std::vector<std::int32_t> tokens;  // [T]
  std::vector<float> log_probs;      // [T]
  std::int32_t length = 0;
  float reward = 0;         // as the learner trains on it
  double total_reward = 0;  // as the actor scored it: best-reward tracking and solutions.txt
  bool correct = false;     // every test case printed its target
  std::uint64_t version = 0;
};

// Fixed-capacity FIFO of episodes with reusable storage.
class EpisodePool {
 public:
  EpisodePool(std::size_t capacity, int max_len) : slots_(capacity) {
    for (auto& e : slots_) {
      e.tokens.assign(static_cast<std::size_t>(max_len), 0);
      e.log_probs.assign(static_cast<std::size_t>(max_len), 0.f);
    }
  }
  std::size_t size() const { return size_; }
  bool full() const { return size_ == slots_.size(); }
  /// Episodes that left the pool (taken, overwritten or cleared), over its whole life.
  std::uint64_t removed() const { return removed_; }
  // Slot for a new episode; when full, the oldest is overwritten.
  Episode& push() {
    if (full()) pop_front();
    Episode& e = slots_[(head_ + size_) % slots_.size()];
    ++size_;
    return e;
  }
  void pop_front() {
    head_ = (head_ + 1) % slots_.size();
    --size_;
    ++removed_;
  }
  Episode& at(std::size_t i) { return slots_[(head_ + i) % slots_.size()]; }
  void clear() {
    removed_ += size_;
    head_ = size_ = 0;
  }

 private:
  std::vector<Episode> slots_;
  std::size_t head_ = 0, size_ = 0;
  std::uint64_t removed_ = 0;
};

// Data bytes of one actor ring. Pace learner with batches_per_update K: room for the next K
// batches while the learner runs on the last K.
std::uint64_t pqt_ring_bytes(const PqtTrainOptions& o) {
  if (o.pace == Pace::kActors) return kActorsPaceRingBytes;
  return std::uint64_t{kLearnerPaceRingBatches} * static_cast<std::uint64_t>(o.learner.batches_per_update) *
         static_cast<std::uint64_t>(o.learner.batch_size) *
         frame_bytes(program_episode_bytes(static_cast<std::uint32_t>(o.learner.max_len)));
}

// Reads this wing's checkpoint section into `learner` and the repetition's counters.
void read_pqt_state(CheckpointReader& in, PqtLearner& learner, std::uint64_t* npe, std::uint64_t* dropped,
                    RepetitionResult* r) {
  ByteReader& b = in.section(kPqtSection);
  pqt_format::SectionHead h = pqt_format::read_section_head(b);
  *npe = h.npe;
  r->num_batches = h.batches;
  *dropped = h.dropped_stale;
  r->best_reward = h.best_reward;
  r->best_code = std::move(h.best_code);
  r->found_solution = h.solved;
  r->code_solution = std::move(h.solution);
  learner.load(b);
  b.expect_end();
}

// Program synthesis as an Algorithm of the run driver.
class PqtAlgorithm final : public Algorithm {
 public:
  explicit PqtAlgorithm(const PqtTrainOptions& o)
      : o_(o),
        T_(o.learner.max_len),
        layout_(o.learner.shape),
        pool_(static_cast<std::size_t>(std::max(kPoolBatches, o.learner.batches_per_update) * o.learner.batch_size),
              T_) {}

  std::uint64_t dropped_stale_total() const { return dropped_total_; }
  std::uint64_t train_lag_max_total() const { return train_lag_max_total_; }

  // --- identity and sizing
  std::string name() const override { return "pqt"; }
  std::uint64_t record_mask() const override { return record_type_bit(kRecordProgramEpisode); }
  std::uint64_t ring_bytes() const override { return pqt_ring_bytes(o_); }
  std::size_t blob_bytes() const override { return channel_blob_bytes(layout_.blob()); }
  const char* budget_key() const override { return "npe"; }

  // --- the work gate: pace learner lets the actors sample max_lag + 1 steps' batches ahead
  // A unit is an actor's batch, fresh_rows() programs; a step takes programs_per_step() of
  // them (more for the first step with experience replay, whose buffer is still empty).
  std::uint64_t units_ahead() const override {
    if (o_.pace != Pace::kLearner) return 0;
    const std::uint64_t unit = records_per_unit();
    return (std::uint64_t{o_.max_lag} + 1) * ((programs_per_step() + unit - 1) / unit);
  }
  std::uint64_t records_per_unit() const override { return static_cast<std::uint64_t>(o_.learner.fresh_rows()); }
  std::uint64_t records_retired() const override { return pool_.removed(); }

  // --- one repetition
  void begin_repetition(std::uint32_t rep) override {
    LearnerOptions lopt = o_.learner;
    lopt.seed = repetition_seed(o_.learner.seed, rep);  // each repetition: a fresh model
    learner_.reset();
    learner_ = std::make_unique<PqtLearner>(lopt);
    r_ = RepetitionResult{};
    r_.global_rep = rep;
    r_.best_reward = kInitialBestReward;
    npe_ = fresh_ = dropped_ = 0;
    last_ = StepStats{};
    pool_.clear();
  }
  std::uint64_t version() const override { return learner_->version(); }

  // Keeps the episode for a step. Pace actors: counts it and notes its reward now; queue
  // offer arrival: offers it to the queue now.
  void on_record(std::uint32_t actor, const RecordView& rec, std::uint64_t version) override {
    ProgramEpisodeView v;
    std::string error;
    if (!decode_program_episode(rec.data, rec.length, static_cast<std::uint32_t>(T_), &v, &error))
      throw std::runtime_error(fmt::format("actor {} sent a bad program record: {}", actor, error));
    ++fresh_;
    const auto n = static_cast<std::int32_t>(v.header.length);
    Episode& e = pool_.push();
    for (std::int32_t t = 0; t < n; ++t) e.tokens[static_cast<std::size_t>(t)] = v.tokens[t];
    std::memcpy(e.log_probs.data(), v.log_probs, static_cast<std::size_t>(n) * sizeof(float));
    e.length = n;
    e.reward = static_cast<float>(v.header.reward);
    e.total_reward = v.header.reward;
    e.correct = v.header.correct != 0;
    e.version = version;
    if (o_.queue_offer == QueueOffer::kArrival && o_.learner.topk_enabled()) {
      const double r = e.total_reward;
      auto& q = learner_->queue();
      if (!q.full() || r > q.min().score) {
        tokens_scratch_.assign(e.tokens.begin(), e.tokens.begin() + n);
        q.push(r, tokens_scratch_);
      }
    }
    if (o_.pace == Pace::kActors) {
      ++npe_;
      note(e);
    }
  }
  // Pace learner: take exactly one step's batches off the rings (the work gate and full rings
  // hold the actors back meanwhile).
  bool wants_records() const override { return o_.pace == Pace::kActors || pool_.size() < programs_per_step(); }
  bool ready() const override {
    return o_.pace == Pace::kLearner ? pool_.size() >= programs_per_step()
                                     : fresh_ >= static_cast<std::size_t>(learner_->fresh_batch_size());
  }
  bool step() override {
    fresh_ = 0;
    // The stop rules per batch: no batch past the budget, none past a solving batch.
    std::size_t n = static_cast<std::size_t>(o_.learner.batches_per_update);
    if (o_.pace == Pace::kLearner && o_.max_npe > 0) {
      const auto want = static_cast<std::uint64_t>(learner_->fresh_batch_size());
      n = std::min<std::size_t>(n, static_cast<std::size_t>((o_.max_npe - std::min(npe_, o_.max_npe) + want - 1) / want));
    }
    batches_.resize(std::max<std::size_t>(n, 1));
    std::size_t built = 0, taken = 0;
    while (taken < n && !(o_.pace == Pace::kLearner && o_.stop_on_success && r_.found_solution)) {
      ++taken;
      // A batch that lost every episode to max_lag is skipped; the step trains on the others.
      if (build_batch(&batches_[built])) ++built;
    }
    if (built == 0) return false;
    batches_.resize(built);
    last_ = learner_->step(batches_);
    r_.num_batches += built;
    return true;
  }
  // Header (the layout's fingerprint) then the parameters, which stay 64-byte aligned.
  void write_blob(std::byte* dst) const override {
    write_blob_header(dst, layout_.blob());
    learner_->write_blob(reinterpret_cast<float*>(dst + sizeof(BlobHeader)));
  }
  std::uint64_t budget_used() const override { return npe_; }
  bool solved() const override { return r_.found_solution; }

  // --- state
  void save(CheckpointWriter& out) const override {
    ByteWriter& w = out.section(kPqtSection);
    pqt_format::write_section_head(
        w, {npe_, r_.num_batches, dropped_, r_.best_reward, r_.best_code, r_.found_solution, r_.code_solution});
    learner_->save(w);
  }
  void load(CheckpointReader& in) override { read_pqt_state(in, *learner_, &npe_, &dropped_, &r_); }

  // --- reporting
  std::vector<std::string> metric_columns() const override {
    return {"rep",       "npe",       "npe_per_s",    "best_reward", "mean_reward", "learner_steps_per_s",
            "lag_p50",   "lag_max",   "queue_max",    "total_loss",  "pg_loss",     "entropy",
            "topk_loss", "grad_norm", "dropped_stale"};
  }
  std::vector<double> metric_row(const DriverTick& t) const override {
    return {static_cast<double>(t.rep),
            static_cast<double>(npe_),
            t.budget_per_s,
            r_.best_reward,
            last_.mean_reward,
            t.updates_per_s,
            static_cast<double>(last_.lag_median),
            static_cast<double>(last_.lag_max),
            last_.queue_max_score,
            last_.total_loss,
            last_.pg_loss,
            last_.entropy,
            last_.topk_loss,
            last_.grad_norm,
            static_cast<double>(dropped_)};
  }
  std::vector<std::pair<std::string, std::string>> progress_fields(const DriverTick& t) const override {
    return {{"rep", fmt::format("{}/{}", t.rep + 1, t.repetitions)},
            {"NPE", fmt::format("{}", npe_)},
            {"NPE/s", fmt::format("{:.0f}", t.budget_per_s)},
            {"best", fmt::format("{:.4f}", r_.best_reward)},
            {"steps/s", fmt::format("{:.1f}", t.updates_per_s)},
            {"lag", fmt::format("{}/{}", last_.lag_median, last_.lag_max)}};
  }
  nlohmann::json result() const override {
    return {{"found_solution", r_.found_solution},     {"code_solution", r_.code_solution},
            {"best_reward", r_.best_reward},           {"best_code", r_.best_code},
            {"num_batches", r_.num_batches},           {"batch_size", o_.learner.batch_size},
            {"mode", train_mode_name(o_.learner.mode)}, {"max_lag", o_.max_lag},
            {"train_lag_max", r_.train_lag_max}};
  }
  std::string describe_result() const override {
    return fmt::format("{} at NPE {} after {} steps; best reward {:.4f}", r_.found_solution ? "solved" : "not solved",
                       npe_, r_.num_batches, r_.best_reward);
  }

 private:
  // Notes an executed program: a new best reward (appended to solutions.txt with the NPE
  // count so far) and the run's first correct program.
  void note(const Episode& e) {
    const double r = e.total_reward;
    const auto n = static_cast<std::size_t>(e.length);
    if (std::round(r * kBestRewardRounding) > std::round(r_.best_reward * kBestRewardRounding)) {
      r_.best_reward = r;
      r_.best_code = program_string(e.tokens.data(), n);
      runfiles::append_solution(fs::path(o_.run_dir) / runfiles::kSolutionsFileName, r_.best_code, r,
                                static_cast<std::int64_t>(npe_));
    }
    if (e.correct && !r_.found_solution) {
      r_.found_solution = true;
      r_.code_solution = program_string(e.tokens.data(), n);
    }
  }

  std::size_t programs_per_step() const {
    return static_cast<std::size_t>(learner_->fresh_batch_size()) * static_cast<std::size_t>(o_.learner.batches_per_update);
  }

  // Fills *out from the pool with the fresh episodes a batch takes (B, less the replayed rows
  // once experience replay has a buffer): the newest (pace actors) or the oldest (pace
  // learner, which counts and notes them here, the whole batch at once as §5.7 does).
  // Episodes past max_lag are dropped from PG steps. False: nothing to train.
  bool build_batch(EpisodeBatch* out) {
    EpisodeBatch& batch = *out;
    const int want = learner_->fresh_batch_size();
    const std::size_t have = pool_.size();
    if (have < static_cast<std::size_t>(want)) return false;
    const std::size_t first = o_.pace == Pace::kActors ? have - static_cast<std::size_t>(want) : 0;
    if (o_.pace == Pace::kLearner) {
      npe_ += static_cast<std::uint64_t>(want);
      for (std::size_t j = 0; j < static_cast<std::size_t>(want); ++j) note(pool_.at(j));
    }
    batch.resize(want, T_);
    int row = 0;
    for (std::size_t j = first; j < first + static_cast<std::size_t>(want); ++j) {
      Episode& e = pool_.at(j);
      const std::uint64_t lag = learner_->version() - std::min(e.version, learner_->version());
      if (o_.learner.pg_enabled() && lag > o_.max_lag) {
        ++dropped_;
        ++dropped_total_;
        continue;
      }
      r_.train_lag_max = std::max(r_.train_lag_max, lag);
      train_lag_max_total_ = std::max(train_lag_max_total_, lag);
      const auto r = static_cast<std::size_t>(row);
      std::copy(e.tokens.begin(), e.tokens.end(), batch.tokens.begin() + static_cast<std::ptrdiff_t>(r * T_));
      std::copy(e.log_probs.begin(), e.log_probs.end(),
                batch.behaviour_log_probs.begin() + static_cast<std::ptrdiff_t>(r * T_));
      batch.lengths[r] = e.length;
      batch.rewards[r] = e.reward;
      batch.policy_versions[r] = e.version;
      ++row;
    }
    if (o_.pace == Pace::kActors) {
      pool_.clear();
    } else {
      for (int k = 0; k < want; ++k) pool_.pop_front();
    }
    if (row == 0) return false;
    batch.resize(row, T_);  // keeps the rows already written
    return true;
  }

  const PqtTrainOptions& o_;
  const int T_;
  PolicyLayout layout_;
  std::unique_ptr<PqtLearner> learner_;
  EpisodePool pool_;
  std::vector<EpisodeBatch> batches_;  // one step's batches_per_update batches
  std::vector<std::int32_t> tokens_scratch_;
  RepetitionResult r_;
  StepStats last_{};
  std::uint64_t npe_ = 0;      // programs this repetition (resumed part included)
  std::uint64_t fresh_ = 0;    // programs since the last step
  std::uint64_t dropped_ = 0;  // this repetition's stale episodes
  std::uint64_t dropped_total_ = 0;
  std::uint64_t train_lag_max_total_ = 0;  // over every repetition of this invocation
};

}  // namespace

std::unique_ptr<PqtLearner> load_pqt_model(CheckpointReader& in, const LearnerOptions& options) {
  auto learner = std::make_unique<PqtLearner>(options);
  std::uint64_t npe = 0, dropped = 0;
  RepetitionResult r;
  read_pqt_state(in, *learner, &npe, &dropped, &r);
  return learner;
}

Pace parse_pace(const std::string& name) {
  if (name == "actors") return Pace::kActors;
  if (name == "learner") return Pace::kLearner;
  throw UsageError(fmt::format("pace '{}': expected actors or learner", name));
}

const char* pace_name(Pace pace) { return pace == Pace::kActors ? "actors" : "learner"; }

QueueOffer parse_queue_offer(const std::string& name) {
  if (name == "batch_best") return QueueOffer::kBatchBest;
  if (name == "arrival") return QueueOffer::kArrival;
  throw UsageError(fmt::format("queue_offer '{}': expected batch_best or arrival", name));
}

const char* queue_offer_name(QueueOffer offer) { return offer == QueueOffer::kBatchBest ? "batch_best" : "arrival"; }

std::unique_ptr<Algorithm> make_pqt_algorithm(const PqtTrainOptions& options) {
  return std::make_unique<PqtAlgorithm>(options);
}

void PqtTrainOptions::validate() const {
  RunSettings::validate();
  learner.validate();
  if (actors < 1 || actors > kMaxActors)
    throw UsageError(fmt::format("actors {}: expected 1 to {}", actors, kMaxActors));
  bf::parse_variant(variant);
  if (learner.batches_per_update > 1 && pace != Pace::kLearner)
    throw UsageError(fmt::format("batches_per_update {} takes whole batches off the rings: expected pace learner",
                                 learner.batches_per_update));
  const std::uint64_t batch_bytes = static_cast<std::uint64_t>(learner.batch_size) *
                                   frame_bytes(program_episode_bytes(static_cast<std::uint32_t>(learner.max_len)));
  const std::uint64_t max_k = kMaxRingCapacity / (kLearnerPaceRingBatches * batch_bytes);
  if (pace == Pace::kLearner && static_cast<std::uint64_t>(learner.batches_per_update) > max_k)
    throw UsageError(fmt::format("batches_per_update {}: expected at most {} with batch_size {} and max_len {} (each "
                                 "actor ring holds {} steps' batches, at most {} bytes)",
                                 learner.batches_per_update, max_k, learner.batch_size, learner.max_len,
                                 kLearnerPaceRingBatches, kMaxRingCapacity));
  // The units in flight stay below the work gate's window (common/work_gate.h): a step takes at
  // most two units per batch (the first step with experience replay).
  const std::uint64_t units_per_lag = 2 * static_cast<std::uint64_t>(learner.batches_per_update);
  const std::uint64_t most_lags = (kMaxUnitsInFlight - 1) / units_per_lag;  // max_lag + 1 may be this at most
  if (pace == Pace::kLearner && most_lags == 0)
    throw UsageError(fmt::format("batches_per_update {}: expected at most {} (the units in flight stay below {})",
                                 learner.batches_per_update, (kMaxUnitsInFlight - 1) / 2, kMaxUnitsInFlight));
  if (pace == Pace::kLearner && std::uint64_t{max_lag} + 1 > most_lags)
    throw UsageError(fmt::format("max_lag {}: expected at most {} with batches_per_update {} (the units in flight "
                                 "stay below {})",
                                 max_lag, most_lags - 1, learner.batches_per_update, kMaxUnitsInFlight));
}

TrainSummary run_pqt_training(const PqtTrainOptions& o) {
  o.validate();
  // Validate the task before any process starts (UsageError lists the closest names).
  bf::ScoreOptions score_options = bf::ScoreOptions::for_variant(bf::parse_variant(o.variant));
  score_options.max_code_length = o.learner.max_len;
  (void)bf::make_task(o.task, score_options);

  DriverOptions d(o);
  d.actors = o.actors;
  d.max_budget = o.max_npe;
  d.seed = o.learner.seed;
  set_torch_threads(static_cast<int>(resolve_learner_threads(o.learner_threads, o.actors)));
  d.identity = {{"task", o.task}, {"max_npe", o.max_npe}};

  PqtAlgorithm algo(o);
  const DriverSummary ds = run_training(algo, d);
  TrainSummary s;
  for (const nlohmann::json& line : ds.results) {
    RepetitionResult r;
    r.global_rep = line.value("global_rep", 0u);
    r.found_solution = line.value("found_solution", false);
    r.npe = line.value("npe", std::uint64_t{0});
    r.code_solution = line.value("code_solution", std::string());
    r.best_reward = line.value("best_reward", kInitialBestReward);
    r.best_code = line.value("best_code", std::string());
    r.num_batches = line.value("num_batches", std::uint64_t{0});
    r.train_lag_max = line.value("train_lag_max", std::uint64_t{0});
    r.seconds = line.value("seconds", 0.0);
    s.repetitions.push_back(r);
  }
  s.npe = ds.budget;
  s.seconds = ds.seconds;
  s.npe_per_s = ds.budget_per_s;
  s.steady_npe_per_s = ds.steady_budget_per_s;
  s.learner_steps = ds.updates;
  s.learner_steps_per_s = ds.updates_per_s;
  s.lag_p50 = ds.lag_p50;
  s.lag_max = ds.lag_max;
  s.dropped_stale = algo.dropped_stale_total();
  s.late_records = ds.late_records;
  s.train_lag_max = algo.train_lag_max_total();
  s.actor_restarts = ds.actor_restarts;
  s.interrupted = ds.interrupted;
  s.already_done = ds.already_done;
  return s;
}

}  // namespace ringrl::learner
