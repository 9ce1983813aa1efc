// One run across nodes, `mpirun -np N ringrl train pqt ...` on localhost (mpi/node_bridge.h,
// learner/actor_source.h): 3 ranks solve `print` with records from every rank, counted per
// rank, made with the newest weights (lag 0 at max_lag 0), their sum the run's NPE, and the
// nodes and per-node rates in the run directory; ^C to mpirun stops every rank with a
// checkpoint and leaves no process and no /dev/shm entry, and --resume continues; kill -9 of a
// node's bridge ends the job naming the rank, and --resume continues; kill -9 of a node's
// actor (twice) is replaced by its bridge and the run completes, also one killed while it holds
// the run's only unit of work (granted again); ranks with other settings are
// refused in one line; a node that stops answering ends the job naming it, with a checkpoint; a
// 2-rank HIRO run holds its update ratio with rank 1's transitions in
// the replay.
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/run_segment.h"
#include "common/shm_segment.h"
#include "tests/mpi/mpirun_util.h"

namespace {

namespace fs = std::filesystem;
using namespace ringrl::testing;
using namespace std::chrono_literals;

constexpr auto kStartWait = std::chrono::seconds(90);
constexpr const char* kLongBudget = "40000";  // programs: five to ten seconds here (no stop on success)
constexpr const char* kInterruptedBudget = "150000";  // long enough for mpirun's delayed SIGTERM
constexpr const char* kStopGraceSeconds = "3";        // mpirun: ^C to SIGTERM, SIGTERM to SIGKILL

// The small PQT job of tests/train/train_pqt_test.cc: print is solved in a few thousand programs.
std::vector<std::string> pqt_args(const fs::path& dir, const std::vector<std::string>& more = {}) {
  std::vector<std::string> a = {RINGRL_BINARY, "train", "pqt",  "--task",      "print",  "--mode",
                                "pqt",         "--actors", "1", "--repetitions", "1",     "--seed",
                                "3",           "--set",  "timestep_limit=12",      "--set", "batch_size=32",
                                "--set",       "lr=0.001", "--run-dir", dir.string()};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

std::vector<std::string> long_job(const fs::path& dir, const char* budget = kLongBudget) {
  return pqt_args(dir, {"--max-npe", budget, "--set", "stop_on_success=false"});
}

bool ok(const Outcome& r) { return WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0; }

// mpirun with n ranks that gives each rank kStopGraceSeconds between its SIGTERM and SIGKILL
// when it ends the job (after ^C, or after a rank died): rank 0 writes its checkpoint then,
// also on a loaded machine (docs/cluster.md).
std::vector<std::string> mpirun_with_grace(int n) {
  std::vector<std::string> launcher = mpirun(n);
  launcher.insert(launcher.begin() + 1, {"--mca", "odls_base_sigkill_timeout", kStopGraceSeconds});
  return launcher;
}

std::string environ_of(pid_t pid) {
  std::string e = read_text(fs::path("/proc") / std::to_string(pid) / "environ");
  std::replace(e.begin(), e.end(), '\0', '\n');
  return e;
}

// The rank processes of the job that runs in `dir` (not mpirun `launcher`), by rank.
std::map<int, pid_t> ranks_of(const fs::path& dir, pid_t launcher) {
  std::map<int, pid_t> out;
  for (pid_t p : processes_naming({" train pqt ", dir.string()})) {
    if (p == launcher) continue;
    const std::string env = environ_of(p);
    const auto at = env.find("OMPI_COMM_WORLD_RANK=");
    if (at != std::string::npos) out[std::stoi(env.substr(at + 21))] = p;
  }
  return out;
}

// /dev/shm entries whose name holds one of `pids` (segments are named after their creator).
std::vector<std::string> shm_of(const std::vector<pid_t>& pids) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator("/dev/shm")) {
    const std::string name = e.path().filename().string();
    for (pid_t p : pids)
      if (name.rfind("ringrl", 0) == 0 && name.size() > std::to_string(p).size() &&
          name.substr(name.size() - std::to_string(p).size()) == std::to_string(p))
        out.push_back(name);
  }
  return out;
}

// The node segments a job's bridges announced in its log (their names hold no pid).
std::vector<std::string> node_segments(const std::string& log) {
  std::vector<std::string> out;
  const std::regex announced(R"(rank \d+ on \S+: \d+ actor\(s\) in node segment (\S+))");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), announced); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

// Of `names`, those still in /dev/shm.
std::vector<std::string> left_in_shm(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names)
    if (fs::exists(fs::path("/dev/shm") / n)) out.push_back(n);
  return out;
}

