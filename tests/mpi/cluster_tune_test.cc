// `mpirun -np N ringrl tune ...` on localhost (app/cluster_jobs.h): the trials land on
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

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kBudget = "1500";         // programs per repetition: a trial takes a second or two
constexpr const char* kLongBudget = "60000";    // long enough to be interrupted
constexpr auto kStartWait = std::chrono::seconds(60);


struct Outcome {
  int status = -1;
  std::string out, err;
};

std::string slurp(int fd) {
  std::string s;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<std::size_t>(n));
  close(fd);
  return s;
}

// mpirun on localhost, oversubscribed (2 cores here), as root where the tests run as root.
std::vector<std::string> mpirun(int np) {
  std::vector<std::string> a = {RINGRL_MPIEXEC, "--oversubscribe", "--mca", "btl_vader_single_copy_mechanism", "none"};
  if (geteuid() == 0) a.push_back("--allow-run-as-root");
  a.push_back("-np");
  a.push_back(std::to_string(np));
  return a;
}

pid_t start(std::vector<std::string> args, int* out_fd, int* err_fd) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int o[2], e[2];
  if (pipe(o) != 0 || pipe(e) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(o[1], 1);
    dup2(e[1], 2);
    close(o[0]);
    close(e[0]);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(o[1]);
  close(e[1]);
  *out_fd = o[0];
  *err_fd = e[0];
  return pid;
}

Outcome finish(pid_t pid, int o, int e) {
  Outcome r;
  std::thread te([&] { r.err = slurp(e); });
  r.out = slurp(o);
  te.join();
  waitpid(pid, &r.status, 0);
  return r;
}

Outcome run(const std::vector<std::string>& args) {
  int o = -1, e = -1;
  const pid_t pid = start(args, &o, &e);
  return finish(pid, o, e);
}

std::vector<std::string> tune_args(const fs::path& dir, const char* budget, const std::string& trials) {
  return {RINGRL_BINARY, "tune",      "--space",    "pg",     "--trials", trials,
          "--repetitions", "1",       "--max-npe",  budget,   "--tasks",  "print",
          "--actors",    "1",         "--run-dir",  (dir / "session").string(),
          "--node-dir",  (dir / "node-{rank}").string()};
}

std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<nlohmann::json> lines(const fs::path& file) {
  std::vector<nlohmann::json> v;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) v.push_back(nlohmann::json::parse(line));
  return v;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Processes whose command line holds every string of `needles` (only ours name the test's dir).
std::vector<pid_t> processes_naming(const std::vector<std::string>& needles) {
  std::vector<pid_t> pids;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = read_text(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    bool all = !cmdline.empty();
    for (const auto& n : needles) all = all && cmdline.find(n) != std::string::npos;
    if (all) pids.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return pids;
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
