// `mpirun -np 2 ringrl bench npe --json` on localhost (app/pqt_bench_cmd.cc): one invocation
// runs rank 0 alone with both ranks' actors, then the run across the ranks, and rank 0 prints
// one JSON line with both figures, their ratio and the records rank 1 gave; every rank, bridge
// and actor exits, and no /dev/shm segment and no bench directory is left. Ranks with other
// settings are refused in one line before rank 0 runs anything.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>
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

constexpr auto kWatchEvery = std::chrono::milliseconds(50);  // how often the ranks and actors are looked for
constexpr const char* kSeconds = "3";                        // per measurement: two of them

bool ok(const Outcome& r) { return WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0; }

// The words of a process's command line.
std::vector<std::string> words_of(pid_t pid) {
  const std::string raw = read_text(fs::path("/proc") / std::to_string(pid) / "cmdline");
  std::vector<std::string> w;
  std::string cur;
  for (char ch : raw) {
    if (ch == '\0') {
      w.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  return w;
}

bool alive(pid_t pid) { return fs::exists(fs::path("/proc") / std::to_string(pid)); }

class BenchNpe : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ringrl-bench-npe-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // The bench's directories (on rank 0 and the bridge) go here, and its actors name it.
    const char* old = std::getenv("TMPDIR");
    if (old != nullptr) old_tmpdir_ = old;
    had_tmpdir_ = old != nullptr;
    setenv("TMPDIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (had_tmpdir_)
      setenv("TMPDIR", old_tmpdir_.c_str(), 1);
    else
      unsetenv("TMPDIR");
    fs::remove_all(dir_);
  }
  // `bench npe` with a token on its command line that names this test's ranks.
  std::vector<std::string> bench(const std::vector<std::string>& more = {}) const {
    std::vector<std::string> a = {RINGRL_BINARY, "bench",     "npe",    "--task", "reverse", "--actors",
                                  "1",           "--seconds", kSeconds, "--json", "--set",   token()};
    a.insert(a.end(), more.begin(), more.end());
    return a;
  }
  std::string token() const { return "seed=" + std::to_string(getpid()); }

  fs::path dir_;
  std::string old_tmpdir_;
  bool had_tmpdir_ = false;
};

TEST_F(BenchNpe, TwoRanks) {
  int o = -1, e = -1;
  const pid_t launcher = start(cat(mpirun(2), bench()), &o, &e);
  ASSERT_GT(launcher, 0);
  // While it runs: its ranks, and the segments its actors attach to (their --config is in dir_).
  std::set<pid_t> ranks;
  std::set<std::string> segments;
  std::atomic<bool> done{false};
  std::thread watch([&] {
    while (!done.load(std::memory_order_relaxed)) {
      for (pid_t p : processes_naming({" bench npe ", token()}))
        if (p != launcher) ranks.insert(p);
      for (pid_t p : processes_naming({" actor ", dir_.string()})) {
        const std::vector<std::string> w = words_of(p);
        for (std::size_t i = 0; i + 1 < w.size(); ++i)
          if (w[i] == "--segment") segments.insert(w[i + 1]);
      }
      std::this_thread::sleep_for(kWatchEvery);
    }
  });
  const Outcome r = finish(launcher, o, e);
  done.store(true, std::memory_order_relaxed);
  watch.join();
  ASSERT_TRUE(ok(r)) << r.err;

  // One line, rank 0's: both runs, the same settings, rank 1's records in the second.
  std::istringstream out(r.out);
  std::string line, extra;
  ASSERT_TRUE(std::getline(out, line)) << r.out;
  EXPECT_FALSE(std::getline(out, extra)) << "only rank 0 prints: " << r.out;
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j.at("bench"), "npe");
  EXPECT_EQ(j.at("ranks"), 2);
  EXPECT_EQ(j.at("actors_per_rank"), 1);
  EXPECT_EQ(j.at("one_rank_actors"), 2);
  EXPECT_EQ(j.at("max_lag"), 0);
  const double one = j.at("one_rank_npe_per_s"), across = j.at("across_npe_per_s");
  EXPECT_GT(one, 0);
  EXPECT_GT(across, 0);
  EXPECT_GT(j.at("one_rank_npe").get<std::uint64_t>(), 0u);
  EXPECT_NEAR(j.at("ratio").get<double>(), across / one, 1e-9);
  EXPECT_NEAR(j.at("loss_percent").get<double>(), 100 * (1 - across / one), 1e-6);
  ASSERT_EQ(j.at("across_node_records").size(), 1u) << line;
  const std::uint64_t node = j.at("across_node_records")[0];
  EXPECT_GT(node, 0u) << "rank 1's actor fed the run across the ranks";
  // max_lag 0: the work gate holds over the job, in both runs.
  EXPECT_EQ(j.at("one_rank_lag_max"), 0) << line;
  EXPECT_EQ(j.at("across_lag_max"), 0) << line;
  EXPECT_EQ(j.at("one_rank_lag_p50"), 0) << line;
  EXPECT_EQ(j.at("across_lag_p50"), 0) << line;

  // Nothing left: ranks, bridge, actors, segments (rank 0's and the node's), directories.
  EXPECT_GE(ranks.size(), 2u) << "both ranks were seen";
  for (pid_t p : ranks) EXPECT_FALSE(alive(p)) << "rank process " << p << " is left";
  EXPECT_TRUE(processes_naming({dir_.string()}).empty()) << "no actor is left";
  EXPECT_GE(segments.size(), 2u) << "rank 0's segment and the node's were seen";
  for (const std::string& s : segments) EXPECT_FALSE(fs::exists(fs::path("/dev/shm") / s)) << s << " is left";
  EXPECT_TRUE(fs::is_empty(dir_)) << "the bench's directories are removed";
}

TEST_F(BenchNpe, RanksWithOtherSettingsAreRefusedInOneLine) {
  std::vector<std::string> args = cat(mpirun(1), bench());
  args.insert(args.end(), {":", "-np", "1"});
  args = cat(args, bench({"--set", "lr=0.002"}));
  const Outcome r = run(args);
  EXPECT_FALSE(ok(r));
  EXPECT_EQ(count(r.err, "ringrl: error: "), 1u) << r.err;
  EXPECT_NE(r.err.find("ringrl: error: rank 1 on "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("other settings than rank 0"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << "no figures";
  EXPECT_EQ(r.err.find("train: repetition"), std::string::npos) << "refused before rank 0 ran alone: " << r.err;
  EXPECT_TRUE(processes_naming({" bench npe ", token()}).empty());
}

}  // namespace
