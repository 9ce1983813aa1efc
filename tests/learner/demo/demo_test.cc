// The demo wing (learner/demo, actors/demo): its Algorithm fed by hand (a gradient moves w, a
// stale one is dropped, a malformed one names its actor, a checkpoint restores w), and
// `ringrl demo` end to end (w reaches the target's noise level; nothing is left behind; with
// --run-dir the run files stay). Torch-free: the sanitizer builds run it too.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "common/checkpoint.h"
#include "common/demo/demo_record.h"
#include "common/errors.h"
#include "common/records.h"
#include "common/shm_segment.h"
#include "learner/demo/demo_algorithm.h"
#include "tests/common/child_process.h"

namespace ringrl::demo {
namespace {

namespace fs = std::filesystem;

DemoOptions options() {
  DemoOptions o;
  o.run_dir = "unused";
  o.dim = 8;
  o.record_bytes = static_cast<std::uint32_t>(sizeof(DemoRecord) + 4 * sizeof(float));
  return o;
}

// A record of g = `value` for chunk `chunk` of 4 floats.
std::vector<std::byte> record(std::uint32_t chunk, float value, std::uint32_t count = 4) {
  std::vector<std::byte> bytes(sizeof(DemoRecord) + count * sizeof(float));
  const DemoRecord h{0, chunk, count};
  std::memcpy(bytes.data(), &h, sizeof h);
  for (std::uint32_t k = 0; k < count; ++k) std::memcpy(bytes.data() + sizeof h + k * sizeof(float), &value, sizeof value);
  return bytes;
}

RecordView view(const std::vector<std::byte>& bytes) {
  RecordView v;
  v.type = kRecordDemoGradient;
  v.data = bytes.data();
  v.length = static_cast<std::uint32_t>(bytes.size());
  return v;
}

std::vector<float> weights(const learner::Algorithm& algo) {
  std::vector<float> w(algo.blob_bytes() / sizeof(float));
  algo.write_blob(reinterpret_cast<std::byte*>(w.data()));
  return w;
}

TEST(DemoAlgorithm, AGradientMovesItsChunkAndAStaleOneIsDropped) {
  const auto algo = make_demo_algorithm(options());
  algo->begin_repetition(0);
  algo->on_record(0, view(record(1, 2.0f)), 0);
  std::vector<float> w = weights(*algo);
  for (int j = 0; j < 8; ++j) EXPECT_FLOAT_EQ(w[j], j >= 4 ? kLearningRate * 2.0f : 0.0f) << j;
  // Versions pass; a gradient made kMaxLag + 1 versions ago changes nothing.
  for (std::uint64_t v = 0; v <= kMaxLag; ++v) {
    while (!algo->ready()) algo->on_record(0, view(record(0, 0.0f)), algo->version());
    ASSERT_TRUE(algo->step());
  }
  EXPECT_EQ(algo->version(), kMaxLag + 1);
  algo->on_record(0, view(record(1, 2.0f)), 0);
  EXPECT_EQ(weights(*algo), w);
  EXPECT_EQ(algo->result()["stale"], 1);
  algo->on_record(0, view(record(1, 2.0f)), 1);  // kMaxLag versions ago: applied
  EXPECT_FLOAT_EQ(weights(*algo)[4], 2 * kLearningRate * 2.0f);
}

TEST(DemoAlgorithm, ItStopsTakingRecordsUntilItSteps) {
  const auto algo = make_demo_algorithm(options());
  algo->begin_repetition(0);
  for (std::uint32_t i = 0; i < kPublishEvery; ++i) {
    EXPECT_TRUE(algo->wants_records());
    algo->on_record(0, view(record(0, 0.0f)), 0);
  }
  EXPECT_FALSE(algo->wants_records());
  EXPECT_TRUE(algo->ready());
  EXPECT_TRUE(algo->step());
  EXPECT_TRUE(algo->wants_records());
  EXPECT_EQ(algo->budget_used(), kPublishEvery);
}

TEST(DemoAlgorithm, AMalformedRecordNamesItsActor) {
  const auto algo = make_demo_algorithm(options());
  algo->begin_repetition(0);
  std::vector<std::byte> bad = record(0, 1.0f);
  bad.pop_back();
  try {
    algo->on_record(3, view(bad), 0);
    FAIL() << "a short record was taken";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("actor 3 sent a demo record of"), std::string::npos) << e.what();
  }
}

TEST(DemoAlgorithm, ACheckpointRestoresTheWeights) {
  const fs::path file = fs::temp_directory_path() / ("demo-ckpt-" + std::to_string(getpid()));
  const auto a = make_demo_algorithm(options());
  a->begin_repetition(0);
  a->on_record(0, view(record(1, 3.0f)), 0);
  {
    CheckpointWriter w(file, "demo");
    a->save(w);
    w.commit();
  }
  const auto b = make_demo_algorithm(options());
  b->begin_repetition(0);
  CheckpointReader r(file, "demo");
  b->load(r);
  EXPECT_EQ(weights(*b), weights(*a));
  EXPECT_EQ(b->budget_used(), 1u);
  fs::remove(file);
}

TEST(DemoAlgorithm, BadOptionsNameTheValue) {
  DemoOptions o = options();
  o.dim = 0;
  EXPECT_THROW(make_demo_algorithm(o), UsageError);
  o = options();
  o.record_bytes = 4;
  try {
    make_demo_algorithm(o);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--record-bytes 4: expected"), std::string::npos) << e.what();
  }
}

testing::ChildOutcome run_demo_command(std::vector<std::string> args) {
  args.insert(args.begin(), {RINGRL_BINARY, "demo"});
  int out = -1, err = -1;
  const pid_t pid = testing::start_child(args, &out, &err);
  return testing::finish_child(pid, out, err);
}

TEST(DemoCommand, TheWeightsReachTheNoiseLevelAndNothingIsLeft) {
  const std::string id = "demo-test-" + std::to_string(getpid());
  const testing::ChildOutcome r = run_demo_command({"--seconds", "2", "--actors", "2", "--json", "--run-id", id});
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["records"].get<std::uint64_t>(), 10u * kPublishEvery);
  EXPECT_GT(j["weight_versions"].get<std::uint64_t>(), 10u);
  EXPECT_LT(j["rms_distance"].get<double>(), kSolvedDistance) << r.out;
  EXPECT_FALSE(fs::exists(fs::temp_directory_path() / ("ringrl-" + id))) << "its temporary run directory is gone";
  EXPECT_FALSE(fs::exists(fs::path("/dev/shm") / segment_name(id))) << "its segment is gone";
}

TEST(DemoCommand, RunDirKeepsTheRunFiles) {
  const fs::path dir = fs::temp_directory_path() / ("demo-run-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const testing::ChildOutcome r = run_demo_command({"--seconds", "1", "--actors", "1", "--run-dir", dir.string()});
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "metrics.csv"));
  const std::string results = [&] {
    std::ifstream in(dir / "results.jsonl");
    std::string line;
    std::getline(in, line);
    return line;
  }();
  const nlohmann::json line = nlohmann::json::parse(results);
  EXPECT_GT(line["records"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(line["budget_key"], "records");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace ringrl::demo
