#include "learner/run_driver.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/actor_pool.h"
#include "common/backoff.h"
#include "common/errors.h"
#include "common/run_segment.h"
#include "common/runfiles/atomic_file.h"
#include "common/runfiles/metrics_csv.h"
#include "common/runfiles/progress.h"
#include "common/runfiles/results_jsonl.h"
#include "common/runfiles/run_files.h"
#include "common/runfiles/tb_events.h"
#include "common/seeds.h"
#include "common/signals.h"
#include "common/supervisor.h"
#include "common/work_gate.h"
#include "learner/local_actors.h"
#include "learner/gated_work.h"
#include "common/process_modes.h"

namespace ringrl::learner {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kMinRingBytes = 4096;                 // smallest ring the driver lays out
constexpr std::size_t kMaxLagSamples = std::size_t{1} << 22;  // lag samples kept for the summary
constexpr const char* kRunSection = "run";  // the driver's checkpoint section
constexpr std::uint64_t kMaxRunMetaBytes = std::uint64_t{1} << 20;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::uint64_t next_pow2(std::uint64_t x) {
  std::uint64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

// p50 and max of `v` (sorted in place); zeros when empty.
std::pair<std::uint64_t, std::uint64_t> median_max(std::vector<std::uint64_t>& v) {
  if (v.empty()) return {0, 0};
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.back()};
}

// Checks that a checkpoint's identity matches this run's.
void check_identity(const nlohmann::json& saved, const nlohmann::json& identity, const fs::path& file) {
  for (const auto& [key, value] : identity.items()) {
    const nlohmann::json got = saved.value(key, nlohmann::json());
    if (got != value)
      throw UsageError(fmt::format("--resume: checkpoint {} has {}={} but this run has {}", file.string(), key,
                                   got.dump(), value.dump()));
  }
}

// Writes one checkpoint file: the driver's "run" section, then the algorithm's.
void write_state(const fs::path& path, const Algorithm& algo, const nlohmann::json& run_meta) {
  CheckpointWriter out(path, algo.name());
  out.section(kRunSection).put_string(run_meta.dump());
  algo.save(out);
  out.commit();
}

// The run directory: what earlier invocations finished (results.jsonl), the checkpoint to
// resume from, the run's identity, and the files a repetition leaves (checkpoint, final model,
// results line).
class RunDirectory {
 public:
  RunDirectory(const DriverOptions& o, const std::string& budget_key, const std::string& algorithm)
      : o_(o), dir_(o.run_dir), budget_key_(budget_key) {
    fs::create_directories(dir_);
    identity_ = o.identity;
    identity_["max_global_repetitions"] = o.repetitions;
    const fs::path results = results_path();
    // Resume: skip completed repetitions; a changed identity is an error.
    if (fs::exists(results)) {
      if (!o.resume)
        throw UsageError(fmt::format(
            "run directory {} already holds results: pass --resume to continue it, or choose another --run-dir",
            dir_.string()));
      const auto records = runfiles::read_json_lines(results);
      runfiles::check_consistent(records, identity_, results);
      done_ = runfiles::completed_values(records);
      for (const auto& r : records) budget_of_done_ += r.value(budget_key_, std::uint64_t{0});
    }
    if (o.resume && fs::exists(checkpoint_path())) {
      checkpoint_ = std::make_unique<CheckpointReader>(checkpoint_path(), algorithm);
      ByteReader& meta = checkpoint_->section(kRunSection);
      try {
        checkpoint_meta_ = nlohmann::json::parse(meta.get_string(kMaxRunMetaBytes));
      } catch (const nlohmann::json::exception& e) {
        meta.fail(std::string("run metadata is not JSON: ") + e.what());
      }
      check_identity(checkpoint_meta_, identity_, checkpoint_path());
    }
  }

  const fs::path& path() const { return dir_; }
  fs::path results_path() const { return dir_ / runfiles::kResultsFileName; }
  fs::path checkpoint_path() const { return dir_ / runfiles::kCheckpointFileName; }
  fs::path final_model_path(std::uint32_t rep) const { return dir_ / runfiles::final_model_file_name(rep); }
  std::size_t done_count() const { return done_.size(); }
  /// Budget of the repetitions done (the metrics step counts budget over every repetition).
  std::uint64_t budget_of_done() const { return budget_of_done_; }

