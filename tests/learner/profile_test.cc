// Tests for learner/profile.h.
#include "learner/profile.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

namespace ringrl::learner {
namespace {

TEST(PhaseProfiler, SpansSummaryAndChromeTrace) {
  PhaseProfiler prof;
  int syncs = 0;
  prof.set_device_sync([&] { ++syncs; });
  for (int i = 0; i < 3; ++i) {
    auto a = profile_scope(&prof, Phase::kForward);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    a.end();
    auto b = profile_scope(&prof, Phase::kBackward);
  }
  { auto none = profile_scope(nullptr, Phase::kPublish); }  // null profiler: no-op
  EXPECT_EQ(syncs, 6);
  const auto s = prof.summary();
  EXPECT_EQ(s[static_cast<int>(Phase::kForward)].count, 3u);
  EXPECT_EQ(s[static_cast<int>(Phase::kBackward)].count, 3u);
  EXPECT_EQ(s[static_cast<int>(Phase::kPublish)].count, 0u);
  EXPECT_GE(s[static_cast<int>(Phase::kForward)].min_us, 2000.0);
  const std::string table = prof.summary_table();
  EXPECT_NE(table.find("forward"), std::string::npos);
  EXPECT_EQ(table.find("publish"), std::string::npos);

  const std::string path = ::testing::TempDir() + "/ringrl_profile_test.json";
  prof.write_chrome_trace(path);
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  ASSERT_EQ(j["traceEvents"].size(), 6u);
  EXPECT_EQ(j["traceEvents"][0]["name"], "forward");
  EXPECT_EQ(j["traceEvents"][0]["ph"], "X");
  EXPECT_GE(j["traceEvents"][0]["dur"].get<double>(), 2000.0);
  EXPECT_GE(j["traceEvents"][1]["ts"].get<double>(), j["traceEvents"][0]["ts"].get<double>());
  std::remove(path.c_str());
}

TEST(PhaseProfiler, SpanBudgetKeepsSummary) {
  PhaseProfiler prof(/*max_spans=*/2);
  for (int i = 0; i < 5; ++i) auto s = profile_scope(&prof, Phase::kWaitData);
  EXPECT_EQ(prof.summary()[0].count, 5u);
  EXPECT_EQ(nlohmann::json::parse(prof.chrome_trace_json())["traceEvents"].size(), 2u);
}

}  // namespace
}  // namespace ringrl::learner
