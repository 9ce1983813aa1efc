// `ringrl tune`: runs the spec §6.3 grid (or a named subset of it) as separate trials.
//
// Each trial is one `train pqt` (space ga: `train ga`) child process of this same binary per task of the cycle
// (repetition r → task_cycle[r % len]), in DIR/trial_<i>/<task>/ with its log in train.log
// there. Trials run side by side: with G CUDA devices up to G at once, each holding one GPU
// (the k-th trial of the list starts on cuda:(k % G) while trials finish in order; in general
// a trial takes the lowest free GPU, so no GPU ever runs two learners); without GPUs --parallel
// trials at once on the CPU. After each trial its results.jsonl files are aggregated (the §6.3
// metrics, sweeps/tune_grid.h) and DIR/tuning_results.txt (one JSON line per trial, sorted by
// objective) and DIR/tuning_summary.txt (the table) are rewritten; the table is printed at the
// end.
//
// Children never outlive tune: each runs in its own process group (a terminal ^C reaches only
// tune) with PR_SET_PDEATHSIG=SIGTERM; on SIGINT/SIGTERM/SIGHUP tune forwards the signal once
// to every running child (whose trainer writes a checkpoint and stops), waits for all of them,
// writes the files, and exits with 130. Running the same command again continues: a trial's
// run directory that holds results or a checkpoint is passed to `train pqt --resume`, and
// DIR/tune.json pins the session settings so a different space or budget is refused.
//
// Under mpirun or srun with several ranks (sweeps/cluster_jobs.h, docs/cluster.md), every rank
// runs trials on its own slots and rank 0 hands them out: rank 0's --run-dir is the session
// directory; the other ranks run in --node-dir (default: the same path on their host) and
// their trial directories are gathered into rank 0's when each task ends. A task whose
// results are all in rank 0's directory is skipped on a rerun.
//
// Before anything starts, every selected trial's config is resolved and validated in-process
// with the trainer's own validation (config/pqt_config.h, config/ga_config.h), so a bad key or value
// is one UsageError. GA trials run on the CPU (--parallel at once) whether or not GPUs exist.
#include "app/commands.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <deque>
#include <filesystem>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "sweeps/child_runs.h"
#include "app/cli_numbers.h"
#include "sweeps/cluster_jobs.h"
#include "sweeps/slots.h"
#include "config/ga_config.h"
#include "config/pqt_config.h"
#include "app/train_cli.h"
#include "sweeps/tune_grid.h"
#include "common/errors.h"
#include "common/exit_status.h"
#include "common/run_segment.h"
#include "common/runfiles/atomic_file.h"
#include "common/runfiles/config.h"
#include "common/runfiles/results_jsonl.h"
#include "common/runfiles/run_files.h"
#include "common/signals.h"
#include "envs/bf/scorer.h"
#include "mpi/comm.h"
#include "mpi/job_messages.h"

namespace ringrl::app {
using namespace ringrl::config;  // the config mappers
using namespace ringrl::sweeps;  // child runs, the spread, tuning grids
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kTrialDirPrefix = "trial_";
constexpr std::uint32_t kMaxRepetitions = 100000;  // --repetitions upper bound
constexpr std::uint32_t kMaxParallel = 256;        // --parallel upper bound

struct TuneCli {
  std::string space, trials, trial_range, tasks, run_dir;
  std::vector<std::string> sets;
  std::optional<std::uint32_t> repetitions, parallel, actors;
  std::optional<std::uint64_t> max_npe;
  std::string node_dir;  // under MPI: where ranks other than 0 keep their trials
  bool dry_run = false;
};

std::string default_run_dir(const std::string& space) {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return fmt::format("runs/tune-{}-{}", space, stamp);
}

fs::path trial_dir(const fs::path& run_dir, std::size_t trial) {
  return run_dir / fmt::format("{}{}", kTrialDirPrefix, trial);
}

std::string join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

std::vector<std::string> set_assignments(const TuneSettings& s) {
  std::vector<std::string> out;
  for (const auto& [k, v] : s.sets) out.push_back(k + "=" + v);
  return out;
}

// The trainer's own validation of one trial on one task, without starting anything; returns
// the trial's resolved config (what ranks of an MPI job compare).
json preflight(const TuneSpace& space, std::size_t trial, const json& hparams, const TuneSettings& s,
               const std::string& task) {
  std::vector<std::string> sets = set_assignments(s);
  for (const auto& [k, v] : hparams.items()) sets.push_back(k + "=" + v.dump());
  sets.push_back("task=" + task);
  sets.push_back(fmt::format("repetitions={}", s.repetitions));
  sets.push_back(fmt::format("max_npe={}", s.max_npe));
  try {
    if (space.trainer == "ga") {
      ga::GaOptions o = ga_options_from(resolve_ga_config("", sets));
      o.run_dir = ".";  // only to pass validation: the child gets its own
      o.validate();     // unknown task names fail here
      return resolve_ga_config("", sets);
    } else {
      const json cfg = resolve_pqt_config("", space.mode, sets);
      (void)train_options_from(cfg);
      (void)bf::make_task(task, actor_options_from(cfg).score);  // unknown task names fail here
      return cfg;
    }
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("trial {} ({}) on task {}: {}", trial, format_hparams(hparams), task, e.what()));
  }
}

