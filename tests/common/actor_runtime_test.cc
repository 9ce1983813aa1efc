// ActorRuntime (common/actor_runtime.h) attached to a run segment created in this process.
#include "common/actor_runtime.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/errors.h"
#include "common/records.h"
#include "common/signals.h"
#include "common/work_gate.h"
#include "tests/common/test_util.h"

namespace ringrl {
namespace {

using namespace std::chrono_literals;
using testing::unique_run_id;

constexpr std::uint32_t kActors = 2;
constexpr std::uint64_t kWeightCapacity = 4096;

std::vector<std::byte> pattern(std::size_t n, int salt) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 13 + salt) & 0xff);
  return v;
}

class ActorRuntimeTest : public ::testing::Test {
 protected:
  static RunLayoutOptions layout() {
    RunLayoutOptions o;
    o.num_actors = kActors;
    o.ring_capacity = 1 << 16;
    o.weight_capacity = kWeightCapacity;
    return o;
  }
  // The shutdown flag is process-wide: leave it as found for the next test in this binary.
  void TearDown() override { clear_shutdown_request(); }

  RunSegment seg_ = RunSegment::create(unique_run_id("runtime"), layout());
};

TEST_F(ActorRuntimeTest, AttachOwnsItsSlotAndMarksItExitedOnDestruction) {
  const std::uint64_t before = steady_now_ns();
  {
    ActorRuntime rt(seg_.name(), 1, /*require_parent_creator=*/false);
    EXPECT_EQ(rt.slot_index(), 1u);
    const ActorSlot& s = seg_.slot(1);
    EXPECT_EQ(s.pid.load(), getpid());
    EXPECT_EQ(s.state.load(), static_cast<std::uint32_t>(ActorState::kRunning));
    EXPECT_GE(s.heartbeat_ns.load(), before) << "the constructor writes the first heartbeat";
    EXPECT_LE(s.heartbeat_ns.load(), steady_now_ns());
    EXPECT_EQ(rt.slot().pid.load(), getpid()) << "its own mapping of the same slot";
    EXPECT_EQ(seg_.slot(0).pid.load(), 0) << "another actor's slot is untouched";
    EXPECT_FALSE(rt.should_stop());
    EXPECT_EQ(rt.weights_version(), 0u);
  }
  EXPECT_EQ(seg_.slot(1).state.load(), static_cast<std::uint32_t>(ActorState::kExited));
}

TEST_F(ActorRuntimeTest, RefusesASegmentNotMadeByItsParentAMissingOneAndABadSlot) {
  // This process is the creator, not its parent: the supervisor's check refuses it.
  try {
    ActorRuntime rt(seg_.name(), 0, /*require_parent_creator=*/true);
    FAIL() << "attached to a segment its parent did not create";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("creator pid " + std::to_string(getpid())), std::string::npos) << e.what();
  }
  EXPECT_THROW(ActorRuntime(seg_.name(), kActors, false), UsageError);
  EXPECT_THROW(ActorRuntime(segment_name(unique_run_id("absent")), 0, false), UsageError);
}

TEST_F(ActorRuntimeTest, HeartbeatIsThrottledAndThenWritesTheSlot) {
  ActorRuntime rt(seg_.name(), 0, false);
  const std::uint64_t first = seg_.slot(0).heartbeat_ns.load();
  rt.heartbeat();
  EXPECT_EQ(seg_.slot(0).heartbeat_ns.load(), first) << "a second heartbeat within kHeartbeatEvery is skipped";
  std::this_thread::sleep_for(ActorRuntime::kHeartbeatEvery + 10ms);
  rt.heartbeat();
  const std::uint64_t second = seg_.slot(0).heartbeat_ns.load();
  const auto every_ns = std::chrono::nanoseconds(ActorRuntime::kHeartbeatEvery).count();
  EXPECT_GE(second - first, static_cast<std::uint64_t>(every_ns));
  EXPECT_LE(second, steady_now_ns());
}

