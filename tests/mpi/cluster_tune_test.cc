// `mpirun -np N ringrl tune ...` on localhost (sweeps/cluster_jobs.h): the trials land on
// different ranks, every rank's results are gathered into rank 0's session directory, a rerun
// skips them; ranks started with different settings are refused in one line; a trial stopped
// by SIGTERM to the ranks resumes on a node that lost its directory, from rank 0's copy.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/mpi/mpirun_util.h"

namespace {

namespace fs = std::filesystem;
using namespace ringrl::testing;
using namespace std::chrono_literals;

constexpr const char* kBudget = "1500";         // programs per repetition: a trial takes a second or two
constexpr const char* kLongBudget = "60000";    // long enough to be interrupted
constexpr auto kStartWait = std::chrono::seconds(60);


std::vector<std::string> tune_args(const fs::path& dir, const char* budget, const std::string& trials) {
  return {RINGRL_BINARY, "tune",      "--space",    "pg",     "--trials", trials,
          "--repetitions", "1",       "--max-npe",  budget,   "--tasks",  "print",
          "--actors",    "1",         "--run-dir",  (dir / "session").string(),
          "--node-dir",  (dir / "node-{rank}").string()};
}

class ClusterTune : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           (std::string("ringrl-cluster-") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
            std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ClusterTune, TrialsLandOnEveryRankTheirResultsAreGatheredAndARerunSkipsThem) {
  const Outcome r = run(cat(mpirun(3), tune_args(dir_, kBudget, "0,1,2")));
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.out << r.err;
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_EQ(count(r.err, "of rank " + std::to_string(rank) + " ("), 1u) << "one trial per rank\n" << r.err;
  EXPECT_EQ(count(r.err, "own node directory: results are gathered"), 2u) << r.err;

  // Rank 0's session holds what a one-machine session holds, for every trial.
  const fs::path session = dir_ / "session";
  const auto table = lines(session / "tuning_results.txt");
  ASSERT_EQ(table.size(), 3u);
  for (const auto& t : table) {
    EXPECT_EQ(t["status"], "ok") << t.dump();
    EXPECT_EQ(t["num_runs"], 1) << t.dump();
  }
  for (int trial = 0; trial < 3; ++trial) {
    const fs::path task = session / ("trial_" + std::to_string(trial)) / "print";
    const auto res = lines(task / "results.jsonl");
    ASSERT_EQ(res.size(), 1u) << task;
    EXPECT_GE(res[0]["npe"].get<std::uint64_t>(), 1500u) << "the budget";
    EXPECT_TRUE(fs::exists(task / "model-rep0.ckpt")) << task;
    EXPECT_TRUE(fs::exists(task / "train.log")) << task;
  }
  // Ranks 1 and 2 ran theirs in their node directories: one trial each, never rank 0's.
  std::vector<int> ran_on(3, -1);
  for (int rank = 1; rank < 3; ++rank)
    for (int trial = 0; trial < 3; ++trial)
      if (fs::exists(dir_ / ("node-" + std::to_string(rank)) / ("trial_" + std::to_string(trial)) / "print" /
                     "results.jsonl"))
        ran_on[trial] = rank;
  EXPECT_EQ(std::count(ran_on.begin(), ran_on.end(), -1), 1) << "one trial ran on rank 0";
  EXPECT_EQ(std::count(ran_on.begin(), ran_on.end(), 1), 1);
  EXPECT_EQ(std::count(ran_on.begin(), ran_on.end(), 2), 1);
  EXPECT_FALSE(fs::exists(dir_ / "node-1" / "tuning_results.txt")) << "only rank 0 writes the session files";

  // The rerun starts nothing: every trial's results are in rank 0's directory.
  const std::string log_before = read_text(session / "trial_0" / "print" / "train.log");
  const Outcome again = run(cat(mpirun(3), tune_args(dir_, kBudget, "0,1,2")));
  ASSERT_TRUE(WIFEXITED(again.status) && WEXITSTATUS(again.status) == 0) << again.err;
  EXPECT_EQ(count(again.err, "already done; skipped"), 3u) << again.err;
  EXPECT_EQ(read_text(session / "trial_0" / "print" / "train.log"), log_before);
  EXPECT_EQ(lines(session / "tuning_results.txt").size(), 3u);
}

// A rank that fails before the job starts (it cannot write its node directory: a file is in
// the way), one of 4: rank 0 refuses the job in one line naming it, at once; no rank waits in a
// collective for it (before, the job hung until its time limit).
TEST_F(ClusterTune, ARankThatCannotWriteItsNodeDirectoryEndsTheJobInOneLine) {
  expect_refused_for_node_directory(dir_, cat(mpirun(4), tune_args(dir_, kBudget, "0,1,2,3")));
}

TEST_F(ClusterTune, RanksStartedWithOtherSettingsAreRefusedInOneLine) {
  std::vector<std::string> args = mpirun(1);
  args = cat(args, tune_args(dir_, kBudget, "0"));
  args.push_back(":");
  args.push_back("-np");
  args.push_back("1");
  args = cat(args, tune_args(dir_, "3000", "0"));  // rank 1: another budget
  const Outcome r = run(args);
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) != 0) << r.err;
  EXPECT_EQ(count(r.err, "ringrl: error: "), 1u) << r.err;
  EXPECT_NE(r.err.find("ringrl: error: rank 1 on "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("was started with other settings than rank 0"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "session" / "trial_0")) << "nothing ran";
}