bool wait_for_rows(const fs::path& metrics, std::size_t rows) {
  const auto deadline = std::chrono::steady_clock::now() + kStartWait;
  while (std::chrono::steady_clock::now() < deadline) {
    if (count(read_text(metrics), "\n") >= rows + 1) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

// A started mpirun that a failed assertion must not leave running: SIGTERM ends its job.
struct Reaper {
  pid_t pid;
  ~Reaper() {
    if (pid > 0 && waitpid(pid, nullptr, WNOHANG) == 0) {
      kill(pid, SIGTERM);
      waitpid(pid, nullptr, 0);
    }
  }
};

class ClusterRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           (std::string("ringrl-run-") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
            std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Runs the 3-rank long job under `launcher`, sends ^C to mpirun once it runs, and checks that
  // no rank, bridge, actor or segment (rank 0's, or a node's) is left. Returns what it said.
  Outcome interrupt_once_running(const std::vector<std::string>& launcher) {
    int o = -1, e = -1;
    const pid_t pid = start(cat(launcher, long_job(dir_, kInterruptedBudget)), &o, &e);
    Reaper reaper{pid};
    EXPECT_TRUE(wait_for_rows(dir_ / "metrics.csv", 1)) << "the run did not start";
    std::vector<pid_t> pids;
    for (const auto& [rank, p] : ranks_of(dir_, pid)) pids.push_back(p);
    EXPECT_EQ(pids.size(), 3u);
    kill(pid, SIGINT);
    const Outcome r = finish(pid, o, e);
    std::this_thread::sleep_for(1s);  // actors of a killed bridge notice their parent is gone
    EXPECT_EQ(processes_naming({dir_.string()}).size(), 0u) << "no rank, bridge or actor is left";
    EXPECT_TRUE(shm_of(pids).empty()) << shm_of(pids).front();
    const std::vector<std::string> nodes = node_segments(r.err);
    EXPECT_EQ(nodes.size(), 2u) << r.err;
    EXPECT_TRUE(left_in_shm(nodes).empty()) << left_in_shm(nodes).front();
    return r;
  }
  // Waits for the first metrics row of the job `launcher` runs, then sends `sig` to the process
  // of `rank`.
  void signal_rank_once_running(pid_t launcher, int rank, int sig) {
    ASSERT_TRUE(wait_for_rows(dir_ / "metrics.csv", 1)) << "the run did not start";
    const auto ranks = ranks_of(dir_, launcher);
    ASSERT_EQ(ranks.count(rank), 1u);
    kill(ranks.at(rank), sig);
  }
  // The one PQT actor of node 1 (rank 1's bridge), once it runs; 0 if none does within kStartWait.
  pid_t node_actor() const {
    std::vector<pid_t> actors;
    const auto deadline = std::chrono::steady_clock::now() + kStartWait;
    while ((actors = processes_naming({"actor --kind pqt", (dir_ / "node-1").string()})).size() != 1 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(50ms);
    return actors.size() == 1 ? actors[0] : 0;
  }
  fs::path dir_;
};

TEST_F(ClusterRun, ThreeRanksSolvePrintWithRecordsFromEveryRank) {
  const Outcome r = run(cat(mpirun(3), pqt_args(dir_, {"--max-npe", "3000000"})));
  ASSERT_TRUE(ok(r)) << r.err;
  const auto res = lines(dir_ / "results.jsonl");
  ASSERT_EQ(res.size(), 1u);
  EXPECT_TRUE(res[0]["found_solution"].get<bool>()) << res[0].dump();
  // Every rank's records reached the learner; together they are the run's NPE.
  std::smatch m;
  const std::regex taken(
      R"(records taken: (\d+) from the 1 local actor\(s\) \(0 restart\(s\), 0 late\), (\d+) from rank 1 \(.*?\) \(0 restart\(s\), 0 late\), (\d+) from rank 2)");
  ASSERT_TRUE(std::regex_search(r.err, m, taken)) << r.err;
  const std::uint64_t local = std::stoull(m[1]), rank1 = std::stoull(m[2]), rank2 = std::stoull(m[3]);
  EXPECT_GT(local, 0u);
  EXPECT_GT(rank1, 0u);
  EXPECT_GT(rank2, 0u);
  EXPECT_EQ(local + rank1 + rank2, res[0]["npe"].get<std::uint64_t>());
  // Remote actors sampled with the newest weights (max_lag 0: every record at lag 0, while the
  // learner made hundreds of updates).
  EXPECT_GT(res[0]["num_batches"].get<std::uint64_t>(), 10u);
  const std::string metrics = read_text(dir_ / "metrics.csv");
  const std::string header = metrics.substr(0, metrics.find('\n'));
  EXPECT_NE(header.find("node0_records_per_s"), std::string::npos) << header;
  EXPECT_NE(header.find("node1_records_per_s"), std::string::npos) << header;
  EXPECT_NE(header.find("node2_records_per_s"), std::string::npos) << header;
  EXPECT_NE(r.out.find("lag p50 0 max 0"), std::string::npos) << r.out;
  const nlohmann::json nodes = nlohmann::json::parse(read_text(dir_ / "nodes.json"));
  EXPECT_EQ(nodes["nodes"], 3);
  EXPECT_EQ(nodes["actor_nodes"].size(), 2u);
}

TEST_F(ClusterRun, InterruptStopsEveryRankCleanlyAndResumeContinues) {
  // mpirun sends SIGTERM odls_base_sigkill_timeout seconds after ^C, and SIGKILL as long again later.
  const Outcome r = interrupt_once_running(mpirun_with_grace(3));
  EXPECT_NE(r.err.find("interrupted (signal 15); checkpoint written"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "checkpoint.bin"));

  const Outcome again = run(cat(mpirun(3), cat(long_job(dir_, kInterruptedBudget), {"--resume"})));
  ASSERT_TRUE(ok(again)) << again.err;
  EXPECT_NE(again.err.find("train: resuming repetition 0 at"), std::string::npos) << again.err;
  const auto res = lines(dir_ / "results.jsonl");
  ASSERT_EQ(res.size(), 1u);
  EXPECT_GE(res[0]["npe"].get<std::uint64_t>(), 150000u);
}

// Ctrl-C as a new user gives it: mpirun with its defaults, whose SIGKILL follows its SIGTERM
// after 1 s. No segment is left, rank 0's or a node's: each process unlinks its segment's name
// on the first signal, before its orderly stop.
TEST_F(ClusterRun, APlainInterruptLeavesNoSegmentBehind) {
  interrupt_once_running(mpirun(3));
}

// A rank 0 that stops answering (SIGSTOP) is noticed by its nodes after the silence bound:
// each says so in one line and ends, instead of running until the job's time limit.
TEST_F(ClusterRun, ANodeEndsWhenRankZeroStopsAnswering) {
  int o = -1, e = -1;
  const pid_t pid =
      start(cat(mpirun_with_grace(2), cat(long_job(dir_, kInterruptedBudget), {"--node-silence", "2"})), &o, &e);
  Reaper reaper{pid};
  ASSERT_TRUE(wait_for_rows(dir_ / "metrics.csv", 1)) << "the run did not start";
  const auto ranks = ranks_of(dir_, pid);
  ASSERT_EQ(ranks.count(0), 1u);
  kill(ranks.at(0), SIGSTOP);
  const Outcome r = finish(pid, o, e);
  kill(ranks.at(0), SIGKILL);  // should mpirun have left it stopped
  EXPECT_FALSE(ok(r));
  EXPECT_NE(r.err.find("ringrl: error: rank 0 stopped answering: no word for 2 s"), std::string::npos) << r.err;
  std::this_thread::sleep_for(2s);  // the stopped rank's actors notice their parent is gone
  EXPECT_EQ(processes_naming({dir_.string()}).size(), 0u) << "no rank, bridge or actor is left";
  EXPECT_TRUE(left_in_shm(node_segments(r.err)).empty()) << left_in_shm(node_segments(r.err)).front();
  for (const auto& name : shm_of({ranks.at(0)})) ringrl::ShmSegment::reclaim_if_stale(name);  // SIGKILL's leftover
}

// A node frozen when the run stops (its bridge and actor stopped with SIGSTOP; the run ends by
// max_seconds): rank 0 writes its results and final model, waits for the node's last word for a
// bounded time, says so, and exits without the MPI_Finalize that would wait for the node forever.
TEST_F(ClusterRun, ANodeFrozenAtTheStopDoesNotHoldRankZero) {
  int o = -1, e = -1;
  const pid_t pid = start(cat(mpirun(2), cat(long_job(dir_, kInterruptedBudget),
                                             {"--set", "max_seconds=6", "--node-silence", "300"})),
                          &o, &e);
  Reaper reaper{pid};
  ASSERT_TRUE(wait_for_rows(dir_ / "metrics.csv", 1)) << "the run did not start";
  const auto ranks = ranks_of(dir_, pid);
  ASSERT_EQ(ranks.size(), 2u);
  const pid_t actor = node_actor();
  ASSERT_NE(actor, 0);
  kill(ranks.at(1), SIGSTOP);
  kill(actor, SIGSTOP);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (fs::exists(fs::path("/proc") / std::to_string(ranks.at(0))) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(200ms);
  const bool rank0_ended = !fs::exists(fs::path("/proc") / std::to_string(ranks.at(0)));
  kill(ranks.at(1), SIGKILL);
  kill(actor, SIGKILL);
  const Outcome r = finish(pid, o, e);
  ASSERT_TRUE(rank0_ended) << "rank 0 waits for the frozen node\n" << r.err;
  EXPECT_NE(r.err.find("did not confirm its stop"), std::string::npos) << r.err;
  EXPECT_EQ(lines(dir_ / "results.jsonl").size(), 1u) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "model-rep0.ckpt"));
  // SIGKILL's leftover, once the killed bridge is reaped (it was mpirun's child).
  for (const auto& name : node_segments(r.err))
    for (int tries = 0; tries < 100; ++tries) {
      try {
        ringrl::ShmSegment::reclaim_if_stale(name);
        break;
      } catch (const std::exception&) {
        std::this_thread::sleep_for(100ms);
      }
    }
}

// Garbage in a live run: a node's ring made inconsistent (its published head moved off the
// frame grid while its actor is stopped). The bridge refuses the ring and sends the error as its
// last word; rank 0 ends the run at once with a checkpoint, in one line naming the node.
TEST_F(ClusterRun, GarbageFromANodeEndsTheRunWithACheckpointNamingTheNode) {
  int o = -1, e = -1;
  const pid_t pid = start(cat(mpirun(2), long_job(dir_, kInterruptedBudget)), &o, &e);
  Reaper reaper{pid};
  ASSERT_TRUE(wait_for_rows(dir_ / "metrics.csv", 1)) << "the run did not start";
  const pid_t actor = node_actor();
  ASSERT_NE(actor, 0);
  std::string cmdline = read_text(fs::path("/proc") / std::to_string(actor) / "cmdline");
  std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
  std::smatch m;
  ASSERT_TRUE(std::regex_search(cmdline, m, std::regex(R"(--segment (\S+))"))) << cmdline;
  {
    const ringrl::RunSegment node = ringrl::RunSegment::attach(m[1]);
    kill(actor, SIGSTOP);
    std::this_thread::sleep_for(50ms);
    ringrl::RingHeader* ring = node.ring(0);
    ring->head.store(ring->head.load() + 3);  // no frame ends there
  }
  const auto t0 = std::chrono::steady_clock::now();
  const Outcome r = finish(pid, o, e);
  kill(actor, SIGKILL);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << "named at once, not after a silence";
  EXPECT_FALSE(ok(r));
  const std::regex named(R"(ringrl: error: rank 1 on \S+: the node bridge failed: actor 0 ring is corrupt: [^\n]*; checkpoint written to \S+checkpoint\.bin; continue with --resume)");
  EXPECT_TRUE(std::regex_search(r.err, named)) << r.err;
  EXPECT_EQ(count(r.err, "ringrl: error:"), 1u) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "checkpoint.bin"));
}