TEST_F(ActorRuntimeTest, RefreshWeightsTakesTheNewestVersionOnce) {
  ActorRuntime rt(seg_.name(), 0, false);
  WeightWriter writer(seg_.weights());
  std::vector<std::byte> blob;
  EXPECT_FALSE(rt.refresh_weights(blob)) << "nothing published yet";
  EXPECT_TRUE(blob.empty());

  const auto v1 = pattern(1000, 1);
  ASSERT_EQ(writer.publish(v1.data(), v1.size()), 1u);
  ASSERT_TRUE(rt.refresh_weights(blob));
  EXPECT_EQ(blob, v1);
  EXPECT_EQ(rt.weights_version(), 1u);
  EXPECT_EQ(seg_.slot(0).weights_version.load(), 1u);
  EXPECT_FALSE(rt.refresh_weights(blob)) << "unchanged version";
  EXPECT_EQ(blob, v1) << "an unchanged version leaves the blob alone";

  // A smaller blob shrinks the copy; of two quick publications only the newest is taken.
  const auto v2 = pattern(10, 2);
  const auto v3 = pattern(kWeightCapacity, 3);
  writer.publish(v2.data(), v2.size());
  ASSERT_EQ(writer.publish(v3.data(), v3.size()), 3u);
  ASSERT_TRUE(rt.refresh_weights(blob));
  EXPECT_EQ(blob, v3);
  EXPECT_EQ(rt.weights_version(), 3u);
  const auto v4 = pattern(10, 4);
  writer.publish(v4.data(), v4.size());
  ASSERT_TRUE(rt.refresh_weights(blob));
  EXPECT_EQ(blob, v4);
  EXPECT_EQ(seg_.slot(0).weights_version.load(), 4u);
  EXPECT_FALSE(rt.refresh_weights(blob));
}

TEST_F(ActorRuntimeTest, WaitForWeightsTimesOutAndKeepsTheHeartbeatFresh) {
  ActorRuntime rt(seg_.name(), 0, false);
  std::vector<std::byte> blob;
  const std::uint64_t hb = seg_.slot(0).heartbeat_ns.load();
  const auto wait = ActorRuntime::kHeartbeatEvery + 50ms;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(rt.wait_for_weights(blob, wait));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, wait);
  EXPECT_GT(seg_.slot(0).heartbeat_ns.load(), hb) << "a long wait still sends heartbeats";
  EXPECT_EQ(rt.weights_version(), 0u);
}