  /// A repetition this invocation runs: not done (and the only one, with only_repetition).
  bool to_run(std::uint32_t rep) const {
    return done_.count(rep) == 0 && (o_.only_repetition < 0 || rep == o_.only_repetition);
  }
  std::uint32_t first_to_run() const {
    std::uint32_t rep = 0;
    while (rep < o_.repetitions && !to_run(rep)) ++rep;
    return rep;
  }

  /// Loads the checkpoint into `algo` when it is repetition `rep`'s; returns the seconds the
  /// repetition had run (0 without one). The checkpoint is read once, by the first repetition.
  double resume(std::uint32_t rep, Algorithm& algo) {
    double seconds = 0;
    if (checkpoint_ && checkpoint_meta_.value("rep", -1) == static_cast<int>(rep)) {
      algo.load(*checkpoint_);
      seconds = checkpoint_meta_.value("seconds", 0.0);
      spdlog::info("train: resuming repetition {} at {} {} (learner version {})", rep, algo.budget_used(),
                   budget_key_, algo.version());
    }
    checkpoint_.reset();
    return seconds;
  }

  /// The driver's "run" section of repetition `rep`'s state after `seconds`.
  nlohmann::json run_meta(std::uint32_t rep, const Algorithm& algo, double seconds, bool final_model) const {
    nlohmann::json m = identity_;
    m["rep"] = rep;
    m[budget_key_] = algo.budget_used();
    m["seconds"] = seconds;
    m["version"] = algo.version();
    m["final"] = final_model;
    return m;
  }
  void write_checkpoint(std::uint32_t rep, const Algorithm& algo, double seconds) const {
    write_state(checkpoint_path(), algo, run_meta(rep, algo, seconds, false));
  }

  /// Repetition `rep` is done: its final model, its results line (returned), no checkpoint.
  nlohmann::json finish(std::uint32_t rep, const Algorithm& algo, double seconds) {
    write_state(final_model_path(rep), algo, run_meta(rep, algo, seconds, true));
    nlohmann::json line = algo.result();
    for (const auto& [k, v] : identity_.items()) line[k] = v;
    line["global_rep"] = rep;
    line[budget_key_] = algo.budget_used();
    line["seconds"] = seconds;
    // What every consumer of results lines prints, whatever the algorithm (the spread, tune).
    line["solved"] = algo.solved();
    line["summary"] = algo.describe_result();
    line["budget_key"] = budget_key_;
    runfiles::append_json_line(results_path(), line);
    std::error_code ec;
    fs::remove(checkpoint_path(), ec);  // the next repetition starts fresh
    budget_of_done_ += algo.budget_used();
    return line;
  }

 private:
  const DriverOptions& o_;
  fs::path dir_;
  std::string budget_key_;
  nlohmann::json identity_;
  std::set<std::int64_t> done_;
  std::uint64_t budget_of_done_ = 0;
  std::unique_ptr<CheckpointReader> checkpoint_;
  nlohmann::json checkpoint_meta_;
};

// The run's actor sources in the driver's order (its own pool first), called alike. The
// sources start with the first publish(), each with its first slot, once the publication is on
// the driver's channel; poll() visits them round-robin, one source later on each pass, so that
// an algorithm that takes only so many records hears every source in turn.
class SourceList {
 public:
  SourceList(std::vector<ActorSource*> sources, SourcePlan plan) : sources_(std::move(sources)), plan_(std::move(plan)) {}