// mpirun forwards a signal to every rank at once, so a bridge may report its stop before rank 0's
// own handler has run. A signal to one bridge alone is the extreme case: the run still stops as
// interrupted, with a checkpoint, rather than as a failed node.
TEST_F(ClusterRun, ASignalToOneBridgeInterruptsTheRunWithACheckpoint) {
  int o = -1, e = -1;
  const pid_t pid = start(cat(mpirun_with_grace(2), long_job(dir_, kInterruptedBudget)), &o, &e);
  Reaper reaper{pid};
  ASSERT_NO_FATAL_FAILURE(signal_rank_once_running(pid, 1, SIGTERM));
  const Outcome r = finish(pid, o, e);
  EXPECT_NE(r.err.find("was interrupted (signal 15); stopping the run"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("interrupted (signal 15); checkpoint written"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("the node bridge stopped"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "checkpoint.bin"));
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(processes_naming({dir_.string()}).size(), 0u) << "no rank, bridge or actor is left";
}

TEST_F(ClusterRun, KillOfANodeBridgeEndsTheJobNamingTheRankAndResumeContinues) {
  int o = -1, e = -1;
  const pid_t pid = start(cat(mpirun_with_grace(2), long_job(dir_)), &o, &e);
  Reaper reaper{pid};
  ASSERT_NO_FATAL_FAILURE(signal_rank_once_running(pid, 1, SIGKILL));
  const Outcome r = finish(pid, o, e);
  EXPECT_FALSE(ok(r));
  EXPECT_NE(r.err.find("rank 1"), std::string::npos) << "the job names the node\n" << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "checkpoint.bin")) << r.err;
  std::this_thread::sleep_for(2s);  // the dead bridge's actors notice their parent is gone
  EXPECT_EQ(processes_naming({dir_.string()}).size(), 0u);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(rank 1 on \S+: 1 actor\(s\) in node segment (\S+))"))) << r.err;
  const std::string node_segment = m[1];

  const Outcome again = run(cat(mpirun(2), cat(long_job(dir_), {"--resume"})));
  ASSERT_TRUE(ok(again)) << again.err;
  EXPECT_FALSE(fs::exists(fs::path("/dev/shm") / node_segment)) << "the resumed bridge reclaimed what SIGKILL left";
  EXPECT_NE(again.err.find("train: resuming repetition 0 at"), std::string::npos) << again.err;
  EXPECT_GE(lines(dir_ / "results.jsonl").at(0)["npe"].get<std::uint64_t>(), 40000u);
}