// DIR/tune.json: the settings every trial of the directory shares.
json session_identity(const TuneSpace& space, const TuneSettings& s) {
  return {{"space", space.name},
          {"task_cycle", s.task_cycle},
          {"repetitions", s.repetitions},
          {"max_npe", s.max_npe},
          {"sets", set_assignments(s)}};
}

void pin_session(const fs::path& run_dir, const json& identity) {
  const fs::path file = run_dir / runfiles::kTuneSessionFileName;
  if (fs::exists(file)) {
    const json old = runfiles::load_config(file);
    for (const auto& [k, v] : identity.items())
      if (old.value(k, json()) != v)
        throw UsageError(
            fmt::format("run directory {} holds a tuning session with {}={}, but this one has {}={}: "
                        "expected the same settings, or another --run-dir",
                        run_dir.string(), k, old.value(k, json()).dump(), k, v.dump()));
    return;
  }
  fs::create_directories(run_dir);
  runfiles::write_file_atomic(file, identity.dump(2) + "\n");
}

// One trial in flight: its tasks run one after another on the trial's device.
struct TrialJob {
  std::size_t position = 0;  // in the selected list
  std::size_t trial = 0;
  json hparams;
  std::size_t slot = 0;
  std::string device;
  std::size_t next_task = 0;  // index into the task cycle
  std::uint64_t child = 0;    // the runner's id of the running task
  fs::path log;
  std::string status = "ok", error;
};

class TuneSession final : public SlotWork {
 public:
  TuneSession(TuneSpace space, TuneSettings settings, std::vector<std::size_t> trials, fs::path run_dir,
              std::uint32_t actors, SweepSlots& slots)
      : space_(std::move(space)),
        s_(std::move(settings)),
        trials_(std::move(trials)),
        run_dir_(std::move(run_dir)),
        actors_(actors),
        slots_(slots),
        on_slot_(slots.size()) {
    for (std::size_t p = 0; p < trials_.size(); ++p) pending_.push_back(p);
  }

  // Runs every trial on the slots (sweeps/slots.h). Returns the exit status.
  int run() {
    const bool forwarded = run_on_slots(slots_, *this, "tune", "trials");
    interrupted_ |= forwarded || !pending_.empty();
    not_run_ = pending_.size();
    add_earlier_trials();
    write_files();
    return interrupted_ ? kExitInterrupted : (failed_ ? kExitFailure : 0);
  }

  // A free slot takes the next trial whose tasks are not all done already.
  std::optional<std::uint64_t> start(std::size_t slot) override {
    while (!pending_.empty()) {
      TrialJob job;
      job.position = pending_.front();
      job.trial = trials_[job.position];
      job.hparams = space_.trial_hparams(job.trial);
      job.slot = slot;
      job.device = slots_.devices()[slot];
      pending_.pop_front();
      if (start_next_task(job)) {
        on_slot_[slot] = std::move(job);
        return on_slot_[slot].child;
      }
      finish(job);
    }
    return std::nullopt;
  }

  // A trial's task ended: the next task of the trial starts on the slot, or the trial is done.
  std::optional<std::uint64_t> exited(std::size_t slot, int wstatus, bool stopping) override {
    TrialJob& job = on_slot_[slot];
    if (on_child_exit(job, wstatus, stopping)) return job.child;
    finish(job);
    return std::nullopt;
  }

  const std::vector<TrialResult>& results() const { return results_; }
  std::size_t not_run() const { return not_run_; }
  /// The session's settings as one line (first line of the summary file).
  std::string header() const {
    return fmt::format("space {} ({} trials, mode {}); tasks {} alternated; {} repetitions per trial; max NPE {}; {}\n",
                       space_.name, space_.num_trials(), space_.mode.empty() ? space_.trainer : space_.mode,
                       join(s_.task_cycle, ","), s_.repetitions, s_.max_npe, join(set_assignments(s_), " "));
  }

