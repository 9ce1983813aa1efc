// `ringrl train pqt` end to end: solving an easy task, resuming after SIGKILL of the whole
// process tree, TensorBoard events, and one-line errors.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/shm_segment.h"
#include "tests/train/run_util.h"

namespace {

using namespace ringrl::testing;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// What `ringrl checkpoint show --json` reports for `file`; null when it cannot be read.
nlohmann::json checkpoint_info(const fs::path& file) {
  const RunResult r = run({"checkpoint", "show", "--json", file.string()});
  if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) return {};
  return nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
}

// The run metadata of checkpoint `file`; null when it cannot be read.
nlohmann::json checkpoint_meta(const fs::path& file) {
  const nlohmann::json info = checkpoint_info(file);
  return info.is_object() && info.contains("run") ? info["run"] : nlohmann::json();
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("ringrl-test-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  return d;
}

std::vector<std::string> small_job(const fs::path& dir) {
  // An easy task with short programs: PQT finds `+.+.+.+.+.`-like programs quickly.
  return {"train",     "pqt",           "--task",        "print",   "--mode", "pqt", "--actors", "2",
          "--run-dir", dir.string(),    "--repetitions", "1",       "--seed", "3",   "--set",    "timestep_limit=12",
          "--set",     "batch_size=32", "--set",         "lr=0.001"};
}

class TrainPqt : public ::testing::Test {
 protected:
  void SetUp() override { prctl(PR_SET_CHILD_SUBREAPER, 1); }
};

TEST_F(TrainPqt, TwoActorsFindACorrectProgramWithinTheBudget) {
  const fs::path dir = fresh_dir("solve");
  auto args = small_job(dir);
  args.insert(args.end(), {"--max-npe", "3000000", "--set", "max_seconds=240"});
  const RunResult r = run(args);
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  const auto res = results(dir);
  ASSERT_EQ(res.size(), 1u) << r.out << r.err;
  EXPECT_TRUE(res[0]["found_solution"].get<bool>()) << res[0].dump();
  EXPECT_LE(res[0]["npe"].get<std::uint64_t>(), 3000000u);
  const std::string code = res[0]["code_solution"];
  EXPECT_EQ(code.size(), 12u);
  // The found program must really be correct: score it through the CLI.
  const RunResult score = run({"bf", "score", "--task", "print", code});
  EXPECT_NE(score.out.find("\"correct\":true"), std::string::npos) << score.out << score.err;
  EXPECT_NE(r.out.find(code), std::string::npos) << "the found program is printed";
  // Run directory contents.
  for (const char* f : {"config.json", "metrics.csv", "solutions.txt"}) EXPECT_TRUE(fs::exists(dir / f)) << f;
  EXPECT_FALSE(fs::exists(dir / "checkpoint.bin")) << "a finished repetition leaves no checkpoint";
  // ... but its final model, which loads into a learner made from the run's config.
  const nlohmann::json model = checkpoint_info(dir / "model-rep0.ckpt");
  ASSERT_TRUE(model.is_object()) << "no loadable final model";
  EXPECT_EQ(model["algorithm"], "pqt");
  EXPECT_TRUE(model["run"]["final"].get<bool>());
  EXPECT_EQ(model["run"]["npe"], res[0]["npe"]);
  EXPECT_TRUE(model["model"]["loaded"].get<bool>()) << model.dump();
  EXPECT_EQ(model["model"]["version"], res[0]["num_batches"]);
  fs::remove_all(dir);
}

TEST_F(TrainPqt, DefaultsStepOncePerBatchOfFreshPrograms) {
  const fs::path dir = fresh_dir("ratio");
  auto args = small_job(dir);
  args[3] = "reverse";  // not solved within the budget, so the budget ends the run
  constexpr std::uint64_t kBatch = 32, kBatches = 300;
  args.insert(args.end(), {"--max-npe", std::to_string(kBatch * kBatches)});
  const RunResult r = run(args);
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  const auto res = results(dir);
  ASSERT_EQ(res.size(), 1u) << r.out << r.err;
  // Pace learner (spec §5.7): one update per batch of B fresh programs, each counted when
  // the learner steps on it, so the budget stops the run after whole trained batches.
  const auto npe = res[0]["npe"].get<std::uint64_t>();
  const auto steps = res[0]["num_batches"].get<std::uint64_t>();
  EXPECT_EQ(steps * kBatch, npe) << res[0].dump();
  if (!res[0]["found_solution"].get<bool>()) {
    EXPECT_EQ(steps, kBatches) << res[0].dump();
  }
  fs::remove_all(dir);
}

TEST_F(TrainPqt, BatchesPerUpdateKeepsOneUpdatePerBatch) {
  const fs::path dir = fresh_dir("k4");
  auto args = small_job(dir);
  args[3] = "reverse";
  constexpr std::uint64_t kBatch = 32, kBatches = 96;
  args.insert(args.end(), {"--max-npe", std::to_string(kBatch * kBatches), "--set", "batches_per_update=4"});
  const RunResult r = run(args);
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  const auto res = results(dir);
  ASSERT_EQ(res.size(), 1u) << r.out << r.err;
  // Four batches per pass, still one update (and one learner step counted) per batch.
  const auto npe = res[0]["npe"].get<std::uint64_t>();
  const auto steps = res[0]["num_batches"].get<std::uint64_t>();
  EXPECT_EQ(steps * kBatch, npe) << res[0].dump();
  if (!res[0]["found_solution"].get<bool>()) {
    EXPECT_EQ(steps, kBatches) << res[0].dump();
  }
  EXPECT_EQ(res[0]["train_lag_max"], 0) << "max_lag 0 gates all four batches of a pass: " << res[0].dump();
  fs::remove_all(dir);
  // pace actors takes no whole batches: refused in one line.
  const RunResult bad = run({"train", "pqt", "--task", "reverse", "--run-dir", fresh_dir("k4-actors").string(), "--set",
                             "batches_per_update=2", "--set", "pace=actors"});
  EXPECT_TRUE(WIFEXITED(bad.status) && WEXITSTATUS(bad.status) == 2) << bad.err;
  EXPECT_NE(bad.err.find("batches_per_update 2"), std::string::npos) << bad.err;
}

// The values of column `name` in RUN_DIR/metrics.csv.
std::vector<double> metrics_column(const fs::path& dir, const std::string& name) {
  std::ifstream in(dir / "metrics.csv");
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  for (std::stringstream ss(line); std::getline(ss, line, ',');) header.push_back(line);
  const auto col = static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  std::vector<double> values;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string cell;
    for (std::size_t c = 0; std::getline(ss, cell, ','); ++c)
      if (c == col) values.push_back(std::stod(cell));
  }
  return values;
}