// A node that stops answering (its bridge stopped with SIGSTOP) ends the job after the silence
// bound, with one line naming the rank and a checkpoint of the learner, and --resume continues.
TEST_F(ClusterRun, ASilentNodeEndsTheJobNamingTheRankWithACheckpoint) {
  int o = -1, e = -1;
  const pid_t pid = start(cat(mpirun_with_grace(2), cat(long_job(dir_, kInterruptedBudget), {"--node-silence", "2"})), &o, &e);
  Reaper reaper{pid};
  ASSERT_NO_FATAL_FAILURE(signal_rank_once_running(pid, 1, SIGSTOP));
  const Outcome r = finish(pid, o, e);
  EXPECT_FALSE(ok(r));
  // Rank 0's line names the node first. The node, resumed when mpirun ends the job, may find
  // rank 0 gone and say so too.
  EXPECT_EQ(r.err.find("ringrl: error: "), r.err.find("ringrl: error: rank 1 on ")) << r.err;
  EXPECT_EQ(count(r.err, "ringrl: error: "), 1 + count(r.err, "ringrl: error: rank 0 stopped answering")) << r.err;
  EXPECT_NE(r.err.find("stopped answering: no word for 2 s; checkpoint written to"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir_ / "checkpoint.bin"));
  std::this_thread::sleep_for(2s);  // the dead bridge's actors notice their parent is gone
  EXPECT_EQ(processes_naming({dir_.string()}).size(), 0u) << "no rank, bridge or actor is left";

  // The learner's state resumes (for a second: the rest of the budget is the other tests' matter).
  const Outcome again = run(cat(mpirun(2), cat(long_job(dir_, kInterruptedBudget), {"--resume", "--max-seconds", "1"})));
  ASSERT_TRUE(ok(again)) << again.err;
  EXPECT_NE(again.err.find("train: resuming repetition 0 at"), std::string::npos) << again.err;
}