 private:
  fs::path task_dir(std::size_t trial, const std::string& task) const { return trial_dir(run_dir_, trial) / task; }

  // Starts the child for the job's next task with repetitions left; false when none is left.
  bool start_next_task(TrialJob& job) {
    const std::size_t len = s_.task_cycle.size();
    for (; job.next_task < len; ++job.next_task) {
      TrialTaskRun run;
      run.task = s_.task_cycle[job.next_task];
      run.repetitions = repetitions_for_task(s_.repetitions, job.next_task, len);
      if (run.repetitions == 0) continue;
      const fs::path dir = task_dir(job.trial, run.task);
      fs::create_directories(dir);
      if (repetitions_done(dir) >= run.repetitions) {  // a rerun: this task's results are all here
        spdlog::info("tune: trial {} {}: {} repetition(s) already done; skipped", job.trial, run.task, run.repetitions);
        continue;
      }
      run.run_dir = dir.string();
      run.device = job.device;
      run.actors = actors_;
      run.resume = false;  // the runner adds --resume where the run finds results or a checkpoint
      job.log = dir / runfiles::kLogFileName;
      job.child = slots_.runner().start(job.slot, {train_arguments(space_, job.hparams, s_, run), dir, job.log});
      spdlog::info("tune: trial {} [{}/{}] {}: {} on {}, {} repetition(s){}; log {}", job.trial, job.position + 1,
                   trials_.size(), format_hparams(job.hparams), run.task, slots_.names()[job.slot], run.repetitions,
                   has_resumable_state(dir) ? " (resumed)" : "", job.log.string());
      return true;
    }
    return false;
  }

  // Handles the end of the job's current child; true when the next task started.
  bool on_child_exit(TrialJob& job, int wstatus, bool forwarded) {
    const std::string& task = s_.task_cycle[job.next_task];
    if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0 && !forwarded) {
      ++job.next_task;
      return start_next_task(job);
    }
    if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) {  // finished just as we stopped
      for (std::size_t t = job.next_task + 1; t < s_.task_cycle.size(); ++t)
        if (repetitions_for_task(s_.repetitions, t, s_.task_cycle.size()) > 0) job.status = "interrupted";
      return false;
    }
    if (forwarded) {
      job.status = "interrupted";
      return false;
    }
    job.status = "failed";
    const std::string how = WIFEXITED(wstatus) ? fmt::format("exited with status {}", WEXITSTATUS(wstatus))
                                               : fmt::format("was killed by signal {}", WTERMSIG(wstatus));
    job.error = fmt::format("train {} on {} {}: {} (log {})", space_.trainer, task, how, last_log_line(job.log),
                            job.log.string());
    spdlog::error("tune: trial {}: {}", job.trial, job.error);
    failed_ = true;
    return false;
  }

  // Distinct repetitions of the task directory's results.jsonl (0 without one).
  static std::size_t repetitions_done(const fs::path& dir) {
    const fs::path file = dir / runfiles::kResultsFileName;
    if (!fs::exists(file)) return 0;
    return runfiles::completed_values(runfiles::read_json_lines(file)).size();
  }

  TrialResult collect(std::size_t trial, const json& hparams) const {
    std::vector<json> records;
    for (const auto& task : s_.task_cycle) {
      const auto rs = runfiles::read_json_lines(task_dir(trial, task) / runfiles::kResultsFileName);
      records.insert(records.end(), rs.begin(), rs.end());
    }
    return aggregate_trial(trial, hparams, records, s_.max_npe, s_.task_cycle);
  }

  void finish(const TrialJob& job) {
    TrialResult r;
    try {
      r = collect(job.trial, job.hparams);
    } catch (const std::exception& e) {
      r = aggregate_trial(job.trial, job.hparams, {}, s_.max_npe, s_.task_cycle);
      r.status = "failed";
      r.error = fmt::format("reading the results: {}", e.what());
      failed_ = true;
    }
    if (job.status != "ok") {
      r.status = job.status;
      r.error = job.error;
    }
    done_.insert(job.trial);
    spdlog::info("tune: trial {} {}: success rate {:.3f} ({}/{}), avg programs {:.0f}", job.trial, r.status,
                 r.total.success_rate, r.total.num_succeeded, r.total.num_runs, r.total.avg_programs);
    results_.push_back(std::move(r));
    sort_by_objective(results_);
    write_files();
  }

  // Trials of this directory run by earlier sessions (other subsets) join the table.
  void add_earlier_trials() {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(run_dir_, ec)) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_directory() || name.rfind(kTrialDirPrefix, 0) != 0) continue;
      const std::string digits = name.substr(std::char_traits<char>::length(kTrialDirPrefix));
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
      const std::size_t trial = std::stoul(digits);
      if (trial >= space_.num_trials() || done_.count(trial) != 0) continue;
      try {
        TrialResult r = collect(trial, space_.trial_hparams(trial));
        if (r.total.num_runs == 0) continue;
        r.status = r.total.num_runs >= s_.repetitions ? "ok" : "partial";
        results_.push_back(std::move(r));
        done_.insert(trial);
      } catch (const std::exception& e) {
        spdlog::warn("tune: skipping {}: {}", entry.path().string(), e.what());
      }
    }
    sort_by_objective(results_);
  }

  void write_files() const {
    std::string lines;
    for (const auto& r : results_) lines += trial_result_json(r, space_.name, space_.num_trials()).dump() + "\n";
    runfiles::write_file_atomic(run_dir_ / runfiles::kTuningResultsFileName, lines);
    runfiles::write_file_atomic(run_dir_ / runfiles::kTuningSummaryFileName, header() + format_summary_table(results_));
  }

  TuneSpace space_;
  TuneSettings s_;
  std::vector<std::size_t> trials_;
  fs::path run_dir_;
  std::uint32_t actors_;
  SweepSlots& slots_;
  std::deque<std::size_t> pending_;  // positions in trials_ not started
  std::vector<TrialJob> on_slot_;    // the trial each busy slot runs
  std::vector<TrialResult> results_;
  std::set<std::size_t> done_;
  bool failed_ = false, interrupted_ = false;
  std::size_t not_run_ = 0;
};

