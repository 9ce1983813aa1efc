// The hyper-parameter grids of `ringrl tune` (spec brain_coder §6.3) and everything about a
// tuning session that needs neither torch nor processes: spaces, trial decoding, the fixed
// settings of paper tuning, trial subsets, the per-trial command line, and the aggregation
// of the trials' results into the §6.3 metrics. app/tune_cmd.cc runs the trials.
//
// Contract:
// * Spaces (exactly §6.3): pg (12), pg-topk (48), topk (60), is (144), ga (125). A space's
//   axes are kept sorted by key name. Trial i decodes mixed-radix over the sorted keys, the
//   first sorted key being the least significant digit:
//     for each axis in sorted order: value = axis.values[i % n]; i /= n.
// * Mapping to `ringrl train pqt` modes: pg → pg, pg-topk → pg+pqt, topk → pqt (pi_loss 0 via
//   the preset), is → pg with alpha/replay_temperature (experience replay, §5.5); ga → `ringrl
//   train ga` (the GA baseline, §6.5; no mode).
// * TuneSettings starts as the paper tuning settings of the space's trainer (paper_for) and
//   takes user overrides; user --set
//   keys may not name one of the space's hyper-parameters, nor a key the session owns
//   (task, mode, device: use --tasks / the device logic); repetitions and max_npe are routed
//   to their fields.
// * Repetition r of a trial uses task_cycle[r % len]; each task runs as one `train pqt` with
//   the repetitions that fall to it (repetitions_for_task()).
// * Aggregation (aggregate_trial) over a trial's result records (results.jsonl lines):
//   num_runs, num_succeeded, success_rate = succeeded / runs (0 when no runs),
//   programs_seen_fraction = Σ programs_i / (runs · max_npe) with programs_i = min(npe_i,
//   max_npe) for a solved run and max_npe for a failed one (0 when max_npe = 0 or no runs),
//   avg_programs = Σ programs_i / runs (with max_npe = 0 a failed run counts its own npe);
//   the same per task as `<task>__<metric>` for every task of the cycle (and any other task
//   found in the records). objective = success_rate (weight 1). NaN never appears (0.0).
// * sort_by_objective: objective descending, then trial index ascending.
// * Bad input is a ringrl::UsageError naming the value and what was expected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ringrl::sweeps {

// The fixed settings of paper tuning (§6.3).
inline constexpr const char* kPaperTuneTasks[] = {"reverse-tune", "remove-char-tune"};
inline constexpr std::uint32_t kPaperTuneRepetitions = 50;
inline constexpr std::uint64_t kPaperTuneMaxNpe = 5'000'000;
inline constexpr int kPaperTuneTimestepLimit = 50;
inline constexpr int kPaperTuneBatchSize = 64;
inline constexpr double kPaperTuneGradClip = 50.0;
inline constexpr double kPaperTuneParamInitFactor = 0.5;
inline constexpr double kPaperTuneEmaBaselineDecay = 0.99;
/// Weight of the success rate in the objective (`success_rate_objective_weight`).
inline constexpr double kSuccessRateObjectiveWeight = 1.0;

/// One hyper-parameter and its grid values (JSON numbers: integers stay integers).
struct HparamAxis {
  std::string name;
  std::vector<nlohmann::json> values;
};

struct TuneSpace {
  std::string name;              // pg | pg-topk | topk | is | ga
  std::string mode;              // `train pqt --mode` (also its preset); empty for ga
  std::vector<HparamAxis> axes;  // sorted by name
  std::string trainer = "pqt";   // the `ringrl train` subcommand of its trials: pqt | ga

  /// Product of the axes' sizes.
  std::size_t num_trials() const;
  /// The hyper-parameters of trial `trial` as a JSON object (keys sorted). UsageError when
  /// trial >= num_trials().
  nlohmann::json trial_hparams(std::size_t trial) const;
  /// Whether `key` is one of the space's hyper-parameters.
  bool has_axis(const std::string& key) const;
};

/// "pg", "pg-topk", "topk", "is", "ga".
std::vector<std::string> tune_space_names();
/// The named space; UsageError listing the known names otherwise.
TuneSpace tune_space(const std::string& name);