// Every rank parses the same command line, so each refuses a bad bound with the same line
// before any rank joins the job.
TEST_F(ClusterRun, ABadSilenceBoundIsRefusedBeforeTheJobStarts) {
  for (const char* bad : {"soon", "0", "86401"}) {
    const Outcome r = run(cat(mpirun(2), cat(long_job(dir_), {"--node-silence", bad})));
    EXPECT_FALSE(ok(r)) << bad;
    const std::string line = "ringrl: error: --node-silence '" + std::string(bad) + "': expected a number from 0.001 to 86400";
    EXPECT_EQ(count(r.err, "ringrl: error: "), count(r.err, line)) << r.err;
    EXPECT_GE(count(r.err, line), 1u) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "node-1")) << "no rank joined the job";
  }
}

TEST_F(ClusterRun, AKilledNodeActorIsReplacedByItsBridge) {
  int o = -1, e = -1;
  const pid_t pid = start(cat(mpirun(2), long_job(dir_)), &o, &e);
  Reaper reaper{pid};
  ASSERT_TRUE(wait_for_rows(dir_ / "metrics.csv", 1)) << "the run did not start";
  // Twice, mid-sampling most likely; the run still completes its budget.
  for (int round = 0; round < 2; ++round) {
    const pid_t actor = node_actor();
    ASSERT_NE(actor, 0) << "no actor on node 1";
    kill(actor, SIGKILL);
    std::this_thread::sleep_for(700ms);
  }
  const Outcome r = finish(pid, o, e);
  ASSERT_TRUE(ok(r)) << r.err;
  EXPECT_NE(r.err.find("(2 restart(s), "), std::string::npos) << r.err;
  EXPECT_GE(lines(dir_ / "results.jsonl").at(0)["npe"].get<std::uint64_t>(), 40000u);
}