// One actor on reverse (not solved this soon) for `batches` batches of 32 at `max_lag`; returns
// the run's results line and checks that no episode was dropped as stale.
nlohmann::json lag_run(const std::string& name, std::uint64_t batches, unsigned max_lag) {
  const fs::path dir = fresh_dir(name);
  auto args = small_job(dir);
  args[3] = "reverse";
  args[7] = "1";  // --actors 1
  args.insert(args.end(), {"--max-npe", std::to_string(32 * batches), "--set", "max_lag=" + std::to_string(max_lag),
                           "--set", "metrics_every_s=0.05"});
  const RunResult r = run(args);
  EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  const auto res = results(dir);
  EXPECT_EQ(res.size(), 1u) << r.out << r.err;
  if (res.size() != 1) return {};
  nlohmann::json line = res[0];
  const std::vector<double> drain_lag = metrics_column(dir, "lag_max");
  const std::vector<double> dropped = metrics_column(dir, "dropped_stale");
  EXPECT_FALSE(dropped.empty());
  line["drain_lag_max"] = drain_lag.empty() ? -1.0 : *std::max_element(drain_lag.begin(), drain_lag.end());
  EXPECT_EQ(dropped.empty() ? -1.0 : *std::max_element(dropped.begin(), dropped.end()), 0.0) << line.dump();
  fs::remove_all(dir);
  return line;
}

TEST_F(TrainPqt, MaxLagZeroIsTheOriginalsSynchronousWorker) {
  // max_lag 0 (the default): sample, score, update, sample. With one actor, every one of 300
  // batches trains at lag 0, drained and trained.
  const nlohmann::json res = lag_run("lag0", 300, 0);
  ASSERT_TRUE(res.is_object());
  ASSERT_FALSE(res["found_solution"].get<bool>()) << res.dump();
  EXPECT_EQ(res["num_batches"], 300) << res.dump();
  EXPECT_EQ(res["max_lag"], 0) << res.dump();
  EXPECT_EQ(res["train_lag_max"], 0) << res.dump();
  EXPECT_EQ(res["drain_lag_max"], 0.0) << res.dump();
}