  std::uint64_t poll(const ActorSource::Take& take) {
    const std::size_t n = sources_.size(), first = next_++ % n;
    std::uint64_t got = 0;
    for (std::size_t k = 0; k < n; ++k) got += sources_[(first + k) % n]->poll(take);
    return got;
  }
  void publish(const std::byte* blob, std::size_t bytes, std::uint64_t channel_version) {
    if (!started_) {
      for (ActorSource* s : sources_) {
        s->start(plan_);
        plan_.first_slot += s->slots();
      }
      started_ = true;
    }
    for (ActorSource* s : sources_) s->publish(blob, bytes, channel_version);
  }
  void budget(std::uint64_t used) {
    for (ActorSource* s : sources_) s->budget(used);
  }
  /// Participant k's permits are `permits[k]` (numbered over every source, in order).
  void grant(const std::vector<std::uint64_t>& permits) {
    std::uint32_t first = 0;
    for (ActorSource* s : sources_) {
      s->grant(permits.data() + first);
      first += s->participants();
    }
  }
  void check() {
    for (ActorSource* s : sources_) s->check();
  }
  /// Units dead actors held, their participants numbered over every source.
  void lost_units(std::vector<LostUnit>& out) {
    std::uint32_t first = 0;
    for (ActorSource* s : sources_) {
      const std::size_t from = out.size();
      s->lost_units(out);
      for (std::size_t k = from; k < out.size(); ++k) out[k].participant += first;
      first += s->participants();
    }
  }
  /// The participant (0-based over every source) whose actors hold slot `slot`.
  std::uint32_t participant_of(std::uint32_t slot) const {
    std::uint32_t first_slot = 0, first = 0;
    for (const ActorSource* s : sources_) {
      const std::uint32_t n = s->slots(), p = s->participants();
      if (slot < first_slot + n) return first + (slot - first_slot) / std::max<std::uint32_t>(1, n / p);
      first_slot += n;
      first += p;
    }
    return first - 1;
  }
  /// Stops the sources, the last first: the other nodes hear of the stop before this machine's
  /// actors are stopped (which may take seconds).
  void stop() {
    for (auto s = sources_.rbegin(); s != sources_.rend(); ++s) (*s)->stop();
  }
  std::vector<SourceStats> stats() const {
    std::vector<SourceStats> out;
    for (const ActorSource* s : sources_)
      for (SourceStats& n : s->stats()) out.push_back(std::move(n));
    return out;
  }

 private:
  std::vector<ActorSource*> sources_;
  SourcePlan plan_;
  std::size_t next_ = 0;
  bool started_ = false;
};

// Stops a source when it goes out of scope, on every way out (an error is logged, not thrown).
struct StopOnExit {
  ActorSource* source;
  ~StopOnExit() {
    if (source == nullptr) return;
    try {
      source->stop();
    } catch (const std::exception& e) {
      spdlog::warn("train: stopping the actors: {}", e.what());
    }
  }
};

// The metrics of a run: a row of metrics.csv and TensorBoard scalars every metrics_every_s,
// with the algorithm's columns, the lag of the records since the last row and, in a run across
// nodes, each node's records per second (node0: rank 0's own actors); and the progress line.
class MetricsReporter {
 public:
  /// `nodes`: the participants that get a records/s column (0: none, a run on one machine).
  MetricsReporter(const DriverOptions& o, const Algorithm& algo, const fs::path& run_dir, std::uint32_t nodes)
      : o_(o),
        columns_(with_node_columns(algo.metric_columns(), nodes)),
        algo_columns_(algo.metric_columns().size()),
        node_records_(nodes, 0),
        metrics_(run_dir / runfiles::kMetricsFileName, columns_),
        tb_(run_dir),
        progress_(progress_options(o)) {}

