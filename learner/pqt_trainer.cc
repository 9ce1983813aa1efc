#include "learner/pqt_trainer.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/errors.h"
#include "common/program_record.h"
#include "common/records.h"
#include "common/run_segment.h"
#include "common/runfiles/atomic_file.h"
#include "common/runfiles/metrics_csv.h"
#include "common/runfiles/progress.h"
#include "common/runfiles/results_jsonl.h"
#include "common/runfiles/tb_events.h"
#include "common/signals.h"
#include "common/supervisor.h"
#include "envs/bf/scorer.h"
#include "learner/threads.h"

namespace ringrl::learner {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kCheckpointMagic[8] = {'R', 'R', 'L', 'P', 'Q', 'T', 'C', '1'};
constexpr const char* kCheckpointFile = "checkpoint.bin";
constexpr std::uint64_t kActorsPaceRingBytes = std::uint64_t{4} << 20;
constexpr std::uint32_t kLearnerPaceRingBatches = 2;  // ring holds about this many batches
constexpr std::uint32_t kMaxDrainPerRing = 4096;      // records per ring per drain pass
constexpr double kBestRewardRounding = 1e10;          // spec §5.6: compare after rounding to 10 decimals
constexpr double kInitialBestReward = -10.0;
constexpr std::size_t kMaxLagSamples = std::size_t{1} << 22;
constexpr auto kActorHeartbeatTimeout = std::chrono::seconds(60);

double elapsed_s(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

std::uint64_t next_pow2(std::uint64_t x) {
  std::uint64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

// One drained episode, in learner version space.
struct Episode {
  std::vector<std::int32_t> tokens;  // [T]
  std::vector<float> log_probs;      // [T]
  std::int32_t length = 0;
  float reward = 0;
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
  std::size_t capacity() const { return slots_.size(); }
  bool full() const { return size_ == slots_.size(); }
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
  }
  Episode& at(std::size_t i) { return slots_[(head_ + i) % slots_.size()]; }
  void clear() { head_ = size_ = 0; }

 private:
  std::vector<Episode> slots_;
  std::size_t head_ = 0, size_ = 0;
};

struct RepState {
  RepetitionResult result;
  std::uint64_t npe_at_start = 0;  // npe carried over from a checkpoint
  double seconds_before = 0;       // seconds carried over from a checkpoint
};

std::string checkpoint_bytes(const nlohmann::json& meta, const std::string& learner_state) {
  const std::string m = meta.dump();
  std::string out(kCheckpointMagic, sizeof kCheckpointMagic);
  const std::uint64_t ml = m.size(), sl = learner_state.size();
  out.append(reinterpret_cast<const char*>(&ml), sizeof ml);
  out += m;
  out.append(reinterpret_cast<const char*>(&sl), sizeof sl);
  out += learner_state;
  return out;
}

bool read_checkpoint(const fs::path& path, nlohmann::json* meta, std::string* state) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string b = ss.str();
  auto bad = [&](const char* why) { return UsageError(fmt::format("checkpoint {} is damaged: {}", path.string(), why)); };
  if (b.size() < sizeof kCheckpointMagic + 16 || std::memcmp(b.data(), kCheckpointMagic, sizeof kCheckpointMagic) != 0)
    throw bad("bad magic");
  std::size_t p = sizeof kCheckpointMagic;
  std::uint64_t ml = 0, sl = 0;
  std::memcpy(&ml, b.data() + p, sizeof ml);
  p += sizeof ml;
  if (ml > b.size() - p) throw bad("metadata length");
  *meta = nlohmann::json::parse(b.substr(p, ml));
  p += ml;
  if (b.size() - p < sizeof sl) throw bad("state length");
  std::memcpy(&sl, b.data() + p, sizeof sl);
  p += sizeof sl;
  if (sl != b.size() - p) throw bad("state size");
  *state = b.substr(p);
  return true;
}

}  // namespace

void PqtTrainOptions::validate() const {
  learner.validate();
  if (actors < 1 || actors > kMaxActors)
    throw UsageError(fmt::format("actors {}: expected 1 to {}", actors, kMaxActors));
  if (repetitions < 1) throw UsageError(fmt::format("repetitions {}: expected at least 1", repetitions));
  if (pace != "actors" && pace != "learner") throw UsageError(fmt::format("pace '{}': expected actors or learner", pace));
  if (run_dir.empty()) throw UsageError("run directory is empty: expected --run-dir DIR");
  if (max_seconds < 0) throw UsageError(fmt::format("max_seconds {}: expected >= 0", max_seconds));
  if (!(metrics_every_s > 0)) throw UsageError(fmt::format("metrics_every_s {}: expected > 0", metrics_every_s));
  bf::parse_variant(variant);
}