int run_tune(const TuneCli& c) {
  const TuneSpace space = tune_space(c.space);
  TuneSettings s = TuneSettings::paper_for(space);
  if (!c.tasks.empty()) s.task_cycle = parse_task_list(c.tasks);
  apply_user_sets(s, space, c.sets);
  if (c.repetitions) s.repetitions = *c.repetitions;
  if (c.max_npe) s.max_npe = *c.max_npe;
  const std::vector<std::size_t> trials = select_trials(space.num_trials(), c.trials, c.trial_range);
  std::string run_dir = c.run_dir.empty() ? default_run_dir(space.name) : c.run_dir;
  // Under mpirun/srun with several ranks: one job, rank 0's run directory (its time stamp).
  std::unique_ptr<mpi::Comm> comm = c.dry_run ? nullptr : join_mpi_job();
  if (comm) run_dir = comm->broadcast(run_dir, 0);

  if (c.dry_run) {
    std::printf("space %s: %zu trials, mode %s; %zu selected\n", space.name.c_str(), space.num_trials(),
                space.mode.empty() ? space.trainer.c_str() : space.mode.c_str(), trials.size());
    std::printf("tasks %s alternated by repetition; %u repetitions per trial; max NPE %llu; run dir %s\n",
                join(s.task_cycle, ",").c_str(), s.repetitions, static_cast<unsigned long long>(s.max_npe),
                run_dir.c_str());
    std::printf("settings: %s\n", join(set_assignments(s), " ").c_str());
    for (std::size_t t : trials) std::printf("trial %4zu  %s\n", t, format_hparams(space.trial_hparams(t)).c_str());
    try {
      for (std::size_t t : trials)
        for (const auto& task : s.task_cycle) preflight(space, t, space.trial_hparams(t), s, task);
      if (!trials.empty()) {
        TrialTaskRun run;
        run.task = s.task_cycle.front();
        run.repetitions = repetitions_for_task(s.repetitions, 0, s.task_cycle.size());
        run.run_dir = (trial_dir(run_dir, trials.front()) / run.task).string();
        run.device = "DEVICE";
        run.actors = c.actors.value_or(0);
        std::printf("first child: ringrl %s\n",
                    join(train_arguments(space, space.trial_hparams(trials.front()), s, run), " ").c_str());
      }
    } catch (const UsageError& e) {
      std::printf("note: running this would fail: %s\n", e.what());
    }
    std::fflush(stdout);
    return 0;
  }

  // Every trial's config on every task. Under MPI a rank whose preflight fails says so in its
  // hello (rank 0 refuses the job in one line naming it) instead of leaving the others waiting.
  std::vector<std::string> resolved;
  std::string preflight_error;
  try {
    for (std::size_t t : trials)
      for (const auto& task : s.task_cycle) resolved.push_back(preflight(space, t, space.trial_hparams(t), s, task).dump());
  } catch (const UsageError& e) {
    if (!comm) throw;
    preflight_error = e.what();
  }

  install_shutdown_handlers();
  // This process's slots, or (under mpirun/srun) every rank's: rank 0 hands the trials out and
  // gathers the results.
  SweepSlots slots;
  ClusterSetup setup;
  if (comm) {
    setup.session_dir = run_dir;
    setup.node_dir = node_dir_for(c.node_dir.empty() ? run_dir : c.node_dir, comm->rank());
    std::vector<std::string> settings = {session_identity(space, s).dump(), c.run_dir, c.node_dir,
                                         std::to_string(c.actors.value_or(0))};
    for (std::size_t t : trials) settings.push_back(std::to_string(t));
    settings.insert(settings.end(), resolved.begin(), resolved.end());
    setup.fingerprint = mpi::fingerprint(settings);
    setup.local_error = preflight_error;
  }
  if (const auto worker = slots.open(comm.get(), sweep_devices(trainer_traits(space.trainer).uses_gpu,
                                                               c.parallel.value_or(0), "tune"),
                                     setup,
                                     [&] { pin_session(run_dir, session_identity(space, s)); }))
    return *worker;
  TuneSession session(space, s, trials, run_dir, c.actors.value_or(0), slots);
  spdlog::info("tune: space {}, {} trial(s), {} at a time on {}{}; run directory {}", space.name, trials.size(),
               slots.size(), slots.devices().front() != "cpu" ? fmt::format("{} GPU(s)", slots.size()) : std::string("cpu"),
               comm ? fmt::format(" over {} ranks", comm->size()) : std::string(), run_dir);
  const int rc = session.run();
  slots.close();
  std::printf("%s%s", session.header().c_str(), format_summary_table(session.results()).c_str());
  if (session.not_run() > 0) std::printf("%zu selected trial(s) not run (interrupted)\n", session.not_run());
  std::printf("tune: results in %s, table in %s\n", (fs::path(run_dir) / runfiles::kTuningResultsFileName).c_str(),
              (fs::path(run_dir) / runfiles::kTuningSummaryFileName).c_str());
  std::fflush(stdout);
  return rc;
}

