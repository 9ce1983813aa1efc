// `train ga --repetitions R` spread over processes (sweeps/train_spread.h): `--parallel 2` on
// one machine and `mpirun -np 2` give the results.jsonl of a one-process run (GA is
// deterministic per seed: the same lines but for the seconds), the final models in the run
// directory, and a resume that runs only what is missing; `train random` (one process) under
// mpirun is refused in one line.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

constexpr const char* kBudget = "20000";  // programs per GA repetition: a fraction of a second

std::vector<std::string> ga_args(const fs::path& run_dir, const std::vector<std::string>& more = {}) {
  std::vector<std::string> a = {RINGRL_BINARY, "train",     "ga",    "--task",   "print", "--repetitions",
                                "3",           "--max-npe", kBudget, "--run-dir", run_dir.string()};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// The results lines by repetition, without their wall time.
std::vector<nlohmann::json> comparable(const fs::path& run_dir) {
  std::vector<nlohmann::json> v = lines(run_dir / "results.jsonl");
  for (auto& l : v) l.erase("seconds");
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a["global_rep"] < b["global_rep"]; });
  return v;
}

bool ok(const Outcome& r) { return WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0; }

class TrainSpread : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           (std::string("ringrl-spread-") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
            std::to_string(getpid()));
    fs::remove_all(dir_);
    const Outcome one = run(ga_args(dir_ / "one-process"));
    ASSERT_TRUE(ok(one)) << one.err;
    reference_ = comparable(dir_ / "one-process");
    ASSERT_EQ(reference_.size(), 3u);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::vector<nlohmann::json> reference_;
};

TEST_F(TrainSpread, ParallelRepetitionsWriteWhatOneProcessWrites) {
  const fs::path run_dir = dir_ / "parallel";
  const Outcome r = run(ga_args(run_dir, {"--parallel", "2"}));
  ASSERT_TRUE(ok(r)) << r.err;
  EXPECT_EQ(comparable(run_dir), reference_);
  for (int rep = 0; rep < 3; ++rep) {
    EXPECT_TRUE(fs::exists(run_dir / ("model-rep" + std::to_string(rep) + ".ckpt"))) << rep;
    EXPECT_TRUE(fs::exists(run_dir / ("rep-" + std::to_string(rep)) / "train.log")) << rep;
  }
  EXPECT_NE(r.out.find("train ga: 3 of 3 repetition(s) done"), std::string::npos) << r.out;

  // Again without --resume: refused in one line, as a one-process run is.
  const Outcome again = run(ga_args(run_dir, {"--parallel", "2"}));
  EXPECT_TRUE(WIFEXITED(again.status) && WEXITSTATUS(again.status) == 2) << again.err;
  EXPECT_NE(again.err.find("already holds results: pass --resume"), std::string::npos) << again.err;

  // A lost repetition (its line and its directory) is all that --resume runs.
  auto kept = lines(run_dir / "results.jsonl");
  kept.erase(std::remove_if(kept.begin(), kept.end(), [](const auto& l) { return l["global_rep"] == 1; }), kept.end());
  {
    std::ofstream out(run_dir / "results.jsonl", std::ios::trunc);
    for (const auto& l : kept) out << l.dump() << "\n";
  }
  fs::remove_all(run_dir / "rep-1");
  const Outcome resumed = run(ga_args(run_dir, {"--parallel", "2", "--resume"}));
  ASSERT_TRUE(ok(resumed)) << resumed.err;
  EXPECT_NE(resumed.err.find("1 of 3 repetition(s) to run"), std::string::npos) << resumed.err;
  EXPECT_EQ(comparable(run_dir), reference_);
}

TEST_F(TrainSpread, TwoRanksWriteWhatOneProcessWritesIntoRankZerosDirectory) {
  const fs::path run_dir = dir_ / "ranks";
  std::vector<std::string> args = mpirun(2);
  const std::vector<std::string> ga = ga_args(run_dir, {"--node-dir", (dir_ / "node-{rank}").string()});
  args.insert(args.end(), ga.begin(), ga.end());
  const Outcome r = run(args);
  ASSERT_TRUE(ok(r)) << r.err;
  EXPECT_EQ(comparable(run_dir), reference_) << "the same seeds give the same repetitions on any rank";
  EXPECT_NE(r.err.find("of rank 1 ("), std::string::npos) << "rank 1 ran one\n" << r.err;
  for (int rep = 0; rep < 3; ++rep)
    EXPECT_TRUE(fs::exists(run_dir / ("model-rep" + std::to_string(rep) + ".ckpt"))) << rep;
}

TEST_F(TrainSpread, UnderMpirunRandomSearchIsRefusedInOneLine) {
  std::vector<std::string> args = mpirun(2);
  const std::vector<std::string> random = {RINGRL_BINARY, "train",     "random", "--task",    "print",
                                           "--max-npe",   "1000",      "--run-dir", (dir_ / "x").string()};
  args.insert(args.end(), random.begin(), random.end());
  const Outcome r = run(args);
  EXPECT_FALSE(ok(r));
  EXPECT_EQ(count(r.err, "ringrl: error: "), 1u) << r.err;
  EXPECT_NE(r.err.find("train random under mpirun/srun: it runs in one process"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "x"));
}

}  // namespace