// The work gate's lost-work bookkeeping for node actors: at max_lag 0 the run has one unit of
// work in flight, and every other unit is the node's. A node actor killed while it holds that
// unit (claimed, not yet pushed; caught stopped with SIGSTOP) never delivers it: the bridge
// names the unit's ticket and rank 0 skips it and grants another, or the job would wait forever.
TEST_F(ClusterRun, ANodeActorKilledHoldingTheRunsOnlyUnitHasItGrantedAgain) {
  constexpr std::uint64_t kBatch = 32;  // records per unit (pqt_args: batch_size=32)
  int o = -1, e = -1;
  const pid_t pid = start(cat(mpirun_with_grace(2), long_job(dir_)), &o, &e);
  Reaper reaper{pid};
  ASSERT_TRUE(wait_for_rows(dir_ / "metrics.csv", 1)) << "the run did not start";
  const pid_t actor = node_actor();
  ASSERT_NE(actor, 0) << "no actor on node 1";
  // Its segment: the --segment word of its command line.
  std::string cmdline = read_text(fs::path("/proc") / std::to_string(actor) / "cmdline");
  std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
  std::smatch m;
  ASSERT_TRUE(std::regex_search(cmdline, m, std::regex(R"(--segment (\S+))"))) << cmdline;
  const ringrl::RunSegment node = ringrl::RunSegment::attach(m[1]);
  bool held = false;
  for (int tries = 0; tries < 2000 && !held; ++tries) {
    kill(actor, SIGSTOP);
    std::this_thread::sleep_for(2ms);
    const ringrl::ActorSlot& slot = node.slot(0);
    held = slot.work_claimed.load() * kBatch > slot.records.load();
    if (held) {
      kill(actor, SIGKILL);
    } else {
      kill(actor, SIGCONT);
      std::this_thread::sleep_for(std::chrono::milliseconds(1 + tries % 7));
    }
  }
  ASSERT_TRUE(held) << "the node's actor was never caught holding a unit";
  // Without the bookkeeping the run stalls here; a stalled run fails the test (the Reaper ends it).
  const auto finish_by = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  siginfo_t ended{};
  while (waitid(P_PID, static_cast<id_t>(pid), &ended, WEXITED | WNOHANG | WNOWAIT) == 0 && ended.si_pid == 0 &&
         std::chrono::steady_clock::now() < finish_by)
    std::this_thread::sleep_for(100ms);
  ASSERT_NE(ended.si_pid, 0) << "the run stalled: the lost unit was not granted again";
  const Outcome r = finish(pid, o, e);
  ASSERT_TRUE(ok(r)) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(from rank 1 \(\S+\) \(1 restart\(s\), \d+ late\))"))) << r.err;
  EXPECT_GE(lines(dir_ / "results.jsonl").at(0)["npe"].get<std::uint64_t>(), 40000u);
}

// With the launcher's binding on (Open MPI binds each of 2 ranks to a core), every rank takes
// the node's CPUs back before it starts actors, says so, and the run completes; a rank with
// enough CPUs for its actors and itself is not warned.
TEST_F(ClusterRun, RanksBoundToACoreTakeTheNodesCpus) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "one CPU: nothing to bind";
  std::vector<std::string> launcher = mpirun(2);
  launcher.insert(launcher.end() - 2, {"--bind-to", "core"});
  const Outcome r = run(cat(launcher, pqt_args(dir_, {"--max-npe", "3000"})));
  ASSERT_TRUE(ok(r)) << r.err;
  const std::regex widened(R"(cluster: rank \d on \S+: the launcher bound it to 1 of \d+ CPUs; it now may use \d+)");
  EXPECT_EQ(std::distance(std::sregex_iterator(r.err.begin(), r.err.end(), widened), std::sregex_iterator()), 2)
      << r.err;
  EXPECT_EQ(r.err.find("they will take turns"), std::string::npos) << r.err;
  EXPECT_EQ(lines(dir_ / "results.jsonl").size(), 1u);
  // As many actors as CPUs, plus the learner or the bridge: each rank warns, naming its count.
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus > 4) return;  // too many actors for a test
  auto crowded = pqt_args(dir_ / "crowded", {"--max-npe", "3000"});
  crowded[8] = std::to_string(cpus);  // --actors
  const Outcome c = run(cat(launcher, crowded));
  ASSERT_TRUE(ok(c)) << c.err;
  for (const char* beside : {"the learner", "the bridge"})
    EXPECT_NE(c.err.find(fmt::format("may use {} CPU(s) for {} actor(s) and {}: they will take turns", cpus, cpus,
                                     beside)),
              std::string::npos)
        << c.err;
}

