// 16 ranks on localhost, oversubscribed (2 cores here; label "scale", run serially): one PQT
// run across all of them solves `print` with records from every rank and every record at lag
// 0 (max_lag 0), leaving no process and no /dev/shm entry; a tune of 12 trials over 16 ranks
// gives each trial its own rank and gathers every result into rank 0's table.
#include <sys/wait.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/mpi/mpirun_util.h"

namespace {

namespace fs = std::filesystem;
using namespace ringrl::testing;

constexpr int kRanks = 16;

class ClusterScale : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test_dir("ringrl-scale"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

bool ok(const Outcome& r) { return WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0; }

TEST_F(ClusterScale, SixteenRanksSolvePrintWithRecordsFromEveryRank) {
  const Outcome r = run(cat(mpirun(kRanks), {RINGRL_BINARY, "train", "pqt", "--task", "print", "--mode", "pqt",
                                             "--actors", "1", "--repetitions", "1", "--seed", "3", "--set",
                                             "timestep_limit=12", "--set", "batch_size=32", "--set", "lr=0.001",
                                             "--max-npe", "3000000", "--run-dir", (dir_ / "run").string()}));
  ASSERT_TRUE(ok(r)) << r.err;
  const auto res = lines(dir_ / "run" / "results.jsonl");
  ASSERT_EQ(res.size(), 1u);
  EXPECT_TRUE(res[0]["found_solution"].get<bool>()) << res[0].dump();
  // One records count per participant: rank 0's actors and 15 nodes, every one of them > 0,
  // summing to the run's NPE.
  const std::regex from(R"((\d+) from (?:the 1 local actor\(s\)|rank (\d+) \(\S+\)) \(0 restart\(s\), 0 late\))");
  std::uint64_t sum = 0;
  int participants = 0;
  for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), from); it != std::sregex_iterator(); ++it) {
    EXPECT_GT(std::stoull((*it)[1]), 0u) << (*it)[0];
    sum += std::stoull((*it)[1]);
    ++participants;
  }
  EXPECT_EQ(participants, kRanks) << r.err;
  EXPECT_EQ(sum, res[0]["npe"].get<std::uint64_t>());
  EXPECT_NE(r.out.find("lag p50 0 max 0"), std::string::npos) << r.out;
  EXPECT_EQ(processes_naming({dir_.string()}).size(), 0u) << "no rank, bridge or actor is left";
  for (const auto& e : fs::directory_iterator("/dev/shm"))
    EXPECT_EQ(e.path().filename().string().find("-node"), std::string::npos)
        << "a node segment is left: " << e.path();
}

TEST_F(ClusterScale, SixteenRanksSpreadATunesTrials) {
  const Outcome r = run(cat(mpirun(kRanks), {RINGRL_BINARY, "tune", "--space", "pg", "--trials",
                                             "0,1,2,3,4,5,6,7,8,9,10,11", "--repetitions", "1", "--max-npe", "1500",
                                             "--tasks", "print", "--actors", "1", "--run-dir",
                                             (dir_ / "session").string(), "--node-dir",
                                             (dir_ / "node-{rank}").string()}));
  ASSERT_TRUE(ok(r)) << r.err;
  // Twelve trials on twelve different ranks (one slot each), every result in rank 0's table.
  std::vector<int> on_rank(kRanks, 0);
  const std::regex placed(R"(tune: trial \d+ \[\d+/12\] .*? of rank (\d+) \()");
  for (auto it = std::sregex_iterator(r.err.begin(), r.err.end(), placed); it != std::sregex_iterator(); ++it)
    ++on_rank.at(static_cast<std::size_t>(std::stoi((*it)[1])));
  int used = 0;
  for (int n : on_rank) {
    EXPECT_LE(n, 1) << r.err;
    used += n;
  }
  EXPECT_EQ(used, 12) << r.err;
  EXPECT_EQ(count(read_text(dir_ / "session" / "tuning_summary.txt"), " ok"), 12u);
  EXPECT_EQ(processes_naming({dir_.string()}).size(), 0u);
}

}  // namespace