TEST_F(ActorRuntimeTest, WaitForWeightsReturnsAtOnceWhenStopped) {
  ActorRuntime rt(seg_.name(), 0, false);
  seg_.request_stop();
  EXPECT_TRUE(rt.should_stop());
  std::vector<std::byte> blob;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(rt.wait_for_weights(blob, 30s));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST_F(ActorRuntimeTest, WaitForWeightsReturnsOnAShutdownRequest) {
  ActorRuntime rt(seg_.name(), 0, false);
  request_shutdown(SIGTERM);
  EXPECT_TRUE(rt.should_stop());
  std::vector<std::byte> blob;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(rt.wait_for_weights(blob, 30s));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

TEST_F(ActorRuntimeTest, WaitForWeightsReturnsTheFirstPublication) {
  ActorRuntime rt(seg_.name(), 0, false);
  const auto w = pattern(512, 7);
  std::thread learner([&] {
    std::this_thread::sleep_for(20ms);
    WeightWriter(seg_.weights()).publish(w.data(), w.size());
  });
  std::vector<std::byte> blob;
  const bool got = rt.wait_for_weights(blob, 30s);
  learner.join();
  ASSERT_TRUE(got);
  EXPECT_EQ(blob, w);
  EXPECT_EQ(rt.weights_version(), 1u);
  // Already holding weights: returns at once, even with no newer version.
  EXPECT_TRUE(rt.wait_for_weights(blob, 0ns));
}

TEST_F(ActorRuntimeTest, CountAddsToTheSlotCounters) {
  ActorRuntime rt(seg_.name(), 1, false);
  rt.count(3, 5);
  rt.count(2, 7);
  rt.count(0, 0);
  EXPECT_EQ(seg_.slot(1).records.load(), 5u);
  EXPECT_EQ(seg_.slot(1).items.load(), 12u);
  EXPECT_EQ(seg_.slot(0).records.load(), 0u);
}

TEST_F(ActorRuntimeTest, RecordsReachTheLearnerAndTheDestructorFlushes) {
  RingReader reader(seg_.ring(1));
  const auto payload = pattern(40, 9);
  {
    ActorRuntime rt(seg_.name(), 1, false);
    ASSERT_TRUE(rt.ring().push(kRecordBench, 6, payload.data(), 40, rt.stop_flag(), 1s));
    RecordView v;
    EXPECT_EQ(reader.peek(v), PeekStatus::kEmpty) << "batched publication: not yet visible";
  }
  RecordView v;
  ASSERT_EQ(reader.peek(v), PeekStatus::kRecord) << "the destructor published the pending record";
  EXPECT_EQ(v.type, kRecordBench);
  EXPECT_EQ(v.version, 6u);
  ASSERT_EQ(v.length, 40u);
  EXPECT_EQ(std::memcmp(v.data, payload.data(), 40), 0);
  reader.release();
}

// --- the work gate (common/work_gate.h)

TEST_F(ActorRuntimeTest, AFreshSegmentIsUngatedAndPermitsBoundTheClaims) {
  ControlBlock& c = seg_.control();
  EXPECT_EQ(c.work_permits.load(), kUnlimitedWork) << "actors of an ungated run never wait";
  ActorRuntime rt(seg_.name(), 1, false);
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(rt.wait_for_work());
    EXPECT_EQ(rt.unit(), unit_tag(static_cast<std::uint64_t>(i))) << "the ticket of each claim, in order";
  }
  grant_work(c, 7);
  std::uint64_t ticket = 0;
  EXPECT_TRUE(try_claim_work(c, seg_.slot(0), &ticket));
  EXPECT_EQ(ticket, 5u);
  EXPECT_TRUE(try_claim_work(c, seg_.slot(0), &ticket));
  EXPECT_EQ(ticket, 6u);
  EXPECT_EQ(seg_.slot(0).work_ticket.load(), 7u) << "1 + the slot's last ticket";
  EXPECT_FALSE(try_claim_work(c, seg_.slot(0), &ticket)) << "7 permits, 7 claims";
  EXPECT_EQ(c.work_claimed.load(), 7u);
  EXPECT_EQ(seg_.slot(1).work_claimed.load(), 5u);
  EXPECT_EQ(seg_.slot(0).work_claimed.load(), 2u);
}

TEST_F(ActorRuntimeTest, WaitForWorkWaitsForThePermitAndSeesTheWeightsPublishedBeforeIt) {
  ControlBlock& c = seg_.control();
  grant_work(c, 0);
  ActorRuntime rt(seg_.name(), 0, false);
  WeightWriter writer(seg_.weights());
  const auto w = pattern(512, 3);
  std::thread learner([&] {
    std::this_thread::sleep_for(50ms);
    writer.publish(w.data(), w.size());
    grant_work(c, 1);  // after the publication it allows
  });
  EXPECT_TRUE(rt.wait_for_work());
  std::vector<std::byte> blob;
  EXPECT_TRUE(rt.refresh_weights(blob)) << "the permit came after the weights";
  EXPECT_EQ(blob, w);
  learner.join();
  EXPECT_EQ(c.work_claimed.load(), 1u);
}

TEST_F(ActorRuntimeTest, WaitForWorkReturnsWhenStopped) {
  grant_work(seg_.control(), 0);
  ActorRuntime rt(seg_.name(), 0, false);
  std::thread stopper([&] {
    std::this_thread::sleep_for(30ms);
    seg_.request_stop();
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(rt.wait_for_work());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  stopper.join();
  EXPECT_EQ(seg_.control().work_claimed.load(), 0u);
}

}  // namespace
}  // namespace ringrl