  /// A record made `lag` learner versions ago was taken.
  void lag(std::uint64_t lag) {
    if (lags_.size() < kMaxLagSamples) lags_.push_back(lag);
  }
  /// A repetition starts: the rates count from here.
  void begin(const Algorithm& algo, Clock::time_point now) {
    last_ = now;
    budget_at_ = algo.budget_used();
    version_at_ = algo.version();
  }
  /// Writes a row when metrics_every_s has passed since the last.
  /// `nodes`: every participant's counts (SourceList::stats()).
  void maybe_report(Clock::time_point now, std::uint32_t rep, const Algorithm& algo, double rep_seconds,
                    std::uint64_t budget_of_done, double run_seconds, const std::vector<SourceStats>& nodes) {
    const double dt = std::chrono::duration<double>(now - last_).count();
    if (dt < o_.metrics_every_s) return;
    DriverTick tick;
    tick.rep = rep;
    tick.repetitions = o_.repetitions;
    tick.budget = algo.budget_used();
    tick.budget_per_s = static_cast<double>(tick.budget - budget_at_) / dt;
    tick.updates_per_s = static_cast<double>(algo.version() - version_at_) / dt;
    std::tie(tick.lag_p50, tick.lag_max) = median_max(lags_);
    tick.seconds = rep_seconds;
    lags_.clear();
    const auto step = static_cast<std::int64_t>(budget_of_done + tick.budget);
    const std::vector<double> row = algo.metric_row(tick);
    std::vector<std::pair<std::string, double>> named;
    for (std::size_t c = 0; c < algo_columns_ && c < row.size(); ++c) named.emplace_back(columns_[c], row[c]);
    for (std::size_t k = 0; k < nodes.size() && k < node_records_.size(); ++k) {  // records/s since the last row
      named.emplace_back(columns_[algo_columns_ + k], static_cast<double>(nodes[k].records - node_records_[k]) / dt);
      node_records_[k] = nodes[k].records;
    }
    metrics_.write_named_row(step, run_seconds, named);
    for (const auto& [k, v] : named)
      if (k != "rep") tb_.add_scalar("train/" + k, step, static_cast<float>(v));
    tb_.flush();
    progress_.update(algo.progress_fields(tick));
    begin(algo, now);
  }
  void finish() { progress_.finish(); }

 private:
  static std::vector<std::string> with_node_columns(std::vector<std::string> columns, std::uint32_t nodes) {
    for (std::uint32_t k = 0; k < nodes; ++k) columns.push_back(fmt::format("node{}_records_per_s", k));
    return columns;
  }
  static runfiles::ProgressOptions progress_options(const DriverOptions& o) {
    runfiles::ProgressOptions po;
    po.prefix = "train";
    if (o.quiet) po.log_interval_s = 1e9;
    return po;
  }

  const DriverOptions& o_;
  std::vector<std::string> columns_;
  std::size_t algo_columns_;
  std::vector<std::uint64_t> node_records_;  // each node's records at the last row
  runfiles::MetricsCsv metrics_;
  runfiles::TbWriter tb_;
  runfiles::Progress progress_;
  std::vector<std::uint64_t> lags_;  // records since the last row
  Clock::time_point last_{};
  std::uint64_t budget_at_ = 0, version_at_ = 0;
};

}  // namespace


void RunSettings::validate() const {
  if (run_dir.empty()) throw UsageError("run directory is empty: expected --run-dir DIR");
  if (repetitions < 1) throw UsageError(fmt::format("repetitions {}: expected at least 1", repetitions));
  if (!(max_seconds >= 0)) throw UsageError(fmt::format("max_seconds {}: expected >= 0", max_seconds));
  if (!(metrics_every_s > 0)) throw UsageError(fmt::format("metrics_every_s {}: expected > 0", metrics_every_s));
  if (!(unit_timeout_s > 0)) throw UsageError(fmt::format("unit_timeout_s {}: expected > 0", unit_timeout_s));
  if (actor_nice < 0 || actor_nice > 19) throw UsageError(fmt::format("actor_nice {}: expected 0 to 19", actor_nice));
  if (only_repetition >= static_cast<std::int64_t>(repetitions))
    throw UsageError(fmt::format("only repetition {}: expected below repetitions {}", only_repetition, repetitions));
}

void DriverOptions::validate() const {
  RunSettings::validate();
  if (actors < 1 || actors > kMaxActors)
    throw UsageError(fmt::format("actors {}: expected 1 to {}", actors, kMaxActors));
  if (!identity.is_object()) throw UsageError("run identity must be a JSON object");
}

