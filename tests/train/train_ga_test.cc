// `ringrl train ga` end to end through the binary: solving an easy task, the same run with one
// or two actors or the learner as evaluator, resume after SIGINT, one-line errors, and
// `ringrl tune --space ga` running a trial.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/train/run_util.h"

namespace {

using namespace ringrl::testing;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("ringrl-test-ga-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  return d;
}

bool ok(const RunResult& r) { return WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0; }

// The run segment the learner with process id `pid` creates (common/shm_segment.h).
fs::path segment_of(pid_t pid) {
  return fs::path("/dev/shm") / ("ringrl-" + std::to_string(getuid()) + "-train-" + std::to_string(pid));
}

// run() that also checks the learner left no run segment behind.
RunResult run_train(const std::vector<std::string>& args) {
  RunResult r;
  int o = -1, e = -1;
  const pid_t pid = start(args, &o, &e);
  std::thread te([&] { r.err = slurp(e); });
  r.out = slurp(o);
  te.join();
  waitpid(pid, &r.status, 0);
  EXPECT_FALSE(fs::exists(segment_of(pid))) << "run segment left in /dev/shm";
  return r;
}

std::vector<std::string> job(const std::string& task, const fs::path& dir, const std::string& max_npe) {
  return {"train", "ga",        "--task", task,     "--run-dir", dir.string(), "--repetitions",
          "1",     "--max-npe", max_npe,  "--seed", "4",         "--set",      "metrics_every_s=0.2"};
}

class TrainGa : public ::testing::Test {
 protected:
  void SetUp() override { prctl(PR_SET_CHILD_SUBREAPER, 1); }
};

TEST_F(TrainGa, TwoActorsSolveAnEasyTaskAndWriteTheRunDirectory) {
  const fs::path dir = fresh_dir("solve");
  auto args = job("print", dir, "3000000");
  args.insert(args.end(), {"--actors", "2", "--set", "timestep_limit=12", "--set", "check_every=10"});
  const RunResult r = run_train(args);
  ASSERT_TRUE(ok(r)) << r.err;
  const auto res = results(dir);
  ASSERT_EQ(res.size(), 1u) << r.out << r.err;
  EXPECT_TRUE(res[0]["found_solution"].get<bool>()) << res[0].dump();
  const auto npe = res[0]["npe"].get<std::uint64_t>();
  const auto generations = res[0]["generations"].get<std::uint64_t>();
  EXPECT_EQ(npe, generations * 100) << "NPE = generations x population";
  EXPECT_EQ(generations % 10, 0u) << "solved only at a correctness check";
  EXPECT_EQ(res[0]["mode"], "ga");
  EXPECT_EQ(res[0]["batch_size"], 100);
  const std::string code = res[0]["code_solution"];
  ASSERT_EQ(code.size(), 12u);
  const RunResult score = run({"bf", "score", "--task", "print", code});
  EXPECT_NE(score.out.find("\"correct\":true"), std::string::npos) << score.out << score.err;
  for (const char* f : {"config.json", "metrics.csv", "solutions.txt", "model-rep0.ckpt"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  EXPECT_FALSE(fs::exists(dir / "checkpoint.bin"));
  std::ifstream csv(dir / "metrics.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header.rfind("step,wall_s,rep,npe,npe_per_s,generation", 0), 0u) << header;
  fs::remove_all(dir);
}

TEST_F(TrainGa, SameSeedSameRunWithOneOrTwoActorsOrTheLearnerAsEvaluator) {
  std::vector<nlohmann::json> lines;
  const std::vector<std::vector<std::string>> variants = {
      {"--actors", "1", "--set", "evaluator=actors"},
      {"--actors", "2", "--set", "evaluator=actors"},
      {"--set", "evaluator=learner", "--set", "learner_threads=2"}};
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const fs::path dir = fresh_dir("det" + std::to_string(v));
    auto args = job("reverse", dir, "20000");
    args.insert(args.end(), variants[v].begin(), variants[v].end());
    const RunResult r = run_train(args);
    ASSERT_TRUE(ok(r)) << r.err;
    const auto res = results(dir);
    ASSERT_EQ(res.size(), 1u);
    lines.push_back(res[0]);
    fs::remove_all(dir);
  }
  for (std::size_t v = 1; v < lines.size(); ++v) {
    EXPECT_EQ(lines[v]["npe"], lines[0]["npe"]);
    EXPECT_EQ(lines[v]["best_code"], lines[0]["best_code"]) << lines[v].dump() << "\n" << lines[0].dump();
    EXPECT_EQ(lines[v]["best_reward"], lines[0]["best_reward"]);
    EXPECT_EQ(lines[v]["executed"], lines[0]["executed"]);
  }
  EXPECT_EQ(lines[0]["npe"], 20000);
}

TEST_F(TrainGa, ResumeAfterSigintEndsLikeAnUninterruptedRun) {
  const fs::path straight = fresh_dir("straight"), dir = fresh_dir("resume");
  // About 3 s of GA at ~190k programs/s on 2 cores; the signal lands at the first metrics row
  // (0.2 s), so the run cannot end first.
  constexpr const char* kBudget = "600000";
  ASSERT_TRUE(ok(run_train(job("reverse", straight, kBudget))));
  const auto want = results(straight);
  ASSERT_EQ(want.size(), 1u);

  int o = -1, e = -1;
  const pid_t pid = start(job("reverse", dir, kBudget), &o, &e);
  std::thread drain_out([&] { slurp(o); });
  std::string err;
  std::thread drain_err([&] { err = slurp(e); });
  // Interrupt once the metrics show progress.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream csv(dir / "metrics.csv");
    std::string line;
    int rows = 0;
    while (std::getline(csv, line)) ++rows;
    if (rows >= 2) break;
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  drain_out.join();
  drain_err.join();
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << err;
  EXPECT_FALSE(fs::exists(segment_of(pid))) << "run segment left in /dev/shm";
  ASSERT_TRUE(fs::exists(dir / "checkpoint.bin"));
  EXPECT_TRUE(results(dir).empty());

  const RunResult r = run_train({"train", "ga", "--run-dir", dir.string(), "--resume"});
  ASSERT_TRUE(ok(r)) << r.err;
  EXPECT_NE(r.err.find("resuming repetition 0"), std::string::npos) << r.err;
  const auto got = results(dir);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0]["npe"], want[0]["npe"]);
  EXPECT_EQ(got[0]["best_code"], want[0]["best_code"]) << "the resumed run redoes the same generations";
  EXPECT_EQ(got[0]["best_reward"], want[0]["best_reward"]);
  fs::remove_all(dir);
  fs::remove_all(straight);
}

TEST_F(TrainGa, BadInputIsOneClearLineAndExitTwo) {
  const fs::path dir = fresh_dir("bad");
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  const std::vector<Case> cases = {
      {{"--task", "revers"}, "reverse"},
      {{"--task", "reverse", "--set", "population=2"}, "population 2"},
      {{"--task", "reverse", "--set", "population=-3"}, "population '-3'"},
      {{"--task", "reverse", "--set", "crossover_rate=1.5"}, "crossover_rate 1.5"},
      {{"--task", "reverse", "--set", "mutation_rate=abc"}, "mutation_rate"},
      {{"--task", "reverse", "--set", "evaluator=gpu"}, "evaluator 'gpu': expected actors or learner"},
      {{"--task", "reverse", "--max-npe", "-5"}, "--max-npe '-5'"},
      {{"--task", "reverse", "--set", "no_such_key=1"}, "no_such_key"},
      {{"--max-npe", "10"}, "no task given"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"train", "ga", "--run-dir", dir.string()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const RunResult r = run_train(args);
    EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2) << c.says << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir)) << "nothing is written before the settings are checked";
}