// The lag bound across nodes: units are dealt to the ranks in rotation and trained in the order
// they were claimed (learner/unit_order.h), so with one node slowed (its actor stopped and
// continued in a duty cycle) no record arrives or trains past max_lag, and none is dropped as
// stale. (Before, units trained in arrival order: the slow node's came in at lag 2 and more.)
struct LagCase {
  const char* mode;
  int max_lag;
};
class ClusterLag : public ClusterRun, public ::testing::WithParamInterface<LagCase> {};

TEST_P(ClusterLag, NoRecordPassesMaxLagWithOneNodeSlowed) {
  const LagCase c = GetParam();
  std::vector<std::string> args = long_job(dir_, "32000");
  args[4] = "reverse";  // --task: not solved this soon
  args[6] = c.mode;     // --mode
  args.insert(args.end(), {"--set", "max_lag=" + std::to_string(c.max_lag)});
  int o = -1, e = -1;
  const pid_t pid = start(cat(mpirun(3), args), &o, &e);
  Reaper reaper{pid};
  // Rank 2's actor runs a third of the time: stopped 40 ms, continued 20 ms, until the job ends.
  std::atomic<bool> done{false};
  std::thread slower([&] {
    while (!done.load()) {
      const std::vector<pid_t> actors = processes_naming({"actor --kind pqt", (dir_ / "node-2").string()});
      for (pid_t a : actors) kill(a, SIGSTOP);
      std::this_thread::sleep_for(40ms);
      for (pid_t a : actors) kill(a, SIGCONT);
      std::this_thread::sleep_for(20ms);
    }
  });
  const Outcome r = finish(pid, o, e);
  done.store(true);
  slower.join();
  ASSERT_TRUE(ok(r)) << r.err;
  const auto res = lines(dir_ / "results.jsonl");
  ASSERT_EQ(res.size(), 1u);
  EXPECT_LE(res[0]["train_lag_max"].get<int>(), c.max_lag) << res[0].dump();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(lag p50 (\d+) max (\d+))"))) << r.out;
  EXPECT_LE(std::stoi(m[2]), c.max_lag) << "a record arrived past max_lag: " << r.out;
  const std::string metrics = read_text(dir_ / "metrics.csv");
  const std::string header = metrics.substr(0, metrics.find('\n'));
  EXPECT_NE(header.find("dropped_stale"), std::string::npos);
  EXPECT_EQ(res[0]["npe"].get<std::uint64_t>(), 32000u) << "the budget, to the batch";
  // Every rank delivered, the slowed one too.
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(from rank 2 \(\S+\) \(\d+ restart\(s\), (\d+) late\))")))
      << r.err;
  EXPECT_EQ(m[1], "0") << r.err;
}

INSTANTIATE_TEST_SUITE_P(PgAndPqt, ClusterLag,
                         ::testing::Values(LagCase{"pg", 1}, LagCase{"pqt", 1}, LagCase{"pg", 3}, LagCase{"pqt", 3}),
                         [](const auto& info) {
                           return std::string(info.param.mode) + "_max_lag_" + std::to_string(info.param.max_lag);
                         });

