#include "sweeps/train_spread.h"

#include "sweeps/slots.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "sweeps/child_runs.h"
#include "sweeps/cluster_jobs.h"
#include "common/errors.h"
#include "common/exit_status.h"
#include "common/runfiles/results_jsonl.h"
#include "common/runfiles/run_files.h"
#include "common/signals.h"
#include "learner/run_driver.h"
#include "mpi/job_messages.h"
#include "mpi/launch.h"

namespace ringrl::sweeps {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kRepDirPrefix = "rep-";

// Options that take a value, and flags, that are the spread's own (not the repetitions').
const std::set<std::string> kOwnValueOptions = {"--run-dir", "--node-dir", "--parallel", "--only-repetition"};
const std::set<std::string> kOwnFlags = {"--resume"};

bool under_several_ranks() {
  const mpi::LaunchEnvironment env = mpi::detect_launcher();
  return env.under_launcher && env.size_hint != 1;
}

// Repetition `rep`'s results line in its own run directory, if it finished.
std::optional<json> finished_line(const fs::path& rep_dir, std::uint32_t rep) {
  const fs::path file = rep_dir / runfiles::kResultsFileName;
  if (!fs::exists(file)) return std::nullopt;
  for (const json& line : runfiles::read_json_lines(file))
    if (line.value(runfiles::kRepetitionKey, std::int64_t{-1}) == static_cast<std::int64_t>(rep)) return line;
  return std::nullopt;
}

// One repetition per child, in RUN/rep-<r>; its results line and final model join RUN.
class RepetitionWork final : public SlotWork {
 public:
  RepetitionWork(const SpreadRequest& q, std::string who, std::vector<std::string> words, fs::path run,
                 SweepSlots& slots, std::deque<std::uint32_t> pending, std::set<std::int64_t> done)
      : q_(q),
        who_(std::move(who)),
        words_(std::move(words)),
        run_(std::move(run)),
        slots_(slots),
        pending_(std::move(pending)),
        done_(std::move(done)),
        on_slot_(slots.size(), 0) {}

  std::optional<std::uint64_t> start(std::size_t s) override {
    if (pending_.empty()) return std::nullopt;
    const std::uint32_t rep = pending_.front();
    pending_.pop_front();
    const fs::path dir = rep_dir(rep);
    fs::create_directories(dir);
    std::vector<std::string> args = words_;
    args.insert(args.end(), {"--run-dir", dir.string(), "--only-repetition", std::to_string(rep)});
    if (slots_.devices()[s] != "cpu") args.insert(args.end(), {"--set", "device=" + slots_.devices()[s]});
    on_slot_[s] = rep;
    const std::uint64_t child = slots_.runner().start(s, {args, dir, dir / runfiles::kLogFileName});
    spdlog::info("{}: repetition {} on {}{}; log {}", who_, rep, slots_.names()[s],
                 has_resumable_state(dir) ? " (resumed)" : "", (dir / runfiles::kLogFileName).string());
    return child;
  }

  std::optional<std::uint64_t> exited(std::size_t s, int st, bool stopping) override {
    const std::uint32_t rep = on_slot_[s];
    const fs::path dir = rep_dir(rep);
    const std::optional<json> line = finished_line(dir, rep);
    if (line && done_.count(rep) == 0) {
      // The repetition's line and final model join the run directory.
      runfiles::append_json_line(run_ / runfiles::kResultsFileName, *line);
      const std::string model = runfiles::final_model_file_name(rep);
      std::error_code ec;
      fs::copy_file(dir / model, run_ / model, fs::copy_options::overwrite_existing, ec);
      if (ec) spdlog::warn("{}: copying {}: {}", who_, (dir / model).string(), ec.message());
      if (!fs::exists(run_ / runfiles::kResolvedConfigName))
        fs::copy_file(dir / runfiles::kResolvedConfigName, run_ / runfiles::kResolvedConfigName, ec);
      done_.insert(rep);
      finished_.push_back(*line);
      spdlog::info("{}: repetition {} done ({} of {})", who_, rep, done_.size(), q_.repetitions);
    } else if (!(stopping && WIFEXITED(st) && WEXITSTATUS(st) == kExitInterrupted)) {
      failed_ = true;
      spdlog::error("{}: repetition {} ended with {}: {} (log {})", who_, rep,
                    WIFEXITED(st) ? fmt::format("status {}", WEXITSTATUS(st)) : fmt::format("signal {}", WTERMSIG(st)),
                    last_log_line(dir / runfiles::kLogFileName), (dir / runfiles::kLogFileName).string());
    }
    return std::nullopt;
  }

  /// The results lines of the repetitions this sweep finished, by repetition.
  std::vector<json> finished() const {
    std::vector<json> out = finished_;
    std::sort(out.begin(), out.end(), [](const json& a, const json& b) {
      return a.value(runfiles::kRepetitionKey, 0) < b.value(runfiles::kRepetitionKey, 0);
    });
    return out;
  }
  std::size_t done() const noexcept { return done_.size(); }
  std::size_t not_started() const noexcept { return pending_.size(); }
  bool failed() const noexcept { return failed_; }