DriverSummary run_training(Algorithm& algo, const DriverOptions& o) {
  o.validate();
  const std::string budget_key = algo.budget_key();
  RunDirectory dir(o, budget_key, algo.name());
  DriverSummary summary;
  const std::uint32_t first_rep = dir.first_to_run();
  if (first_rep >= o.repetitions) {
    spdlog::info("train: every repetition of {} is already done ({} of {}); nothing to resume", dir.path().string(),
                 o.only_repetition < 0 ? dir.done_count() : 1, o.only_repetition < 0 ? o.repetitions : 1);
    summary.already_done = true;
    return summary;
  }

  install_shutdown_handlers();
  install_crash_handlers();
  flush_subnormals();
  keep_freed_memory();

  // The run's actor sources (learner/actor_source.h): this machine's pool first, then the
  // other nodes of a run across nodes; each participant after the first runs per_node actors.
  const std::uint32_t per_node = algo.actors_per_node(o.actors);
  const std::uint32_t participants = 1 + (o.remote ? o.remote->participants() : 0);
  if (participants > 1) algo.add_remote_slots(o.actors, (participants - 1) * per_node);
  // The other nodes are told to stop on every way out: the normal end stops every source, the
  // nodes first (SourceList::stop); an error unwinds through this guard.
  StopOnExit others{o.remote};
  // The pool: the segment (one ring per actor, the weight channel sized for the blob), the
  // supervisor, the drain and the version map (common/actor_pool.h).
  RunLayoutOptions lo;
  lo.num_actors = o.actors;
  lo.weight_capacity = algo.blob_bytes();
  lo.ring_capacity = next_pow2(std::max(kMinRingBytes, algo.ring_bytes()));
  const std::uint64_t per_unit = std::max<std::uint64_t>(1, algo.records_per_unit());
  ActorPoolOptions po_actors;
  po_actors.run_id = o.run_id.empty() ? fmt::format("train-{}", getpid()) : o.run_id;
  po_actors.layout = lo;
  po_actors.record_mask = algo.record_mask();
  po_actors.executable = o.executable;
  // The launch of actor slot `slot` (remote slots too: a node replaces segment and config).
  po_actors.launch = [&](std::uint32_t slot) {
    ActorLaunch launch;
    launch.kind = algo.name();
    launch.slot = slot;
    launch.seed = actor_seed(o.seed, slot);
    launch.config_path = o.config_path;
    launch.nice = o.actor_nice;
    algo.fill_launch(launch);
    return launch;
  };
  ActorPool pool(po_actors);
  LocalActors local(pool);
  SourcePlan plan;
  plan.ring_capacity = lo.ring_capacity;
  plan.blob_bytes = lo.weight_capacity;
  plan.record_mask = algo.record_mask();
  plan.max_record_bytes = max_record_bytes_for(lo.ring_capacity);
  plan.actors_per_node = per_node;
  plan.budget_counter = budget_key;
  plan.launch = [&](std::uint32_t slot) { return pool.launch(slot); };
  SourceList sources(o.remote ? std::vector<ActorSource*>{&local, o.remote} : std::vector<ActorSource*>{&local}, plan);

  // The work gate (learner/gated_work.h): for an algorithm that bounds its lag, units are
  // dealt to the participants with room, two per actor (the one it works on and the one
  // waiting in its ring), and reach the algorithm in ticket order. Records the driver discards
  // (made with an earlier repetition's weights) retire as they pass. Tickets count from 0 in
  // every invocation (each participant's claim counter starts with its segment).
  std::vector<std::uint32_t> room(participants, 2 * per_node);
  room[0] = 2 * o.actors;
  GatedWork gate(room, per_unit,
                 std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.unit_timeout_s)));
  const std::uint64_t retired_before = algo.records_retired();
  std::uint64_t discarded = 0;
  std::vector<std::uint64_t> granted(participants, 0);
  std::vector<LostUnit> lost;
  bool gated = false;  // this repetition's algorithm bounds its lag
  auto update_gate = [&] {
    const std::uint64_t ahead = algo.units_ahead();
    if (ahead >= kMaxUnitsInFlight)
      throw UsageError(fmt::format("the work gate lets actors sample {} units ahead: expected fewer than {} (a smaller "
                                   "max_lag or batches_per_update)",
                                   ahead, kMaxUnitsInFlight));
    lost.clear();
    sources.lost_units(lost);
    const std::vector<std::uint64_t> permits =
        ahead == 0 ? std::vector<std::uint64_t>(participants, kUnlimitedWork)
                   : gate.permits(lost, algo.records_retired() - retired_before + discarded, ahead);
    if (permits != granted) {
      granted = permits;  // after the publication they allow
      sources.grant(permits);
    }
  };

  if (participants > 1) {  // the nodes of the run, beside its metrics
    nlohmann::json nodes = {{"actors_per_node", per_node}, {"nodes", participants}};
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    nodes["learner_host"] = host;
    const std::vector<SourceStats> stats = sources.stats();
    for (std::size_t k = 1; k < stats.size(); ++k) nodes["actor_nodes"].push_back(stats[k].name);
    runfiles::write_file_atomic(dir.path() / runfiles::kNodesFileName, nodes.dump(2) + "\n");
  }
  MetricsReporter reporter(o, algo, dir.path(), participants > 1 ? participants : 0);
  std::vector<std::uint64_t> lags;  // every record of this invocation
  std::vector<std::byte> blob(algo.blob_bytes());
  const auto train_t0 = Clock::now();
  Clock::time_point first_record{};
  std::uint64_t budget_before_first = 0;
  // Budget used by this invocation: completed repetitions plus the running one's progress
  // (algorithms may count it on arrival, PQT, or when a record enters training, HIRO).
  std::uint64_t budget_done = 0, rep_budget_start = 0;
  bool in_rep = false;
  auto budget_now = [&] { return budget_done + (in_rep ? algo.budget_used() - rep_budget_start : 0); };
  // Every publish goes on the pool's channel, which numbers it and stamps it with the learner
  // version, then to every source.
  auto publish = [&] {
    algo.write_blob(blob.data());
    sources.publish(blob.data(), blob.size(), pool.publish(blob.data(), blob.size(), algo.version()));
  };

  for (std::uint32_t rep = first_rep; rep < o.repetitions && !shutdown_requested(); ++rep) {
    if (!dir.to_run(rep)) continue;
    algo.begin_repetition(rep);
    const double seconds_before = dir.resume(rep, algo);
    rep_budget_start = algo.budget_used();
    in_rep = true;

    // The first publish of the repetition is the floor: records made before it belong to the
    // previous repetition. The sources start with the run's first (SourceList).
    pool.begin_epoch();
    publish();
    update_gate();

    const auto rep_t0 = Clock::now();
    auto last_checkpoint = rep_t0;
    reporter.begin(algo, rep_t0);
    bool stop_rep = false;
    auto rep_seconds = [&] { return seconds_before + seconds_since(rep_t0); };
    auto write_checkpoint = [&] {
      dir.write_checkpoint(rep, algo, rep_seconds());
      last_checkpoint = Clock::now();
    };
    // Feeds one record of actor `slot`, made with channel version `rec.version`, to the
    // algorithm: maps the version, keeps the lag, or discards an earlier repetition's. Returns
    // false (the record stays where it is) while the algorithm wants no more.
    auto feed = [&](std::uint32_t slot, const RecordView& rec) {
      if (!algo.wants_records()) return false;
      const std::optional<std::uint64_t> stamp = pool.stamp_of(rec.version);
      if (!stamp) {
        ++discarded;  // made with an earlier repetition's weights
        return true;
      }
      const std::uint64_t made_with = *stamp;
      if (first_record == Clock::time_point{}) {
        first_record = Clock::now();
        budget_before_first = budget_now();
      }
      try {
        algo.on_record(slot, rec, made_with);
      } catch (const std::runtime_error& e) {  // a malformed record: name the node it came from
        const std::uint32_t p = sources.participant_of(slot);
        if (p == 0) throw;
        throw std::runtime_error(fmt::format("{}: {}", sources.stats().at(p).name, e.what()));
      }
      const std::uint64_t lag = algo.version() - std::min(made_with, algo.version());
      if (lags.size() < kMaxLagSamples) lags.push_back(lag);
      reporter.lag(lag);
      return true;
    };
    // Takes one record from a source: gated work goes through the gate's unit order.
    gated = algo.units_ahead() > 0;
    auto take = [&](std::uint32_t slot, const RecordView& rec) {
      return gated ? gate.take(sources.participant_of(slot), slot, rec, feed) : feed(slot, rec);
    };

    // A source that can no longer deliver, or delivers garbage, ends the run with a
    // checkpoint: the learner's state is whole (a record is validated before it changes it).
    auto or_checkpoint = [&](auto&& f) {
      try {
        return f();
      } catch (const std::runtime_error& e) {
        write_checkpoint();
        throw std::runtime_error(fmt::format("{}; checkpoint written to {}; continue with --resume", e.what(),
                                             dir.checkpoint_path().string()));
      }
    };

    Backoff idle;
    while (!stop_rep && !shutdown_requested()) {
      const std::uint64_t got =
          or_checkpoint([&] { return sources.poll(take) + (gated ? gate.release(feed) : 0); });
      if (gated && algo.wants_records())
        if (const auto skipped = gate.skip_stalled(Clock::now()))
          spdlog::warn("train: unit {} did not arrive within {:g} s while later units waited; skipped (its records "
                       "are discarded if they come)",
                       *skipped, o.unit_timeout_s);
      if (algo.solved() && o.stop_on_success) stop_rep = true;
      if (o.max_budget > 0 && algo.budget_used() >= o.max_budget) stop_rep = true;
      if (o.max_seconds > 0 && rep_seconds() >= o.max_seconds) stop_rep = true;
      if (!stop_rep && algo.ready()) {
        const std::uint64_t version_before = algo.version();
        const bool publish_now = algo.step();
        // A step may make several updates (PQT with batches_per_update > 1) and publish after
        // none of them (HIRO with publish_every > 1 or no actor step).
        const std::uint64_t updates = algo.version() - version_before;
        summary.updates += updates;
        pool.segment().control().learner_steps.fetch_add(updates, std::memory_order_relaxed);  // a statistic
        if (publish_now) publish();
        idle.reset();
      } else if (got == 0) {
        idle.pause();
      }
      sources.budget(algo.budget_used());
      or_checkpoint([&] { sources.check(); });
      update_gate();
      const auto now = Clock::now();
      reporter.maybe_report(now, rep, algo, rep_seconds(), dir.budget_of_done(), seconds_since(train_t0),
                            sources.stats());
      if (o.checkpoint_every_s > 0 &&
          std::chrono::duration<double>(now - last_checkpoint).count() >= o.checkpoint_every_s)
        write_checkpoint();
    }
    budget_done = budget_now();
    in_rep = false;
    if (shutdown_requested() && !stop_rep) {
      write_checkpoint();
      summary.interrupted = true;
      spdlog::warn("train: interrupted (signal {}); checkpoint written to {}; continue with --resume",
                   shutdown_signal(), dir.checkpoint_path().string());
      break;
    }
    // The repetition is done: keep its final model, record its result, drop the checkpoint.
    summary.results.push_back(dir.finish(rep, algo, rep_seconds()));
    reporter.finish();
    spdlog::info("train: repetition {}/{}: {}; final model {}", rep + 1, o.repetitions, algo.describe_result(),
                 dir.final_model_path(rep).string());
  }
  reporter.finish();
  summary.budget = budget_now();
  summary.seconds = seconds_since(train_t0);
  summary.budget_per_s = summary.seconds > 0 ? static_cast<double>(summary.budget) / summary.seconds : 0;
  if (first_record != Clock::time_point{}) {
    const double steady = seconds_since(first_record);
    const std::uint64_t counted = summary.budget - budget_before_first;  // the first one started the clock
    summary.steady_budget_per_s = steady > 0 && counted > 0 ? static_cast<double>(counted - 1) / steady : 0;
  }
  summary.updates_per_s = summary.seconds > 0 ? static_cast<double>(summary.updates) / summary.seconds : 0;
  // What each participant gave, counted before the stop (a node's stop discards what is still
  // on its way: it was never taken).
  const std::vector<SourceStats> taken = sources.stats();
  sources.stop();
  summary.actor_restarts = pool.supervisor().total_restarts();
  if (participants > 1) {
    std::string line = "train: records taken:";
    for (std::size_t k = 0; k < taken.size(); ++k)
      line += fmt::format(" {} from {} ({} restart(s){}),", taken[k].records, taken[k].name, taken[k].restarts,
                          gated ? fmt::format(", {} late", gate.late_of(static_cast<std::uint32_t>(k))) : std::string());
    line.pop_back();
    spdlog::info("{}", line);
  }
  std::tie(summary.lag_p50, summary.lag_max) = median_max(lags);
  summary.late_records = gate.late();
  summary.skipped_units = gate.skipped();
  return summary;
}

}  // namespace ringrl::learner