// HIRO across two ranks: rank 1's collector feeds the same FIFO as rank 0's, so the rate
// limiter holds 1.00 low and 0.100 high updates per env step over the job, and rank 1's
// transitions enter the replay (counted per collector); the evaluator stays on rank 0.
TEST_F(ClusterRun, TwoRankHiroHoldsTheRatioWithRemoteTransitionsInReplay) {
  constexpr std::uint64_t kSteps = 4500, kInitial = 2500;
  const std::vector<std::string> hiro = {RINGRL_BINARY, "train",          "hiro",        "--env",
                                         "kinematic-maze", "--actors",    "1",           "--seed",
                                         "3",           "--max-env-steps", std::to_string(kSteps),
                                         "--device",    "cpu",            "--set",       "hidden=32",
                                         "--set",       "batch_size=32",  "--set",       "eval_every=1000",
                                         "--set",       "eval_episodes=2", "--run-dir",  dir_.string()};
  const Outcome r = run(cat(mpirun(2), hiro));
  ASSERT_TRUE(ok(r)) << r.err;
  const auto res = lines(dir_ / "results.jsonl");
  ASSERT_EQ(res.size(), 1u);
  EXPECT_EQ(res[0]["env_steps"].get<std::uint64_t>(), kSteps);
  EXPECT_EQ(res[0]["low_updates"].get<std::uint64_t>(), kSteps - kInitial) << "one low update per env step";
  EXPECT_EQ(res[0]["high_updates"].get<std::uint64_t>(), (kSteps - kInitial) / 10) << res[0].dump();
  EXPECT_NEAR(res[0]["low_updates_per_env_step"].get<double>(), 1.00, 1e-9);
  EXPECT_NEAR(res[0]["high_updates_per_env_step"].get<double>(), 0.100, 1e-9);
  // Steps in the replay per collector: rank 0's, then rank 1's; both fed it, and together they
  // are the run's env steps.
  const auto per = res[0]["env_steps_per_actor"].get<std::vector<std::uint64_t>>();
  ASSERT_EQ(per.size(), 2u) << res[0].dump();
  EXPECT_GT(per[0], 0u);
  EXPECT_GT(per[1], 500u) << "rank 1's collector kept pace (fair share over the job)";
  EXPECT_EQ(per[0] + per[1], kSteps);
  EXPECT_GE(res[0]["evals"].get<std::uint64_t>(), 1u) << "the evaluator on rank 0 reported";
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex(R"(records taken: \d+ from the 2 local actor\(s\) \(\d+ restart\(s\)\), (\d+) from rank 1)")))
      << r.err;
  EXPECT_GE(std::stoull(m[1]), per[1]) << "every admitted remote step came through rank 1's bridge";
  EXPECT_NE(r.err.find("cluster: 1 actor node(s), 1 actor(s) each"), std::string::npos) << r.err;
}

// GA's evaluators split each request by their place in the run: two ranks of one actor each
// give the results of one rank with two actors (GA does not depend on the actor count).
TEST_F(ClusterRun, TwoRankGaGivesTheOneRankResult) {
  const auto ga = [&](const fs::path& d, const char* actors) {
    return std::vector<std::string>{RINGRL_BINARY, "train",     "ga",        "--task",        "print", "--actors",
                                    actors,        "--max-npe", "30000",     "--repetitions", "1",     "--seed",
                                    "5",           "--set",     "evaluator=actors", "--run-dir", d.string()};
  };
  const Outcome one = run(ga(dir_ / "one", "2"));
  ASSERT_TRUE(ok(one)) << one.err;
  const Outcome two = run(cat(mpirun(2), ga(dir_ / "two", "1")));
  ASSERT_TRUE(ok(two)) << two.err;
  auto a = lines(dir_ / "one" / "results.jsonl"), b = lines(dir_ / "two" / "results.jsonl");
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  a[0].erase("seconds");
  b[0].erase("seconds");
  EXPECT_EQ(a[0], b[0]);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(two.err, m, std::regex(R"(records taken: (\d+) from the 1 local actor\(s\) \(\d+ restart\(s\)\), (\d+) from rank 1)")))
      << two.err;
  // Every request is split between the two evaluators by their place in the run (row j to
  // place j % 2), rank 0's included: each scores about half of the rows, none twice.
  const double local = std::stod(m[1]), remote = std::stod(m[2]);
  EXPECT_GT(remote, 0.4 * (local + remote)) << "rank 1's evaluator scored its share\n" << two.err;
  EXPECT_GT(local, 0.4 * (local + remote)) << "rank 0's evaluator scored its share\n" << two.err;
}

// The same for one run across nodes, 4 ranks: a node that cannot write its node directory
// (--node-dir) refuses the job in rank 0's one line, at once.
TEST_F(ClusterRun, ANodeThatCannotWriteItsNodeDirectoryEndsTheJobInOneLine) {
  expect_refused_for_node_directory(
      dir_, cat(mpirun(4), pqt_args(dir_ / "run", {"--max-npe", "3000", "--node-dir", (dir_ / "node-{rank}").string()})));
}

TEST_F(ClusterRun, RanksWithOtherSettingsAreRefusedInOneLine) {
  std::vector<std::string> args = cat(mpirun(1), pqt_args(dir_, {"--max-npe", "1000"}));
  args.insert(args.end(), {":", "-np", "1"});
  args = cat(args, pqt_args(dir_, {"--max-npe", "1000", "--set", "lr=0.002"}));
  const Outcome r = run(args);
  EXPECT_FALSE(ok(r));
  EXPECT_EQ(count(r.err, "ringrl: error: "), 1u) << r.err;
  EXPECT_NE(r.err.find("ringrl: error: rank 1 on "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("other settings than rank 0"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "results.jsonl"));
}

}  // namespace