void add_tune_command(CommandTree& tree) {
  CLI::App& root = tree.root;
  auto c = std::make_shared<TuneCli>();
  CLI::App* tune = root.add_subcommand(
      "tune", "Run the spec §6.3 hyper-parameter grid (or a subset) as separate `train pqt` / `train ga` trials");
  tune->add_option("--space", c->space, "Grid: pg (12), pg-topk (48), topk (60), is (144), ga (125)")->required();
  tune->add_option("--trials", c->trials, "Only these trial indices, e.g. 0,5,7");
  tune->add_option("--trial-range", c->trial_range, "Only trials A..B-1, as A:B (A or B may be left out)");
  add_unsigned(*tune, "--repetitions", c->repetitions, "Repetitions per trial, alternating over the tasks (default 50)",
               1, kMaxRepetitions);
  add_unsigned(*tune, "--max-npe", c->max_npe, "Programs-executed budget per repetition (default 5000000)");
  tune->add_option("--tasks", c->tasks,
                   "Task cycle, repetition r uses task r % len (default reverse-tune,remove-char-tune)");
  tune->add_option("--set", c->sets, "Override a fixed setting for every trial: --set key=value (repeatable)");
  tune->add_option("--run-dir", c->run_dir, "Session directory (default: runs/tune-<space>-<time>); rerun to continue");
  add_unsigned(*tune, "--parallel", c->parallel,
               "Trials at once without GPUs (default 1); with GPUs at most one per GPU", 1, kMaxParallel);
  add_unsigned(*tune, "--actors", c->actors, "Actor processes per trial (default: the config's)", 1, kMaxActors);
  tune->add_option("--node-dir", c->node_dir,
                   "Under mpirun/srun: where ranks other than 0 run their trials, \"{rank}\" replaced by the rank "
                   "(default: --run-dir on their host); results are gathered into rank 0's --run-dir");
  tune->add_flag("--dry-run", c->dry_run, "List the trials and their hyper-parameters; run nothing");
  tune->callback([c, status = &tree.status] {
    *status = run_tune(*c);
  });
}

const CommandFamily kRegistration(kOrderTune, add_tune_command);

}  // namespace
}  // namespace ringrl::app
