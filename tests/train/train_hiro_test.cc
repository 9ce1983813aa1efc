// `ringrl train hiro` end to end through the real binary (collector and evaluator processes,
// rings, rate limiter, learner, weight broadcast, run directory): a short kinematic-maze run,
// the update ratio with one and two actors, the evaluator's output, and SIGINT + --resume.
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

constexpr std::uint64_t kInitialSteps = 2500;  // spec §3, the config default

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("ringrl-test-hiro-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  return d;
}

// A small kinematic-maze job: small networks and batches keep the learner fast on a CPU. The
// evaluator answers asynchronously, so a short run asks it often: on a loaded machine a run
// with a single evaluation could end before it was recorded.
std::vector<std::string> small_job(const fs::path& dir, int actors, std::uint64_t max_env_steps) {
  return {"train",           "hiro",
          "--env",           "kinematic-maze",
          "--actors",        std::to_string(actors),
          "--run-dir",       dir.string(),
          "--seed",          "3",
          "--max-env-steps", std::to_string(max_env_steps),
          "--device",        "cpu",
          "--set",           "hidden=32",
          "--set",           "batch_size=32",
          "--set",           "eval_every=500",
          "--set",           "eval_episodes=2"};
}

void expect_rate(const nlohmann::json& r) {
  const auto steps = r["env_steps"].get<std::uint64_t>();
  ASSERT_GT(steps, kInitialSteps);
  EXPECT_NEAR(r["low_updates_per_env_step"].get<double>(), 1.00, 0.01) << r.dump();
  EXPECT_NEAR(r["high_updates_per_env_step"].get<double>(), 0.100, 0.002) << r.dump();
  EXPECT_EQ(r["low_updates"].get<std::uint64_t>(), steps - kInitialSteps) << "one low update per env step";
}

class TrainHiro : public ::testing::Test {
 protected:
  void SetUp() override { prctl(PR_SET_CHILD_SUBREAPER, 1); }
};

