#include "sweeps/train_spread.h"

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
#include "learner/devices.h"
#include "learner/run_driver.h"
#include "mpi/job_messages.h"
#include "mpi/launch.h"

namespace ringrl::sweeps {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr auto kPollInterval = std::chrono::milliseconds(100);
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

  // This process's slots: one per GPU (for a trainer that uses one), or --parallel CPU slots.
  std::vector<std::string> devices;
  const int gpus = q.uses_gpu ? learner::cuda_device_count() : 0;
  if (gpus > 0) {
    const int n = std::min(gpus, q.parallel > 0 ? static_cast<int>(q.parallel) : gpus);
    for (int g = 0; g < n; ++g) devices.push_back(fmt::format("cuda:{}", g));
  } else {
    devices.assign(std::max<std::uint32_t>(1, q.parallel), "cpu");
  }
  const std::vector<std::string> words = shared_train_words(q.words);
  auto check_run_dir = [&] {
    if (fs::exists(results) && !q.resume)
      throw UsageError(fmt::format(
          "run directory {} already holds results: pass --resume to continue it, or choose another --run-dir",
          run.string()));
  };

  install_shutdown_handlers();
  LocalChildRunner local;
  ChildRunner* runner = &local;
  ClusterStart cluster;
  std::vector<std::string> where = devices;
  if (comm) {
    ClusterSetup setup;
    setup.session_dir = run;
    setup.node_dir = node_dir_for(q.node_dir.empty() ? run_dir : q.node_dir, comm->rank());
    setup.devices = devices;
    std::vector<std::string> settings = words;
    settings.push_back(q.run_dir);
    settings.push_back(q.node_dir);
    setup.fingerprint = mpi::fingerprint(settings);
    setup.check_on_rank0 = check_run_dir;
    cluster = open_cluster(*comm, setup);
    if (comm->rank() != 0) return cluster.refused ? kExitUsage : run_job_worker(*comm, setup, cluster.shared);
    runner = cluster.jobs.get();
    devices = cluster.jobs->devices();
    where = cluster.jobs->slot_names();
  } else {
    check_run_dir();
  }
  fs::create_directories(run);

  std::set<std::int64_t> done;
  if (fs::exists(results)) done = runfiles::completed_values(runfiles::read_json_lines(results));
  std::deque<std::uint32_t> pending;
  for (std::uint32_t r = 0; r < q.repetitions; ++r)
    if (done.count(r) == 0) pending.push_back(r);
  spdlog::info("train {}: {} of {} repetition(s) to run, {} at a time{}; run directory {}", q.algo, pending.size(),
               q.repetitions, devices.size(), comm ? fmt::format(" over {} ranks", comm->size()) : std::string(),
               run_dir);

  struct Running {
    std::uint32_t rep = 0;
    std::uint64_t child = 0;
  };
  std::vector<std::optional<Running>> slots(devices.size());
  std::vector<json> finished;
  bool forwarded = false, failed = false;
  for (;;) {
    for (std::size_t s = 0; s < slots.size() && !shutdown_requested(); ++s) {
      if (slots[s] || pending.empty()) continue;
      const std::uint32_t rep = pending.front();
      pending.pop_front();
      const fs::path dir = run / fmt::format("{}{}", kRepDirPrefix, rep);
      fs::create_directories(dir);
      std::vector<std::string> args = words;
      args.insert(args.end(), {"--run-dir", dir.string(), "--only-repetition", std::to_string(rep)});
      if (devices[s] != "cpu") args.insert(args.end(), {"--set", "device=" + devices[s]});
      slots[s] = Running{rep, runner->start(s, {args, dir, dir / runfiles::kLogFileName})};
      spdlog::info("train {}: repetition {} on {}{}; log {}", q.algo, rep, where[s],
                   has_resumable_state(dir) ? " (resumed)" : "", (dir / runfiles::kLogFileName).string());
    }
    bool any = false;
    for (const auto& s : slots) any |= s.has_value();
    if (!any) break;
    if (shutdown_requested() && !forwarded) {
      forwarded = true;
      spdlog::warn("train {}: signal {}: stopping the running repetitions (each writes a checkpoint)", q.algo,
                   shutdown_signal());
      for (const auto& s : slots)
        if (s) runner->signal(s->child, shutdown_signal());
    }
    runner->idle(kPollInterval);
    for (auto& s : slots) {
      if (!s) continue;
      const std::optional<int> st = runner->poll(s->child);
      if (!st) continue;
      const std::uint32_t rep = s->rep;
      s.reset();
      const fs::path dir = run / fmt::format("{}{}", kRepDirPrefix, rep);
      const std::optional<json> line = finished_line(dir, rep);
      if (line && done.count(rep) == 0) {
        // The repetition's line and final model join the run directory.
        runfiles::append_json_line(results, *line);
        const std::string model = runfiles::final_model_file_name(rep);
        std::error_code ec;
        fs::copy_file(dir / model, run / model, fs::copy_options::overwrite_existing, ec);
        if (ec) spdlog::warn("train {}: copying {}: {}", q.algo, (dir / model).string(), ec.message());
        if (!fs::exists(run / runfiles::kResolvedConfigName)) fs::copy_file(dir / runfiles::kResolvedConfigName, run / runfiles::kResolvedConfigName, ec);
        done.insert(rep);
        finished.push_back(*line);
        spdlog::info("train {}: repetition {} done ({} of {})", q.algo, rep, done.size(), q.repetitions);
      } else if (!(forwarded && WIFEXITED(*st) && WEXITSTATUS(*st) == kExitInterrupted)) {
        failed = true;
        spdlog::error("train {}: repetition {} ended with {}: {} (log {})", q.algo, rep,
                      WIFEXITED(*st) ? fmt::format("status {}", WEXITSTATUS(*st))
                                     : fmt::format("signal {}", WTERMSIG(*st)),
                      last_log_line(dir / runfiles::kLogFileName), (dir / runfiles::kLogFileName).string());
      }
    }
  }
  if (cluster.jobs) cluster.jobs->finish();

  std::sort(finished.begin(), finished.end(), [](const json& a, const json& b) {
    return a.value(runfiles::kRepetitionKey, 0) < b.value(runfiles::kRepetitionKey, 0);
  });
  // The driver's own words for each repetition (learner/run_driver.h: solved, summary).
  for (const json& r : finished) {
    std::printf("repetition %d: %s  %.1f s  %s\n", r.value(runfiles::kRepetitionKey, 0),
                r.value("solved", false) ? "SOLVED" : "not solved", r.value("seconds", 0.0),
                r.value("summary", std::string()).c_str());
  }
  std::printf("train %s: %zu of %u repetition(s) done; results in %s\n", q.algo.c_str(), done.size(), q.repetitions,
              results.c_str());
  std::fflush(stdout);
  if (forwarded || !pending.empty()) return kExitInterrupted;
  return failed ? kExitFailure : 0;
}

}  // namespace ringrl::sweeps