/// The trials to run: the union of `list` ("0,5,7") and `range` ("A:B" = A ≤ i < B; either
/// bound may be omitted: "A:" to the end, ":B" from 0), sorted and without duplicates; both
/// empty = every trial. UsageError for a non-number, an index >= num_trials, or an empty or
/// out-of-range range.
std::vector<std::size_t> select_trials(std::size_t num_trials, const std::string& list, const std::string& range);

/// Everything a session passes to every trial besides the trial's own hyper-parameters.
struct TuneSettings {
  std::vector<std::string> task_cycle;
  std::uint32_t repetitions = kPaperTuneRepetitions;
  std::uint64_t max_npe = kPaperTuneMaxNpe;
  /// Config assignments (key, value text) passed as `--set key=value`, in order.
  std::vector<std::pair<std::string, std::string>> sets;

  /// The paper tuning settings of §6.3 (for `train pqt`).
  static TuneSettings paper();
  /// The paper tuning settings for the trainer of `space`: paper() for pqt; for ga only what
  /// configs/ga.json knows of them (timestep_limit = 50).
  static TuneSettings paper_for(const TuneSpace& space);
};

/// Applies user `key=value` overrides to `settings` for `space` (see the contract).
void apply_user_sets(TuneSettings& settings, const TuneSpace& space, const std::vector<std::string>& sets);
/// Parses "--tasks a,b" into the task cycle; UsageError for an empty list or name.
std::vector<std::string> parse_task_list(const std::string& text);
/// Repetitions of a `total`-repetition trial that fall to task `task_index` of a cycle of
/// `cycle_len` tasks (repetition r → task r % cycle_len).
std::uint32_t repetitions_for_task(std::uint32_t total, std::size_t task_index, std::size_t cycle_len);

/// "entropy_beta=0.05 lr=0.0001": the hyper-parameters as one line (sorted keys).
std::string format_hparams(const nlohmann::json& hparams);

/// What one `train pqt` / `train ga` child of a trial needs.
struct TrialTaskRun {
  std::string task;
  std::uint32_t repetitions = 0;
  std::string run_dir;
  std::string device;        // cpu | cuda:N
  std::uint32_t actors = 0;  // 0: the config's default
  bool resume = false;       // the run dir already holds results or a checkpoint
};

/// The arguments after the program name of the child for one task of a trial:
/// train pqt --task T --mode M --repetitions R --max-npe N --run-dir D --device X
/// [--actors A] [--resume], or for ga: train ga --task T --repetitions R --max-npe N
/// --run-dir D [--actors A] [--resume]; then `--set k=v` for each settings.sets entry and
/// then for each hyper-parameter of the trial. UsageError for a pqt space without a mode.
std::vector<std::string> train_arguments(const TuneSpace& space, const nlohmann::json& hparams,
                                         const TuneSettings& settings, const TrialTaskRun& run);

struct TaskMetrics {
  std::size_t num_runs = 0;
  std::size_t num_succeeded = 0;
  double success_rate = 0.0;
  double programs_seen_fraction = 0.0;
  double avg_programs = 0.0;
};

struct TrialResult {
  std::size_t trial = 0;
  nlohmann::json hparams = nlohmann::json::object();
  TaskMetrics total;
  std::map<std::string, TaskMetrics> per_task;
  double objective = 0.0;
  std::string status = "ok";  // ok | failed | interrupted
  std::string error;          // why, when not ok
};

/// The §6.3 metrics of one trial from its result records (each needs found_solution, npe
/// and task); `max_npe` is the session's budget.
TrialResult aggregate_trial(std::size_t trial, const nlohmann::json& hparams,
                            const std::vector<nlohmann::json>& records, std::uint64_t max_npe,
                            const std::vector<std::string>& task_cycle);

/// Objective descending, then trial index ascending.
void sort_by_objective(std::vector<TrialResult>& results);

/// One tuning_results.txt line: trial_name, trial, space, hparams, objective, num_trials, the
/// total metrics, `<task>__<metric>` for each task, status (and error when not ok).
nlohmann::ordered_json trial_result_json(const TrialResult& r, const std::string& space, std::size_t num_trials);

/// The summary table (header, one row per result in the given order).
std::string format_summary_table(const std::vector<TrialResult>& results);

}  // namespace ringrl::sweeps