TEST_F(ClusterTune, AnInterruptedTrialResumesOnANodeThatLostItsDirectory) {
  int o = -1, e = -1;
  const pid_t pid = start(cat(mpirun(2), tune_args(dir_, kLongBudget, "0,1")), &o, &e);
  // Both trials train (their first metrics rows are written), then ^C reaches mpirun.
  const fs::path on_rank0 = dir_ / "session" / "trial_0" / "print", on_rank1 = dir_ / "node-1" / "trial_1" / "print";
  const auto deadline = std::chrono::steady_clock::now() + kStartWait;
  while (!(fs::exists(on_rank0 / "metrics.csv") && fs::exists(on_rank1 / "metrics.csv")) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(fs::exists(on_rank1 / "metrics.csv")) << "rank 1's trial did not start";
  std::this_thread::sleep_for(500ms);
  // What mpirun does on ^C (after odls_base_sigkill_timeout) and srun on scancel: SIGTERM to
  // every rank.
  std::vector<pid_t> ranks = processes_naming({" tune ", dir_.string()});
  ranks.erase(std::remove(ranks.begin(), ranks.end(), pid), ranks.end());  // mpirun itself
  EXPECT_EQ(ranks.size(), 2u);
  for (pid_t rank : ranks) kill(rank, SIGTERM);
  const Outcome r = finish(pid, o, e);
  EXPECT_EQ(count(r.err, "interrupted: success rate"), 2u) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "session" / "trial_1" / "print" / "checkpoint.bin"))
      << "rank 1's checkpoint came to rank 0\n" << r.err;
  EXPECT_EQ(processes_naming({dir_.string()}).size(), 0u) << "every rank, trial and actor is gone";

  // Rank 1 lost its directory; its trial continues from rank 0's copy.
  fs::remove_all(dir_ / "node-1");
  const Outcome again = run(cat(mpirun(2), tune_args(dir_, kLongBudget, "0,1")));
  ASSERT_TRUE(WIFEXITED(again.status) && WEXITSTATUS(again.status) == 0) << again.err;
  EXPECT_EQ(count(again.err, "(resumed)"), 2u) << again.err;
  EXPECT_NE(read_text(on_rank1 / "train.log").find("resuming repetition 0 at"), std::string::npos)
      << read_text(on_rank1 / "train.log");
  for (const char* trial : {"trial_0", "trial_1"}) {
    const auto res = lines(dir_ / "session" / trial / "print" / "results.jsonl");
    ASSERT_EQ(res.size(), 1u) << trial;
    EXPECT_GE(res[0]["npe"].get<std::uint64_t>(), 60000u) << trial;
    EXPECT_FALSE(fs::exists(dir_ / "session" / trial / "print" / "checkpoint.bin")) << "gone once the run ended";
  }
}

}  // namespace
