#include "sweeps/tune_grid.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "common/errors.h"

namespace ringrl::sweeps {
namespace {

using nlohmann::json;

// §6.3 / §5.5 grid values.
const std::vector<json> kLearningRates = {1e-5, 1e-4, 1e-3};
const std::vector<json> kPgEntropyBetas = {0.005, 0.01, 0.05, 0.1};
const std::vector<json> kTopkEntropyBetas = {0.0, 0.005, 0.01, 0.05, 0.1};
const std::vector<json> kTopkSizes = {10};
const std::vector<json> kTopkLossHparams = {1.0, 10.0, 50.0, 200.0};
const std::vector<json> kReplayTemperatures = {0.25, 0.5, 1.0, 2.0};
const std::vector<json> kReplayAlphas = {0.5, 0.75, 63.0 / 64.0};
const std::vector<json> kGaPopulations = {10, 25, 50, 100, 500};
const std::vector<json> kGaCrossoverRates = {0.2, 0.5, 0.7, 0.9, 0.95};
const std::vector<json> kGaMutationRates = {0.01, 0.03, 0.05, 0.1, 0.15};

// Keys a user --set may not touch: the session sets them per child.
constexpr const char* kTaskKeys[] = {"task", "task_cycle"};
constexpr const char* kModeKey = "mode";
constexpr const char* kDeviceKey = "device";
constexpr const char* kRepetitionsKey = "repetitions";
constexpr const char* kMaxNpeKey = "max_npe";

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = s.find(sep, start);
    parts.push_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

// A non-negative decimal integer, or nothing.
bool parse_index(std::string_view text, std::size_t* out) {
  text = trim(text);
  if (text.empty() || text.size() > 18) return false;
  std::size_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  *out = v;
  return true;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

TuneSpace make_space(std::string name, std::string mode, std::vector<HparamAxis> axes) {
  std::sort(axes.begin(), axes.end(), [](const HparamAxis& a, const HparamAxis& b) { return a.name < b.name; });
  return TuneSpace{std::move(name), std::move(mode), std::move(axes)};
}

// Programs a run counts toward programs_seen_fraction / avg_programs (see the contract).
double programs_of(bool solved, std::uint64_t npe, std::uint64_t max_npe) {
  if (max_npe == 0) return static_cast<double>(npe);
  return static_cast<double>(solved ? std::min(npe, max_npe) : max_npe);
}

struct Accumulator {
  std::size_t runs = 0, succeeded = 0;
  double programs = 0.0;

  void add(bool solved, std::uint64_t npe, std::uint64_t max_npe) {
    ++runs;
    if (solved) ++succeeded;
    programs += programs_of(solved, npe, max_npe);
  }
  TaskMetrics metrics(std::uint64_t max_npe) const {
    TaskMetrics m;
    m.num_runs = runs;
    m.num_succeeded = succeeded;
    if (runs == 0) return m;  // every rate 0.0, never NaN
    const double n = static_cast<double>(runs);
    m.success_rate = static_cast<double>(succeeded) / n;
    m.avg_programs = programs / n;
    m.programs_seen_fraction = max_npe == 0 ? 0.0 : programs / (n * static_cast<double>(max_npe));
    return m;
  }
};

const json& record_field(const json& record, const char* key, std::size_t index) {
  auto it = record.find(key);
  if (it == record.end())
    throw UsageError(fmt::format("result record {} has no '{}': expected found_solution, npe and task", index, key));
  return *it;
}

}  // namespace

std::size_t TuneSpace::num_trials() const {
  std::size_t n = 1;
  for (const auto& a : axes) n *= a.values.size();
  return n;
}

json TuneSpace::trial_hparams(std::size_t trial) const {
  if (trial >= num_trials())
    throw UsageError(
        fmt::format("trial {} is out of range: space '{}' has trials 0..{}", trial, name, num_trials() - 1));
  json out = json::object();
  std::size_t rest = trial;
  for (const auto& a : axes) {  // sorted: the first key is the least significant digit
    out[a.name] = a.values[rest % a.values.size()];
    rest /= a.values.size();
  }
  return out;
}

bool TuneSpace::has_axis(const std::string& key) const {
  return std::any_of(axes.begin(), axes.end(), [&](const HparamAxis& a) { return a.name == key; });
}

std::vector<std::string> tune_space_names() { return {"pg", "pg-topk", "topk", "is", "ga"}; }

TuneSpace tune_space(const std::string& name) {
  const HparamAxis lr{"lr", kLearningRates};
  const HparamAxis pg_entropy{"entropy_beta", kPgEntropyBetas};
  if (name == "pg") return make_space(name, "pg", {lr, pg_entropy});
  if (name == "pg-topk")
    return make_space(name, "pg+pqt", {lr, pg_entropy, {"topk", kTopkSizes}, {"topk_loss_hparam", kTopkLossHparams}});
  if (name == "topk")
    return make_space(
        name, "pqt",
        {lr, {"entropy_beta", kTopkEntropyBetas}, {"topk", kTopkSizes}, {"topk_loss_hparam", kTopkLossHparams}});
  if (name == "is")
    return make_space(name, "pg",
                      {lr, pg_entropy, {"replay_temperature", kReplayTemperatures}, {"alpha", kReplayAlphas}});
  if (name == "ga") {
    TuneSpace ga = make_space(
        name, "",
        {{"population", kGaPopulations}, {"crossover_rate", kGaCrossoverRates}, {"mutation_rate", kGaMutationRates}});
    ga.trainer = "ga";
    return ga;
  }
  throw UsageError(fmt::format("unknown tuning space '{}': expected one of {}", name, join_names(tune_space_names())));
}

std::vector<std::size_t> select_trials(std::size_t num_trials, const std::string& list, const std::string& range) {
  std::set<std::size_t> chosen;
  if (!trim(list).empty()) {
    for (std::string_view item : split(list, ',')) {
      std::size_t i = 0;
      if (!parse_index(item, &i))
        throw UsageError(
            fmt::format("--trials {}: '{}' is not a trial index; expected a comma-separated list like 0,5,7", list,
                        std::string(trim(item))));
      if (i >= num_trials)
        throw UsageError(fmt::format("--trials {}: trial {} is out of range; expected 0..{}", list, i, num_trials - 1));
      chosen.insert(i);
    }
  }
  if (!trim(range).empty()) {
    const std::vector<std::string_view> ends = split(range, ':');
    std::size_t a = 0, b = num_trials;
    const bool ok = ends.size() == 2 && (trim(ends[0]).empty() || parse_index(ends[0], &a)) &&
                    (trim(ends[1]).empty() || parse_index(ends[1], &b));
    if (!ok)
      throw UsageError(fmt::format("--trial-range {}: expected A:B (trials A..B-1; A or B may be left out)", range));
    if (b > num_trials)
      throw UsageError(
          fmt::format("--trial-range {}: end {} is past the last trial; expected B <= {}", range, b, num_trials));
    if (a >= b)
      throw UsageError(fmt::format("--trial-range {}: the range is empty; expected A < B (trials A..B-1)", range));
    for (std::size_t i = a; i < b; ++i) chosen.insert(i);
  }
  if (trim(list).empty() && trim(range).empty())
    for (std::size_t i = 0; i < num_trials; ++i) chosen.insert(i);
  return {chosen.begin(), chosen.end()};
}

TuneSettings TuneSettings::paper() {
  TuneSettings s;
  s.task_cycle.assign(std::begin(kPaperTuneTasks), std::end(kPaperTuneTasks));
  s.sets = {{"timestep_limit", std::to_string(kPaperTuneTimestepLimit)},
            {"batch_size", std::to_string(kPaperTuneBatchSize)},
            {"grad_clip_threshold", json(kPaperTuneGradClip).dump()},
            {"param_init_factor", json(kPaperTuneParamInitFactor).dump()},
            {"ema_baseline_decay", json(kPaperTuneEmaBaselineDecay).dump()},
            {"eos_token", "false"}};
  return s;
}

TuneSettings TuneSettings::paper_for(const TuneSpace& space) {
  TuneSettings s = paper();
  if (space.trainer == "ga") s.sets = {{"timestep_limit", std::to_string(kPaperTuneTimestepLimit)}};
  return s;
}

void apply_user_sets(TuneSettings& settings, const TuneSpace& space, const std::vector<std::string>& sets) {
  for (const std::string& assignment : sets) {
    const std::size_t eq = assignment.find('=');
    const std::string key(trim(std::string_view(assignment).substr(0, eq == std::string::npos ? 0 : eq)));
    if (eq == std::string::npos || key.empty())
      throw UsageError(fmt::format("--set {}: expected key=value", assignment));
    const std::string value(trim(std::string_view(assignment).substr(eq + 1)));
    for (const char* k : kTaskKeys)
      if (key == k)
        throw UsageError(fmt::format("--set {}: the tasks of a tuning session are given with --tasks a,b", assignment));
    if (key == kModeKey)
      throw UsageError(fmt::format("--set {}: the space sets the mode (space '{}' trains with mode '{}')", assignment,
                                   space.name, space.mode.empty() ? "none" : space.mode));
    if (key == kDeviceKey)
      throw UsageError(fmt::format("--set {}: tune assigns devices itself (one trial per GPU, else cpu)", assignment));
    if (space.has_axis(key))
      throw UsageError(
          fmt::format("--set {}: {} is a hyper-parameter of space '{}' and is set per trial; "
                      "expected a key outside the grid",
                      assignment, key, space.name));
    if (key == kRepetitionsKey || key == kMaxNpeKey) {
      const json v = json::parse(value, nullptr, /*allow_exceptions=*/false);
      constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53
      std::uint64_t n = 0;
      if (v.is_number_unsigned()) {
        n = v.get<std::uint64_t>();
      } else if (v.is_number_float() && v.get<double>() >= 0 && v.get<double>() <= kMaxExactInteger &&
                 std::floor(v.get<double>()) == v.get<double>()) {
        n = static_cast<std::uint64_t>(v.get<double>());  // max_npe=5e6
      } else {
        throw UsageError(fmt::format("--set {}: expected a non-negative integer", assignment));
      }
      if (key == kMaxNpeKey) {
        settings.max_npe = n;
      } else {
        if (n == 0 || n > std::numeric_limits<std::uint32_t>::max())
          throw UsageError(fmt::format("--set {}: expected a repetition count of at least 1", assignment));
        settings.repetitions = static_cast<std::uint32_t>(n);
      }
      continue;
    }
    auto it = std::find_if(settings.sets.begin(), settings.sets.end(), [&](const auto& kv) { return kv.first == key; });
    if (it != settings.sets.end())
      it->second = value;
    else
      settings.sets.emplace_back(key, value);
  }
}

std::vector<std::string> parse_task_list(const std::string& text) {
  std::vector<std::string> tasks;
  for (std::string_view item : split(text, ',')) {
    item = trim(item);
    if (item.empty())
      throw UsageError(fmt::format(
          "--tasks '{}': expected a comma-separated list of task names like reverse-tune,remove-char-tune", text));
    tasks.emplace_back(item);
  }
  return tasks;
}

std::uint32_t repetitions_for_task(std::uint32_t total, std::size_t task_index, std::size_t cycle_len) {
  if (cycle_len == 0 || task_index >= cycle_len || task_index >= total) return 0;
  return static_cast<std::uint32_t>((total - task_index + cycle_len - 1) / cycle_len);
}

std::string format_hparams(const json& hparams) {
  std::string out;
  for (const auto& [k, v] : hparams.items()) out += (out.empty() ? "" : " ") + k + "=" + v.dump();
  return out;
}

std::vector<std::string> train_arguments(const TuneSpace& space, const json& hparams, const TuneSettings& settings,
                                         const TrialTaskRun& run) {
  std::vector<std::string> a;
  if (space.trainer == "ga") {
    a = {"train",         "ga",
         "--task",        run.task,
         "--repetitions", std::to_string(run.repetitions),
         "--max-npe",     std::to_string(settings.max_npe),
         "--run-dir",     run.run_dir};
  } else {
    if (space.mode.empty())
      throw UsageError(
          fmt::format("space '{}' has no `train pqt` mode; expected one of pg, pg-topk, topk, is, ga", space.name));
    a = {"train",         "pqt",
         "--task",        run.task,
         "--mode",        space.mode,
         "--repetitions", std::to_string(run.repetitions),
         "--max-npe",     std::to_string(settings.max_npe),
         "--run-dir",     run.run_dir,
         "--device",      run.device};
  }
  if (run.actors > 0) {
    a.push_back("--actors");
    a.push_back(std::to_string(run.actors));
  }
  if (run.resume) a.push_back("--resume");
  for (const auto& [k, v] : settings.sets) {
    a.push_back("--set");
    a.push_back(k + "=" + v);
  }
  for (const auto& [k, v] : hparams.items()) {
    a.push_back("--set");
    a.push_back(k + "=" + v.dump());
  }
  return a;
}

TrialResult aggregate_trial(std::size_t trial, const json& hparams, const std::vector<json>& records,
                            std::uint64_t max_npe, const std::vector<std::string>& task_cycle) {
  Accumulator total;
  std::map<std::string, Accumulator> per_task;
  for (const auto& t : task_cycle) per_task[t];
  for (std::size_t i = 0; i < records.size(); ++i) {
    const json& r = records[i];
    const json& solved = record_field(r, "found_solution", i);
    const json& npe = record_field(r, "npe", i);
    const json& task = record_field(r, "task", i);
    if (!solved.is_boolean() || !npe.is_number_unsigned() || !task.is_string())
      throw UsageError(
          fmt::format("result record {} ({}): expected found_solution a boolean, npe a non-negative "
                      "integer and task a string",
                      i, r.dump()));
    total.add(solved.get<bool>(), npe.get<std::uint64_t>(), max_npe);
    per_task[task.get<std::string>()].add(solved.get<bool>(), npe.get<std::uint64_t>(), max_npe);
  }
  TrialResult out;
  out.trial = trial;
  out.hparams = hparams;
  out.total = total.metrics(max_npe);
  for (const auto& [task, acc] : per_task) out.per_task[task] = acc.metrics(max_npe);
  out.objective = kSuccessRateObjectiveWeight * out.total.success_rate;
  return out;
}

void sort_by_objective(std::vector<TrialResult>& results) {
  std::stable_sort(results.begin(), results.end(), [](const TrialResult& a, const TrialResult& b) {
    if (a.objective != b.objective) return a.objective > b.objective;
    return a.trial < b.trial;
  });
}

nlohmann::ordered_json trial_result_json(const TrialResult& r, const std::string& space, std::size_t num_trials) {
  nlohmann::ordered_json j;
  j["trial_name"] = fmt::format("trial_{}", r.trial);
  j["trial"] = r.trial;
  j["space"] = space;
  j["hparams"] = r.hparams;
  j["objective"] = r.objective;
  j["num_trials"] = num_trials;
  auto put = [&](const std::string& prefix, const TaskMetrics& m) {
    j[prefix + "success_rate"] = m.success_rate;
    j[prefix + "num_runs"] = m.num_runs;
    j[prefix + "num_succeeded"] = m.num_succeeded;
    j[prefix + "programs_seen_fraction"] = m.programs_seen_fraction;
    j[prefix + "avg_programs"] = m.avg_programs;
  };
  put("", r.total);
  for (const auto& [task, m] : r.per_task) put(task + "__", m);
  j["status"] = r.status;
  if (!r.error.empty()) j["error"] = r.error;
  return j;
}

std::string format_summary_table(const std::vector<TrialResult>& results) {
  const std::vector<std::string> header = {"trial",          "hparams",      "success_rate",
                                           "succeeded/runs", "avg_programs", "status"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : results)
    rows.push_back({std::to_string(r.trial), format_hparams(r.hparams), fmt::format("{:.3f}", r.total.success_rate),
                    fmt::format("{}/{}", r.total.num_succeeded, r.total.num_runs),
                    fmt::format("{:.0f}", r.total.avg_programs), r.status});
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& row : rows) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::size_t pad = width[c] - cells[c].size();
      const bool left = c == 1 || c == cells.size() - 1;  // text columns left-aligned, numbers right
      if (c > 0) s += "  ";
      s += left ? cells[c] + std::string(c + 1 == cells.size() ? 0 : pad, ' ') : std::string(pad, ' ') + cells[c];
    }
    return s + "\n";
  };
  std::string out = line(header);
  std::size_t total_width = 0;
  for (std::size_t w : width) total_width += w;
  out += std::string(total_width + 2 * (width.size() - 1), '-') + "\n";
  for (const auto& row : rows) out += line(row);
  return out;
}

}  // namespace ringrl::sweeps
