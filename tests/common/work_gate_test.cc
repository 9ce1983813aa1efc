// The work gate (common/work_gate.h): permits bound the claims of concurrent actors exactly.
// Multi-threaded, so it also runs under ThreadSanitizer (label concurrency).
#include "common/work_gate.h"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/lost_work.h"
#include "common/run_segment.h"
#include "tests/common/test_util.h"

namespace ringrl {
namespace {

TEST(WorkGate, ConcurrentClaimsNeverExceedThePermits) {
  // Four claimers race while the learner grants permits one at a time; every permit is taken
  // exactly once, and the slots' counts add up to the total.
  RunLayoutOptions lo;
  lo.num_actors = 2;
  lo.ring_capacity = 1 << 12;
  lo.weight_capacity = 64;
  RunSegment seg = RunSegment::create(testing::unique_run_id("gate"), lo);
  ControlBlock& c = seg.control();
  EXPECT_EQ(c.work_permits.load(), kUnlimitedWork) << "a fresh segment is ungated";
  grant_work(c, 0);
  EXPECT_FALSE(try_claim_work(c, seg.slot(0)));
  constexpr std::uint64_t kPermits = 5000;
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> claims{0};
  std::vector<std::thread> claimers;
  for (int t = 0; t < 4; ++t) {
    claimers.emplace_back([&, t] {
      while (!done.load(std::memory_order_acquire)) {
        if (try_claim_work(c, seg.slot(static_cast<std::uint32_t>(t % 2)))) {
          claims.fetch_add(1, std::memory_order_relaxed);
        } else {
          std::this_thread::yield();
        }
      }
    });
  }
  for (std::uint64_t p = 1; p <= kPermits; ++p) {
    grant_work(c, p);
    while (claims.load(std::memory_order_relaxed) < p) std::this_thread::yield();
    ASSERT_EQ(c.work_claimed.load(), p);
  }
  done.store(true, std::memory_order_release);
  for (auto& t : claimers) t.join();
  EXPECT_EQ(claims.load(), kPermits);
  EXPECT_EQ(seg.slot(0).work_claimed.load() + seg.slot(1).work_claimed.load(), kPermits);
}

// LostWork: what an incarnation that ended claimed and did not deliver, per slot.
TEST(LostWork, CountsWhatADeadIncarnationClaimedAndNeverDelivered) {
  LostWork lost(2, 32);  // 32 records per unit
  lost.observe(0, 0, 3, 64);  // alive: nothing counted
  EXPECT_EQ(lost.records(), 0u);
  lost.observe(0, 1, 3, 64);  // died holding its third unit
  EXPECT_EQ(lost.records(), 32u);
  lost.observe(0, 1, 5, 128);  // its successor, alive
  EXPECT_EQ(lost.records(), 32u);
  lost.observe(0, 2, 5, 128);  // died after delivering both its units: owed nothing
  EXPECT_EQ(lost.records(), 32u);
  lost.observe(1, 1, 2, 40);  // slot 1 died with a unit 24 records short
  EXPECT_EQ(lost.records(), 56u);
  lost.observe(1, 2, 2, 50);  // its successor claimed nothing; the rest of the ring came late
  EXPECT_EQ(lost.records(), 56u) << "records delivered beyond the claims are never negative loss";
}

}  // namespace
}  // namespace ringrl