TEST_F(TrainGa, TuneRunsAGaTrialThroughTrainGa) {
  const fs::path dir = fresh_dir("tune");
  const RunResult dry = run({"tune", "--space", "ga", "--dry-run", "--trials", "7", "--run-dir", dir.string()});
  ASSERT_TRUE(ok(dry)) << dry.err;
  EXPECT_NE(dry.out.find("first child: ringrl train ga --task reverse-tune"), std::string::npos) << dry.out;
  EXPECT_EQ(dry.out.find("running this would fail"), std::string::npos) << dry.out;
  const RunResult r = run(
      {"tune", "--space", "ga", "--trials", "0", "--repetitions", "2", "--max-npe", "2000", "--run-dir", dir.string()});
  ASSERT_TRUE(ok(r)) << r.out << r.err;
  std::ifstream in(dir / "tuning_results.txt");
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["space"], "ga");
  EXPECT_EQ(j["status"], "ok") << line;
  EXPECT_EQ(j["num_runs"], 2);
  EXPECT_EQ(j["hparams"]["population"], 10);
  const auto child = results(dir / "trial_0" / "reverse-tune");
  ASSERT_EQ(child.size(), 1u);
  EXPECT_EQ(child[0]["population"], 10);
  EXPECT_EQ(child[0]["timestep_limit"], 50) << "the paper tuning's timestep_limit";
  fs::remove_all(dir);
}

}  // namespace