 private:
  fs::path rep_dir(std::uint32_t rep) const { return run_ / fmt::format("{}{}", kRepDirPrefix, rep); }

  const SpreadRequest& q_;
  std::string who_;
  std::vector<std::string> words_;
  fs::path run_;
  SweepSlots& slots_;
  std::deque<std::uint32_t> pending_;
  std::set<std::int64_t> done_;
  std::vector<std::uint32_t> on_slot_;  // the repetition each slot runs
  std::vector<json> finished_;
  bool failed_ = false;
};

}  // namespace

std::vector<std::string> shared_train_words(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    const std::string name = w.substr(0, w.find('='));
    if (kOwnFlags.count(w) != 0) continue;
    if (kOwnValueOptions.count(name) != 0) {
      if (name == w) ++i;  // "--x v": skip the value too
      continue;
    }
    out.push_back(w);
  }
  return out;
}

bool spread_requested(const SpreadRequest& q) {
  const bool ranks = under_several_ranks();
  if (!ranks && q.parallel <= 1) return false;
  if (ranks && q.repetitions <= 1) return false;  // one run across nodes (mpi/node_bridge.h)
  if (q.repetitions <= 1)
    throw UsageError(fmt::format("--parallel {} runs repetitions at once: expected --repetitions above 1", q.parallel));
  return true;
}

bool one_run_across_nodes(const SpreadRequest& q) { return under_several_ranks() && q.repetitions <= 1; }

void refuse_several_ranks(const std::string& command) {
  if (!under_several_ranks()) return;
  if (mpi::detect_launcher().rank_hint > 0) std::exit(kExitUsage);  // every rank refuses; rank 0 says why
  throw UsageError(fmt::format("{} under mpirun/srun: it runs in one process; start it without the launcher",
                               command));
}

int run_spread(const SpreadRequest& q) {
  std::unique_ptr<mpi::Comm> comm = join_mpi_job();
  std::string run_dir = q.run_dir.empty() ? runfiles::timestamped_run_dir(q.algo) : q.run_dir;
  if (comm) run_dir = comm->broadcast(run_dir, 0);  // one directory: rank 0's (its time stamp)
  const fs::path run(run_dir);
  const fs::path results = run / runfiles::kResultsFileName;

  const std::vector<std::string> words = shared_train_words(q.words);
  install_shutdown_handlers();
  // This process's slots (one per GPU for a trainer that uses one, or --parallel CPU slots),
  // or every rank's.
  SweepSlots slots;
  ClusterSetup setup;
  if (comm) {
    setup.session_dir = run;
    setup.node_dir = node_dir_for(q.node_dir.empty() ? run_dir : q.node_dir, comm->rank());
    std::vector<std::string> settings = words;
    settings.push_back(q.run_dir);
    settings.push_back(q.node_dir);
    setup.fingerprint = mpi::fingerprint(settings);
  }
  const std::string who = "train " + q.algo;
  if (const auto worker = slots.open(comm.get(), sweep_devices(q.uses_gpu, q.parallel, who.c_str()), setup, [&] {
        if (fs::exists(results) && !q.resume)
          throw UsageError(fmt::format(
              "run directory {} already holds results: pass --resume to continue it, or choose another --run-dir",
              run.string()));
      }))
    return *worker;
  fs::create_directories(run);

  std::set<std::int64_t> done;
  if (fs::exists(results)) done = runfiles::completed_values(runfiles::read_json_lines(results));
  std::deque<std::uint32_t> pending;
  for (std::uint32_t r = 0; r < q.repetitions; ++r)
    if (done.count(r) == 0) pending.push_back(r);
  spdlog::info("{}: {} of {} repetition(s) to run, {} at a time{}; run directory {}", who, pending.size(),
               q.repetitions, slots.size(), comm ? fmt::format(" over {} ranks", comm->size()) : std::string(),
               run_dir);

  RepetitionWork work(q, who, words, run, slots, std::move(pending), std::move(done));
  const bool forwarded = run_on_slots(slots, work, who, "repetitions");
  slots.close();

  // The driver's own words for each repetition (learner/run_driver.h: solved, summary).
  for (const json& r : work.finished()) {
    std::printf("repetition %d: %s  %.1f s  %s\n", r.value(runfiles::kRepetitionKey, 0),
                r.value("solved", false) ? "SOLVED" : "not solved", r.value("seconds", 0.0),
                r.value("summary", std::string()).c_str());
  }
  std::printf("%s: %zu of %u repetition(s) done; results in %s\n", who.c_str(), work.done(), q.repetitions,
              results.c_str());
  std::fflush(stdout);
  if (forwarded || work.not_started() > 0) return kExitInterrupted;
  return work.failed() ? kExitFailure : 0;
}

}  // namespace ringrl::sweeps