TEST_F(TrainHiro, ShortKinematicRunWritesTheRunDirectoryAndHoldsTheRatioWithOneActor) {
  const fs::path dir = fresh_dir("one");
  const RunResult r = run(small_job(dir, 1, 4500));
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  const auto res = results(dir);
  ASSERT_EQ(res.size(), 1u) << r.out << r.err;
  EXPECT_EQ(res[0]["env_steps"].get<std::uint64_t>(), 4500u);
  expect_rate(res[0]);
  EXPECT_EQ(res[0]["goal_space"], "hiro_xy");
  EXPECT_EQ(res[0]["targets"], "multi") << "the Maze trains on random targets";
  EXPECT_GE(res[0]["evals"].get<std::uint64_t>(), 1u) << "the evaluator reported (asked every 500 env steps)";
  for (const char* f : {"config.json", "metrics.csv", "model-rep0.ckpt", "eval_trajectory.csv"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  EXPECT_FALSE(fs::exists(dir / "checkpoint.bin")) << "a finished repetition leaves no checkpoint";
  std::ifstream traj(dir / "eval_trajectory.csv");
  std::string header;
  std::getline(traj, header);
  EXPECT_EQ(header, "episode,t,x,y,reward,distance");
  std::ifstream csv(dir / "metrics.csv");
  std::getline(csv, header);
  for (const char* col : {"low_critic_loss", "high_critic_loss", "low_mean_q", "intrinsic_reward", "eval_success",
                          "env_steps_per_s", "low_per_step", "lag_p50"})
    EXPECT_NE(header.find(col), std::string::npos) << col << " in " << header;
  fs::remove_all(dir);
}

// Two repetitions in two processes (sweeps/train_spread.h): each one's line reports its own
// outcome from the driver's solved and summary fields, not a PQT-shaped "best_reward=0".
TEST_F(TrainHiro, RepetitionsSpreadOverProcessesReportTheirOwnOutcome) {
  const fs::path dir = fresh_dir("spread");
  auto args = small_job(dir, 1, 3000);
  args.insert(args.end(), {"--repetitions", "2", "--parallel", "2", "--set", "eval=false"});
  const RunResult r = run(args);
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  const auto res = results(dir);
  ASSERT_EQ(res.size(), 2u) << r.out << r.err;
  for (const auto& line : res) {
    EXPECT_EQ(line["budget_key"], "env_steps");
    EXPECT_FALSE(line["solved"].get<bool>());
    EXPECT_NE(line["summary"].get<std::string>().find("3000 env steps"), std::string::npos) << line.dump();
  }
  for (int rep = 0; rep < 2; ++rep) {
    const std::string want = "repetition " + std::to_string(rep) + ": not solved";
    EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
  }
  EXPECT_NE(r.out.find("3000 env steps, 500 low / 50 high updates"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("best_reward"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

TEST_F(TrainHiro, TwoActorsHoldTheRatioAndBothContribute) {
  const fs::path dir = fresh_dir("two");
  auto args = small_job(dir, 2, 5500);
  args.insert(args.end(), {"--set", "eval=false"});
  const RunResult r = run(args);
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  const auto res = results(dir);
  ASSERT_EQ(res.size(), 1u) << r.out << r.err;
  expect_rate(res[0]);
  const auto per_actor = res[0]["env_steps_per_actor"].get<std::vector<std::uint64_t>>();
  ASSERT_EQ(per_actor.size(), 2u);
  for (const std::uint64_t n : per_actor) EXPECT_GT(n, 5500u / 4) << res[0].dump();
  fs::remove_all(dir);
}

TEST_F(TrainHiro, SigintThenResumeContinuesTheEnvStepCount) {
  const fs::path dir = fresh_dir("resume");
  // Metrics rows every 0.1 s let the signal land soon after the initial steps (about 1 s in),
  // far from the end of a budget that takes several seconds even on a fast machine.
  const std::uint64_t budget = 30000;
  auto args = small_job(dir, 1, budget);
  args.insert(args.end(), {"--set", "metrics_every_s=0.1"});
  int o = -1, e = -1;
  const pid_t pid = start(args, &o, &e);
  std::thread drain_out([&] { slurp(o); });
  std::thread drain_err([&] { slurp(e); });
  // Wait until training is under way (a metrics row past the initial steps), then SIGINT.
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  std::uint64_t seen = 0;
  while (std::chrono::steady_clock::now() < deadline && seen <= kInitialSteps + 200) {
    std::ifstream csv(dir / "metrics.csv");
    std::string line, last;
    while (std::getline(csv, line)) last = line;
    if (!last.empty() && last.rfind("step", 0) != 0) seen = std::stoull(last.substr(0, last.find(',')));
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_GT(seen, kInitialSteps) << "training never got past the initial steps";
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  drain_out.join();
  drain_err.join();
  ASSERT_TRUE(WIFEXITED(status)) << "the learner exits by itself after SIGINT";
  EXPECT_EQ(WEXITSTATUS(status), 130);
  ASSERT_TRUE(fs::exists(dir / "checkpoint.bin"));
  EXPECT_TRUE(results(dir).empty());

  const RunResult r = run({"train", "hiro", "--run-dir", dir.string(), "--resume"});
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  const std::string marker = "resuming repetition 0 at ";
  const auto at = r.err.find(marker);
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::uint64_t resumed_at = std::stoull(r.err.substr(at + marker.size()));
  EXPECT_GE(resumed_at, seen) << "the env-step count continues from the checkpoint";
  ASSERT_LT(resumed_at, budget) << "the signal landed mid-run";
  const auto res = results(dir);
  ASSERT_EQ(res.size(), 1u);
  EXPECT_EQ(res[0]["env_steps"].get<std::uint64_t>(), budget);
  expect_rate(res[0]);
  fs::remove_all(dir);
}

TEST_F(TrainHiro, BadInputIsOneClearLine) {
  const fs::path dir = fresh_dir("bad");
  RunResult r = run({"train", "hiro", "--env", "ant-maz", "--run-dir", dir.string()});
  EXPECT_EQ(WEXITSTATUS(r.status), 2) << r.err;
  EXPECT_NE(r.err.find("ant-maze"), std::string::npos) << r.err;
  r = run({"train", "hiro", "--env", "point-maze", "--goal", "orig", "--run-dir", dir.string()});
  EXPECT_EQ(WEXITSTATUS(r.status), 2) << r.err;
  EXPECT_NE(r.err.find("hiro_xy"), std::string::npos) << r.err;
  r = run({"train", "hiro", "--env", "kinematic-maze", "--correction", "best", "--run-dir", dir.string()});
  EXPECT_EQ(WEXITSTATUS(r.status), 2) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  r = run({"train", "hiro", "--env", "kinematic-maze", "--set", "actor_nice=25", "--run-dir", dir.string()});
  EXPECT_EQ(WEXITSTATUS(r.status), 2) << r.err;
  EXPECT_NE(r.err.find("actor_nice 25: expected 0 to 19"), std::string::npos) << r.err;
  r = run({"train", "hiro", "--env", "kinematic-maze", "--set", "learner_precision=fp16", "--run-dir", dir.string()});
  EXPECT_EQ(WEXITSTATUS(r.status), 2) << r.err;
  EXPECT_NE(r.err.find("learner precision 'fp16': expected fp32"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

}  // namespace