TEST_F(TrainPqt, MaxLagOneLetsTheActorSampleOneBatchAhead) {
  const nlohmann::json res = lag_run("lag1", 150, 1);
  ASSERT_TRUE(res.is_object());
  EXPECT_EQ(res["train_lag_max"], 1) << "the actor works one batch ahead: " << res.dump();
}

// Three actors on two cores finish their batches in any order; the learner trains them in the
// order they were claimed (learner/unit_order.h), so at max_lag 1 no episode arrives or trains
// at lag 2, and none is dropped as stale, in either PG mode and in PQT mode. (Before the unit
// order, a batch claimed early and finished late trained at lag 2 or 3.)
void three_actors_at_max_lag_one(const std::string& mode) {
  const fs::path dir = fresh_dir("lag1x3-" + mode);
  auto args = small_job(dir);
  args[3] = "reverse";
  args[5] = mode;
  args[7] = "3";  // --actors 3
  args.insert(args.end(), {"--max-npe", std::to_string(32 * 1000), "--set", "max_lag=1", "--set", "metrics_every_s=0.05"});
  const RunResult r = run(args);
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  const auto res = results(dir);
  ASSERT_EQ(res.size(), 1u) << r.out << r.err;
  EXPECT_LE(res[0]["train_lag_max"].get<int>(), 1) << res[0].dump();
  // The driver's lag of every episode as it arrived, from the summary line.
  const std::size_t at = r.out.find("lag p50 ");
  ASSERT_NE(at, std::string::npos) << r.out;
  unsigned p50 = 0, max = 0;
  ASSERT_EQ(std::sscanf(r.out.c_str() + at, "lag p50 %u max %u", &p50, &max), 2) << r.out;
  EXPECT_LE(max, 1u) << "an episode arrived at lag 2 or more: " << r.out;
  const std::vector<double> dropped = metrics_column(dir, "dropped_stale");
  ASSERT_FALSE(dropped.empty());
  EXPECT_EQ(*std::max_element(dropped.begin(), dropped.end()), 0.0) << "no episode is dropped as stale";
  fs::remove_all(dir);
}

TEST_F(TrainPqt, ThreeActorsAtMaxLagOneNeverTrainAtLagTwoInPgMode) { three_actors_at_max_lag_one("pg"); }
TEST_F(TrainPqt, ThreeActorsAtMaxLagOneNeverTrainAtLagTwoInPgPqtMode) { three_actors_at_max_lag_one("pg+pqt"); }
TEST_F(TrainPqt, ThreeActorsAtMaxLagOneNeverTrainAtLagTwoInPqtMode) { three_actors_at_max_lag_one("pqt"); }