TrainSummary run_pqt_training(const PqtTrainOptions& o) {
  o.validate();
  const int B = o.learner.batch_size;
  const int T = o.learner.max_len;
  // Validate the task before any process starts (UsageError lists the closest names).
  bf::ScoreOptions score_options = bf::ScoreOptions::for_variant(bf::parse_variant(o.variant));
  score_options.max_code_length = T;
  (void)bf::make_task(o.task, score_options);

  const fs::path run_dir(o.run_dir);
  fs::create_directories(run_dir);
  const fs::path results_path = run_dir / runfiles::kResultsFileName;
  const fs::path solutions_path = run_dir / runfiles::kSolutionsFileName;
  const fs::path checkpoint_path = run_dir / kCheckpointFile;
  const nlohmann::json run_identity = {{"task", o.task}, {"max_npe", o.max_npe}, {"max_global_repetitions", o.repetitions}};

  // Resume: skip completed repetitions; a changed budget or repetition count is an error.
  std::set<std::int64_t> done_reps;
  std::uint64_t npe_of_done_reps = 0;  // metrics step = NPE over every repetition so far
  if (fs::exists(results_path)) {
    if (!o.resume)
      throw UsageError(fmt::format("run directory {} already holds results: pass --resume to continue it, or choose another --run-dir",
                                   run_dir.string()));
    const auto records = runfiles::read_json_lines(results_path);
    runfiles::check_consistent(records, run_identity, results_path);
    done_reps = runfiles::completed_values(records);
    for (const auto& r : records) npe_of_done_reps += r.value("npe", std::uint64_t{0});
  }
  nlohmann::json ck_meta;
  std::string ck_state;
  bool have_checkpoint = o.resume && read_checkpoint(checkpoint_path, &ck_meta, &ck_state);
  if (have_checkpoint) {
    for (const char* k : {"task", "max_npe", "max_global_repetitions"})
      if (ck_meta.value(k, nlohmann::json()) != run_identity[k])
        throw UsageError(fmt::format("--resume: checkpoint {} has {}={} but this run has {}", checkpoint_path.string(), k,
                                     ck_meta.value(k, nlohmann::json()).dump(), run_identity[k].dump()));
  }

  TrainSummary summary;
  std::uint32_t first_rep = 0;
  while (first_rep < o.repetitions && done_reps.count(first_rep) != 0) ++first_rep;
  if (first_rep >= o.repetitions) {
    spdlog::info("train: every repetition of {} is already done", run_dir.string());
    return summary;
  }

  install_shutdown_handlers();
  install_crash_handlers();
  set_torch_threads();
  PolicyLayout layout(o.learner.shape);
  const std::size_t blob_floats = layout.num_floats();
  RunLayoutOptions lo;
  lo.num_actors = o.actors;
  lo.weight_capacity = blob_floats * sizeof(float);
  lo.ring_capacity = o.pace == "actors"
                         ? kActorsPaceRingBytes
                         : std::max<std::uint64_t>(4096, next_pow2(kLearnerPaceRingBatches * B *
                                                                   frame_bytes(program_episode_bytes(T))));
  RunSegment seg = RunSegment::create(o.run_id.empty() ? fmt::format("train-{}", getpid()) : o.run_id, lo);
  WeightWriter weights(seg.weights());
  SupervisorOptions so;
  so.executable = o.executable;
  so.heartbeat_timeout = kActorHeartbeatTimeout;
  so.args = [&](std::uint32_t slot) {
    std::vector<std::string> a{"actor", "--kind", "pqt", "--segment", seg.name(), "--slot", std::to_string(slot),
                               "--seed", std::to_string(o.learner.seed * 1000003ULL + slot * 7919ULL + 17)};
    if (!o.config_path.empty()) {
      a.push_back("--config");
      a.push_back(o.config_path);
    }
    return a;
  };
  Supervisor sup(seg, so);
  std::vector<RingReader> readers;
  for (std::uint32_t i = 0; i < o.actors; ++i) readers.emplace_back(seg.ring(i), record_type_bit(kRecordProgramEpisode));

  runfiles::MetricsCsv metrics(run_dir / "metrics.csv",
                               {"rep", "npe", "npe_per_s", "best_reward", "mean_reward", "learner_steps_per_s",
                                "lag_p50", "lag_max", "queue_max", "total_loss", "pg_loss", "entropy", "topk_loss",
                                "grad_norm", "dropped_stale"});
  runfiles::TbWriter tb(run_dir);
  runfiles::ProgressOptions po;
  po.prefix = "train";
  if (o.quiet) po.log_interval_s = 1e9;
  runfiles::Progress progress(po);

  std::vector<std::uint64_t> lags;
  EpisodePool pool(static_cast<std::size_t>(4 * B), T);
  EpisodeBatch batch;
  std::vector<std::int32_t> tokens_scratch;
  const bool pg_on = o.learner.pg_enabled();
  const auto train_t0 = Clock::now();
  Clock::time_point first_episode{};
  std::uint64_t npe_before_first = 0;
  bool actors_started = false;

  for (std::uint32_t rep = first_rep; rep < o.repetitions && !shutdown_requested(); ++rep) {
    if (done_reps.count(rep) != 0) continue;
    LearnerOptions lopt = o.learner;
    lopt.seed = o.learner.seed + rep;  // each repetition: a fresh model
    PqtLearner learner(lopt);
    RepState st;
    st.result.global_rep = rep;
    if (have_checkpoint && ck_meta.value("rep", -1) == static_cast<int>(rep)) {
      learner.load_state(ck_state);
      st.npe_at_start = ck_meta.value("npe", std::uint64_t{0});
      st.seconds_before = ck_meta.value("seconds", 0.0);
      st.result.best_reward = ck_meta.value("best_reward", kInitialBestReward);
      st.result.best_code = ck_meta.value("best_code", std::string());
      st.result.num_batches = ck_meta.value("num_batches", std::uint64_t{0});
      spdlog::info("train: resuming repetition {} at NPE {} (learner version {})", rep, st.npe_at_start, learner.version());
    }
    have_checkpoint = false;
    std::uint64_t npe = st.npe_at_start;
    std::vector<float> blob(blob_floats);
    learner.write_blob(blob.data());
    const std::uint64_t floor_version = weights.publish(blob.data(), blob.size() * sizeof(float));
    // Channel version v corresponds to learner version v - base (one publish per step).
    const std::uint64_t base = floor_version - learner.version();
    if (!actors_started) {
      sup.start();
      actors_started = true;
      seg.control().phase.store(static_cast<std::uint32_t>(RunPhase::kRunning));
    }
    pool.clear();
    const auto rep_t0 = Clock::now();
    auto last_metrics = rep_t0, last_checkpoint = rep_t0;
    std::uint64_t fresh = 0, dropped_stale = 0, steps_at_metrics = learner.version(), npe_at_metrics = npe;
    StepStats last{};
    bool stop_rep = false;

    auto rep_seconds = [&] { return st.seconds_before + elapsed_s(rep_t0); };
    auto write_checkpoint = [&] {
      const nlohmann::json meta = {{"rep", rep}, {"npe", npe}, {"seconds", rep_seconds()},
                                   {"best_reward", st.result.best_reward}, {"best_code", st.result.best_code},
                                   {"num_batches", st.result.num_batches}, {"task", o.task}, {"max_npe", o.max_npe},
                                   {"max_global_repetitions", o.repetitions}};
      runfiles::write_file_atomic(checkpoint_path, checkpoint_bytes(meta, learner.save_state()));
      last_checkpoint = Clock::now();
    };
    // Takes one episode off a ring into the pool; counts, offers to the queue, tracks best.
    auto take = [&](std::uint32_t ring, const RecordView& rec) {
      if (rec.version < floor_version) return;  // the previous repetition's policy
      ProgramEpisodeView v;
      std::string error;
      if (!decode_program_episode(rec.data, rec.length, static_cast<std::uint32_t>(T), &v, &error))
        throw std::runtime_error(fmt::format("actor {} sent a bad program record: {}", ring, error));
      if (first_episode == Clock::time_point{}) {
        first_episode = Clock::now();
        npe_before_first = summary.npe;
      }
      ++npe;
      ++fresh;
      ++summary.npe;
      const std::uint64_t lv = rec.version - base;
      const std::uint64_t lag = learner.version() - std::min(lv, learner.version());
      if (lags.size() < kMaxLagSamples) lags.push_back(lag);
      const auto n = static_cast<std::int32_t>(v.header.length);
      Episode& e = pool.push();
      for (std::int32_t t = 0; t < n; ++t) e.tokens[static_cast<std::size_t>(t)] = v.tokens[t];
      std::memcpy(e.log_probs.data(), v.log_probs, static_cast<std::size_t>(n) * sizeof(float));
      e.length = n;
      e.reward = static_cast<float>(v.header.reward);
      e.version = lv;
      const double r = v.header.reward;
      if (lopt.topk_enabled()) {
        auto& q = learner.queue();
        if (!q.full() || r > q.min().score) {
          tokens_scratch.assign(e.tokens.begin(), e.tokens.begin() + n);
          q.push(r, tokens_scratch);
        }
      }
      if (std::round(r * kBestRewardRounding) > std::round(st.result.best_reward * kBestRewardRounding)) {
        st.result.best_reward = r;
        st.result.best_code = program_string(e.tokens.data(), static_cast<std::size_t>(n));
        runfiles::append_solution(solutions_path, st.result.best_code, r, static_cast<std::int64_t>(npe));
      }
      if (v.header.correct != 0 && !st.result.found_solution) {
        st.result.found_solution = true;
        st.result.code_solution = program_string(e.tokens.data(), static_cast<std::size_t>(n));
      }
    };
    auto drain = [&](bool bounded) {
      std::uint64_t got = 0;
      for (std::uint32_t i = 0; i < readers.size(); ++i) {
        RecordView rec;
        for (std::uint32_t k = 0; k < kMaxDrainPerRing; ++k) {
          if (bounded && pool.size() >= static_cast<std::size_t>(learner.fresh_batch_size())) return got;
          const PeekStatus ps = readers[i].peek(rec);
          if (ps == PeekStatus::kEmpty) break;
          if (ps == PeekStatus::kCorrupt)
            throw std::runtime_error(fmt::format("actor {} ring is corrupt: {}", i, readers[i].error()));
          take(i, rec);
          readers[i].release();
          ++got;
        }
      }
      return got;
    };
    // Fills `batch` from the pool with the fresh episodes a step takes (B, less the replayed
    // rows once experience replay has a buffer): the newest (pace actors) or the oldest (pace
    // learner).
    auto build_batch = [&]() -> bool {
      const int want = learner.fresh_batch_size();
      const std::size_t have = pool.size();
      if (have < static_cast<std::size_t>(want)) return false;
      const std::size_t first = o.pace == "actors" ? have - static_cast<std::size_t>(want) : 0;
      batch.resize(want, T);
      int row = 0;
      for (std::size_t j = first; j < first + static_cast<std::size_t>(want); ++j) {
        Episode& e = pool.at(j);
        const std::uint64_t lag = learner.version() - std::min(e.version, learner.version());
        if (pg_on && lag > o.max_policy_lag) {
          ++dropped_stale;
          ++summary.dropped_stale;
          continue;
        }
        const auto r = static_cast<std::size_t>(row);
        std::copy(e.tokens.begin(), e.tokens.end(), batch.tokens.begin() + static_cast<std::ptrdiff_t>(r * T));
        std::copy(e.log_probs.begin(), e.log_probs.end(), batch.behaviour_log_probs.begin() + static_cast<std::ptrdiff_t>(r * T));
        batch.lengths[r] = e.length;
        batch.rewards[r] = e.reward;
        batch.policy_versions[r] = e.version;
        ++row;
      }
      if (o.pace == "actors") {
        pool.clear();
      } else {
        for (int k = 0; k < want; ++k) pool.pop_front();
      }
      if (row == 0) return false;
      batch.resize(row, T);  // keeps the rows already written
      return true;
    };

    Backoff idle;
    while (!stop_rep) {
      if (shutdown_requested()) break;
      const bool learner_pace = o.pace == "learner";
      const std::uint64_t got = drain(learner_pace);
      const auto want = static_cast<std::size_t>(learner.fresh_batch_size());
      const bool ready = learner_pace ? pool.size() >= want : fresh >= want;
      if (st.result.found_solution && o.stop_on_success) stop_rep = true;
      if (o.max_npe > 0 && npe >= o.max_npe) stop_rep = true;
      if (o.max_seconds > 0 && rep_seconds() >= o.max_seconds) stop_rep = true;
      if (ready && !stop_rep && build_batch()) {
        fresh = 0;
        last = learner.step(batch);
        ++st.result.num_batches;
        ++summary.learner_steps;
        learner.write_blob(blob.data());
        weights.publish(blob.data(), blob.size() * sizeof(float));
        seg.control().learner_steps.fetch_add(1, std::memory_order_relaxed);
        idle.reset();
      } else if (got == 0) {
        idle.pause();
      }
      seg.control().npe.store(npe, std::memory_order_relaxed);
      if (sup.poll() == 0 && sup.all_failed())
        throw std::runtime_error("every actor failed and used up its restarts; see the log above");
      const auto now = Clock::now();
      if (std::chrono::duration<double>(now - last_metrics).count() >= o.metrics_every_s) {
        const double dt = std::chrono::duration<double>(now - last_metrics).count();
        const double npe_rate = static_cast<double>(npe - npe_at_metrics) / dt;
        const double step_rate = static_cast<double>(learner.version() - steps_at_metrics) / dt;
        const auto step = static_cast<std::int64_t>(npe_of_done_reps + npe);
        const std::vector<std::pair<std::string, double>> row{
            {"rep", rep}, {"npe", static_cast<double>(npe)}, {"npe_per_s", npe_rate},
            {"best_reward", st.result.best_reward}, {"mean_reward", last.mean_reward},
            {"learner_steps_per_s", step_rate}, {"lag_p50", static_cast<double>(last.lag_median)},
            {"lag_max", static_cast<double>(last.lag_max)}, {"queue_max", last.queue_max_score},
            {"total_loss", last.total_loss}, {"pg_loss", last.pg_loss}, {"entropy", last.entropy},
            {"topk_loss", last.topk_loss}, {"grad_norm", last.grad_norm},
            {"dropped_stale", static_cast<double>(dropped_stale)}};
        metrics.write_named_row(step, elapsed_s(train_t0), row);
        for (const auto& [k, v] : row)
          if (k != "rep") tb.add_scalar("train/" + k, step, static_cast<float>(v));
        tb.flush();
        progress.update({{"rep", fmt::format("{}/{}", rep + 1, o.repetitions)},
                         {"NPE", fmt::format("{}", npe)},
                         {"NPE/s", fmt::format("{:.0f}", npe_rate)},
                         {"best", fmt::format("{:.4f}", st.result.best_reward)},
                         {"steps/s", fmt::format("{:.1f}", step_rate)},
                         {"lag", fmt::format("{}/{}", last.lag_median, last.lag_max)}});
        last_metrics = now;
        npe_at_metrics = npe;
        steps_at_metrics = learner.version();
      }
      if (o.checkpoint_every_s > 0 &&
          std::chrono::duration<double>(now - last_checkpoint).count() >= o.checkpoint_every_s)
        write_checkpoint();
    }
    st.result.npe = npe;
    st.result.seconds = rep_seconds();
    if (shutdown_requested() && !stop_rep) {
      write_checkpoint();
      summary.interrupted = true;
      spdlog::warn("train: interrupted (signal {}); checkpoint written to {}; continue with --resume",
                   shutdown_signal(), checkpoint_path.string());
      break;
    }
    const nlohmann::json line = {{"found_solution", st.result.found_solution}, {"npe", npe},
                                 {"code_solution", st.result.code_solution}, {"best_reward", st.result.best_reward},
                                 {"best_code", st.result.best_code}, {"num_batches", st.result.num_batches},
                                 {"task", o.task}, {"max_npe", o.max_npe}, {"global_rep", rep},
                                 {"max_global_repetitions", o.repetitions}, {"batch_size", B},
                                 {"mode", train_mode_name(o.learner.mode)}, {"seconds", st.result.seconds}};
    runfiles::append_json_line(results_path, line);
    std::error_code ec;
    fs::remove(checkpoint_path, ec);  // the next repetition starts fresh
    summary.repetitions.push_back(st.result);
    npe_of_done_reps += npe;
    progress.finish();
    spdlog::info("train: repetition {}/{}: {} at NPE {} after {} steps, {:.1f} s; best reward {:.4f}", rep + 1,
                 o.repetitions, st.result.found_solution ? "solved" : "not solved", npe, st.result.num_batches,
                 st.result.seconds, st.result.best_reward);
  }
  progress.finish();
  summary.seconds = elapsed_s(train_t0);
  summary.npe_per_s = summary.seconds > 0 ? static_cast<double>(summary.npe) / summary.seconds : 0;
  if (first_episode != Clock::time_point{}) {
    const double steady = elapsed_s(first_episode);
    summary.steady_npe_per_s = steady > 0 ? static_cast<double>(summary.npe - npe_before_first - 1) / steady : 0;
  }
  summary.learner_steps_per_s = summary.seconds > 0 ? static_cast<double>(summary.learner_steps) / summary.seconds : 0;
  seg.control().phase.store(static_cast<std::uint32_t>(RunPhase::kDraining));
  sup.stop();
  summary.actor_restarts = sup.total_restarts();
  if (!lags.empty()) {
    std::sort(lags.begin(), lags.end());
    summary.lag_p50 = lags[lags.size() / 2];
    summary.lag_max = lags.back();
  }
  return summary;
}

}  // namespace ringrl::learner