TEST_F(TrainPqt, EightBatchesPerUpdateRunAndStopAtTheBatchThatEndsTheBudget) {
  // k = 8 is more than the old fixed pool of four batches held. A budget of 20 batches takes
  // passes of 8, 8 and 4: the budget is exact to the batch.
  const fs::path dir = fresh_dir("k8");
  auto args = small_job(dir);
  args[3] = "reverse";
  constexpr std::uint64_t kBatch = 32, kBatches = 20;
  args.insert(args.end(), {"--max-npe", std::to_string(kBatch * kBatches), "--set", "batches_per_update=8", "--set",
                           "max_seconds=120"});
  const RunResult r = run(args);
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  const auto res = results(dir);
  ASSERT_EQ(res.size(), 1u) << r.out << r.err;
  ASSERT_FALSE(res[0]["found_solution"].get<bool>()) << res[0].dump();
  EXPECT_EQ(res[0]["npe"], kBatch * kBatches) << res[0].dump();
  EXPECT_EQ(res[0]["num_batches"], kBatches) << res[0].dump();
  EXPECT_LT(res[0]["seconds"].get<double>(), 100.0) << "ended by the budget, not by max_seconds";
  fs::remove_all(dir);
  // A k whose rings could never be laid out: one line, exit 2.
  const RunResult bad = run({"train", "pqt", "--task", "reverse", "--run-dir", fresh_dir("k-huge").string(), "--set",
                             "batches_per_update=1000000"});
  EXPECT_TRUE(WIFEXITED(bad.status) && WEXITSTATUS(bad.status) == 2) << bad.err;
  EXPECT_NE(bad.err.find("batches_per_update 1000000: expected at most"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
}

TEST_F(TrainPqt, SolvingMidPassCountsTheNpeOfTheSolvingBatch) {
  // With batches_per_update 4 the run stops at the batch that found the solution: its NPE is
  // the NPE at which solutions.txt recorded the correct program, not the end of the pass.
  const fs::path dir = fresh_dir("k4-solve");
  auto args = small_job(dir);
  args.insert(args.end(), {"--max-npe", "3000000", "--set", "max_seconds=240", "--set", "batches_per_update=4"});
  const RunResult r = run(args);
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  const auto res = results(dir);
  ASSERT_EQ(res.size(), 1u) << r.out << r.err;
  ASSERT_TRUE(res[0]["found_solution"].get<bool>()) << res[0].dump();
  std::ifstream sol(dir / "solutions.txt");
  std::string line, last;
  while (std::getline(sol, line))
    if (!line.empty()) last = line;
  const nlohmann::json best = nlohmann::json::parse(last);
  EXPECT_EQ(best["code"], res[0]["code_solution"]) << last;
  EXPECT_EQ(best["npe"], res[0]["npe"]) << last << "\n" << res[0].dump();
  EXPECT_EQ(res[0]["npe"].get<std::uint64_t>(), res[0]["num_batches"].get<std::uint64_t>() * 32) << res[0].dump();
  fs::remove_all(dir);
}

TEST_F(TrainPqt, ResumeTakesARunDirectoryFromBeforeQueueOffer) {
  const fs::path dir = fresh_dir("old-config");
  auto args = small_job(dir);
  args[3] = "reverse";
  args.insert(args.end(), {"--max-npe", "640"});
  RunResult r = run(args);
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  // The run directory as an earlier build left it: no queue_offer key, no results yet.
  nlohmann::json cfg;
  std::ifstream(dir / "config.json") >> cfg;
  ASSERT_EQ(cfg.value("queue_offer", ""), "batch_best");
  cfg.erase("queue_offer");
  std::ofstream(dir / "config.json") << cfg.dump(2);
  fs::remove(dir / "results.jsonl");
  r = run({"train", "pqt", "--run-dir", dir.string(), "--resume"});
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  EXPECT_EQ(results(dir).size(), 1u);
  fs::remove_all(dir);
}

TEST_F(TrainPqt, BudgetEndLeavesALoadableModelAndBadCheckpointsAreOneLineExitOne) {
  const fs::path dir = fresh_dir("budget");
  auto args = small_job(dir);
  args[3] = "reverse";  // not solved within 20k programs
  args.insert(args.end(), {"--max-npe", "20000"});
  const RunResult r = run(args);
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  const auto res = results(dir);
  ASSERT_EQ(res.size(), 1u);
  EXPECT_FALSE(res[0]["found_solution"].get<bool>());
  const fs::path model = dir / "model-rep0.ckpt";
  const nlohmann::json info = checkpoint_info(model);
  ASSERT_TRUE(info.is_object()) << "no loadable final model";
  EXPECT_TRUE(info["model"]["loaded"].get<bool>());

  // --resume of a finished run says so in one line and changes nothing.
  const RunResult again = run({"train", "pqt", "--run-dir", dir.string(), "--resume"});
  EXPECT_TRUE(WIFEXITED(again.status) && WEXITSTATUS(again.status) == 0) << again.err;
  EXPECT_NE(again.err.find("already done"), std::string::npos) << again.err;
  EXPECT_EQ(results(dir).size(), 1u);

  // A damaged copy: one line naming the file, exit status 1.
  std::string bytes;
  {
    std::ifstream in(model, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    bytes = ss.str();
  }
  ASSERT_GT(bytes.size(), 100u);
  const fs::path damaged = dir / "damaged.ckpt";
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x40);
  std::ofstream(damaged, std::ios::binary) << bytes;
  const RunResult bad = run({"checkpoint", "show", damaged.string()});
  EXPECT_TRUE(WIFEXITED(bad.status) && WEXITSTATUS(bad.status) == 1) << bad.err;
  EXPECT_NE(bad.err.find(damaged.string()), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;

  // A damaged checkpoint.bin stops --resume the same way, before any actor starts.
  const fs::path dir2 = fresh_dir("budget-resume");
  fs::create_directories(dir2);
  fs::copy_file(dir / "config.json", dir2 / "config.json");
  fs::copy_file(damaged, dir2 / "checkpoint.bin");
  const RunResult resume_bad = run({"train", "pqt", "--run-dir", dir2.string(), "--resume"});
  EXPECT_TRUE(WIFEXITED(resume_bad.status) && WEXITSTATUS(resume_bad.status) == 1) << resume_bad.err;
  EXPECT_NE(resume_bad.err.find("checkpoint.bin"), std::string::npos) << resume_bad.err;
  // A foreign file: one line.
  std::ofstream(dir2 / "checkpoint.bin", std::ios::binary) << "not a checkpoint at all, just some text\n";
  const RunResult foreign = run({"train", "pqt", "--run-dir", dir2.string(), "--resume"});
  EXPECT_TRUE(WIFEXITED(foreign.status) && WEXITSTATUS(foreign.status) == 1) << foreign.err;
  EXPECT_NE(foreign.err.find("ringrl: error: checkpoint"), std::string::npos) << foreign.err;
  fs::remove_all(dir);
  fs::remove_all(dir2);
}

TEST_F(TrainPqt, ResumeAfterSigkillOfTheWholeTreeContinuesFromTheCheckpoint) {
  const fs::path dir = fresh_dir("resume");
  auto args = small_job(dir);
  // A task that is not solved quickly, so the run is still going when it is killed.
  args[3] = "reverse";
  args.insert(args.end(), {"--max-npe", "100000000", "--set", "checkpoint_every_s=1", "--set", "max_seconds=8"});
  int o = -1, e = -1;
  const pid_t pid = start(args, &o, &e);
  std::thread drain_out([&] { slurp(o); });
  std::thread drain_err([&] { slurp(e); });
  const fs::path ck = dir / "checkpoint.bin";
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  nlohmann::json meta;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(ck)) {
      meta = checkpoint_meta(ck);
      if (!meta.is_null() && meta.value("npe", 0) > 0) break;
    }
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_FALSE(meta.is_null()) << "no checkpoint appeared";
  std::this_thread::sleep_for(1500ms);  // let a later checkpoint land
  meta = checkpoint_meta(ck);
  const auto ck_npe = meta.value("npe", std::uint64_t{0});
  ASSERT_GT(ck_npe, 0u);
  ASSERT_EQ(kill(-pid, SIGKILL), 0);  // learner and actors at once: nothing gets to clean up
  int status = 0;
  waitpid(pid, &status, 0);
  drain_out.join();
  drain_err.join();
  EXPECT_TRUE(results(dir).empty());
  // Nobody got to unlink the learner's segment. The resume below runs under a new id, and a
  // new run sweeps only leftovers older than a minute, so reclaim it here as that sweep would.
  EXPECT_TRUE(ringrl::ShmSegment::reclaim_if_stale(ringrl::segment_name("train-" + std::to_string(pid))));

  const RunResult r = run({"train", "pqt", "--run-dir", dir.string(), "--resume"});
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  EXPECT_NE(r.err.find("resuming repetition 0"), std::string::npos) << r.err;
  const auto res = results(dir);
  ASSERT_EQ(res.size(), 1u);
  EXPECT_GE(res[0]["npe"].get<std::uint64_t>(), ck_npe) << "NPE continues from the checkpoint";
  EXPECT_GE(res[0]["num_batches"].get<std::uint64_t>(), meta.value("version", std::uint64_t{0}));
  // A second resume has nothing left to do, and a run without --resume refuses the directory.
  const RunResult again = run({"train", "pqt", "--run-dir", dir.string(), "--resume"});
  EXPECT_TRUE(WIFEXITED(again.status) && WEXITSTATUS(again.status) == 0) << again.err;
  EXPECT_EQ(results(dir).size(), 1u);
  const RunResult refuse = run(small_job(dir));
  EXPECT_EQ(WEXITSTATUS(refuse.status), 2) << refuse.err;
  EXPECT_NE(refuse.err.find("--resume"), std::string::npos) << refuse.err;
  fs::remove_all(dir);
}

TEST_F(TrainPqt, MetricsAreReadableByTensorboard) {
  if (system("python3 -c 'import tensorboard' 2>/dev/null") != 0) GTEST_SKIP() << "python3 tensorboard missing";
  const fs::path dir = fresh_dir("tb");
  auto args = small_job(dir);
  args[3] = "reverse";
  args.insert(args.end(), {"--max-npe", "100000000", "--set", "max_seconds=4"});
  const RunResult r = run(args);
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  const std::string py =
      "import sys\n"
      "from tensorboard.backend.event_processing.event_accumulator import EventAccumulator\n"
      "ea = EventAccumulator(sys.argv[1]); ea.Reload()\n"
      "tags = ea.Tags()['scalars']\n"
      "assert 'train/npe' in tags and 'train/npe_per_s' in tags, tags\n"
      "npe = [e.value for e in ea.Scalars('train/npe')]\n"
      "assert len(npe) >= 2 and npe == sorted(npe) and npe[-1] > 0, npe\n"
      "print('ok', len(npe))\n";
  const fs::path script = dir / "check.py";
  std::ofstream(script) << py;
  const std::string cmd = "python3 " + script.string() + " " + dir.string() + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  std::string out;
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  EXPECT_EQ(pclose(p), 0) << out;
  EXPECT_EQ(out.rfind("ok", 0), 0u) << out;
  // metrics.csv has a header and rows.
  std::ifstream csv(dir / "metrics.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("step,wall_s,rep,npe,npe_per_s", 0), 0u) << header;
  fs::remove_all(dir);
}

TEST_F(TrainPqt, BadInputIsOneClearLine) {
  const fs::path dir = fresh_dir("bad");
  RunResult r = run({"train", "pqt", "--task", "revers", "--run-dir", dir.string()});
  EXPECT_EQ(WEXITSTATUS(r.status), 2);
  EXPECT_NE(r.err.find("reverse"), std::string::npos) << "closest names listed: " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = run({"train", "pqt", "--task", "reverse", "--set", "batch_size=abc", "--run-dir", dir.string()});
  EXPECT_EQ(WEXITSTATUS(r.status), 2);
  EXPECT_NE(r.err.find("batch_size 'abc'"), std::string::npos) << r.err;
  r = run({"train", "pqt", "--task", "reverse", "--mode", "nosuch", "--run-dir", dir.string()});
  EXPECT_EQ(WEXITSTATUS(r.status), 2);
  EXPECT_NE(r.err.find("pg+pqt"), std::string::npos) << "presets listed: " << r.err;
  r = run({"train", "pqt", "--task", "reverse", "--set", "queue_offer=sometimes", "--run-dir", dir.string()});
  EXPECT_EQ(WEXITSTATUS(r.status), 2);
  EXPECT_NE(r.err.find("queue_offer 'sometimes': expected batch_best or arrival"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = run({"train", "pqt", "--task", "reverse", "--set", "pace=fast", "--run-dir", dir.string()});
  EXPECT_EQ(WEXITSTATUS(r.status), 2);
  EXPECT_NE(r.err.find("pace 'fast': expected actors or learner"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir)) << "nothing is written before the settings are checked";
  fs::remove_all(dir);
}

TEST_F(TrainPqt, ExperienceReplayStepsOnHalfFreshBatches) {
  const fs::path dir = fresh_dir("replay");
  // pg with alpha 0.5: after the first step each step takes 16 fresh programs (and replays 16),
  // so NPE per step halves against plain pg.
  const RunResult r = run({"train",         "pqt",
                           "--task",        "print",
                           "--mode",        "pg",
                           "--actors",      "1",
                           "--run-dir",     dir.string(),
                           "--repetitions", "1",
                           "--seed",        "5",
                           "--max-npe",     "20000",
                           "--set",         "timestep_limit=12",
                           "--set",         "batch_size=32",
                           "--set",         "alpha=0.5",
                           "--set",         "stop_on_success=false"});
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  const auto res = results(dir);
  ASSERT_EQ(res.size(), 1u) << r.err;
  const auto npe = res[0]["npe"].get<std::uint64_t>();
  const auto steps = res[0]["num_batches"].get<std::uint64_t>();
  EXPECT_GE(npe, 20000u);
  EXPECT_GE(steps * 16 + 64, npe) << "steps " << steps << " for " << npe << " programs";
  EXPECT_LE(steps * 16, npe + 16);
  // The actors sample the fresh share (16), so max_lag 0 holds with replay too: no step
  // trains on a program sampled before the weights it starts from, and none is dropped.
  EXPECT_EQ(res[0]["train_lag_max"], 0) << res[0].dump();
  const std::vector<double> dropped = metrics_column(dir, "dropped_stale");
  ASSERT_FALSE(dropped.empty());
  EXPECT_EQ(*std::max_element(dropped.begin(), dropped.end()), 0.0);
  fs::remove_all(dir);
  const RunResult bad =
      run({"train", "pqt", "--task", "print", "--mode", "pqt", "--set", "alpha=0.5", "--run-dir", dir.string()});
  EXPECT_EQ(WEXITSTATUS(bad.status), 2);
  EXPECT_NE(bad.err.find("alpha"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1) << bad.err;
  fs::remove_all(dir);
}

}  // namespace
