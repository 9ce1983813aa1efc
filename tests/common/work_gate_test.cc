// The work gate (common/work_gate.h): permits bound the claims of concurrent actors exactly,
// and every claim gets its own ticket, in claim order. Multi-threaded, so it also runs under
// ThreadSanitizer (label concurrency).
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
  // exactly once, its ticket is the permit's number, and the slots' counts add up to the total.
  RunLayoutOptions lo;
  lo.num_actors = 2;
  lo.ring_capacity = 1 << 12;
  lo.weight_capacity = 64;
  RunSegment seg = RunSegment::create(testing::unique_run_id("gate"), lo);
  ControlBlock& c = seg.control();
  EXPECT_EQ(c.work_permits.load(), kUnlimitedWork) << "a fresh segment is ungated";
  grant_work(c, 0);
  std::uint64_t ticket = 0;
  EXPECT_FALSE(try_claim_work(c, seg.slot(0), &ticket));
  constexpr std::uint64_t kPermits = 5000;
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> claims{0};
  std::vector<std::atomic<int>> taken(kPermits);  // claims per ticket
  std::vector<std::thread> claimers;
  for (int t = 0; t < 4; ++t) {
    claimers.emplace_back([&, t] {
      std::uint64_t mine = 0;
      while (!done.load(std::memory_order_acquire)) {
        if (try_claim_work(c, seg.slot(static_cast<std::uint32_t>(t % 2)), &mine)) {
          if (mine < kPermits) taken[mine].fetch_add(1, std::memory_order_relaxed);
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
  for (std::uint64_t k = 0; k < kPermits; ++k) ASSERT_EQ(taken[k].load(), 1) << "ticket " << k;
  const std::uint64_t last0 = seg.slot(0).work_ticket.load(), last1 = seg.slot(1).work_ticket.load();
  EXPECT_TRUE(last0 == kPermits || last1 == kPermits) << "a slot's work_ticket is 1 + its last ticket";
}

TEST(WorkGate, TagsAreTheTicketsLowBits) {
  EXPECT_EQ(unit_tag(5), 5u);
  EXPECT_EQ(unit_tag((std::uint64_t{1} << 16) + 7), 7u);
}

// LostWork: the ticket of the unit an incarnation that ended held, per slot.
TEST(LostWork, NamesTheUnitADeadIncarnationHeld) {
  LostWork lost(2);
  std::vector<std::uint64_t> out;
  lost.observe(0, 0, 4, out);  // alive (holding ticket 3): nothing
  EXPECT_TRUE(out.empty());
  lost.observe(0, 1, 4, out);  // died holding ticket 3
  EXPECT_EQ(out, std::vector<std::uint64_t>({3}));
  lost.observe(0, 1, 9, out);  // its successor, alive
  lost.observe(0, 2, 9, out);  // died holding ticket 8
  EXPECT_EQ(out, std::vector<std::uint64_t>({3, 8}));
  lost.observe(0, 3, 9, out);  // its successor died before it claimed anything
  lost.observe(1, 1, 0, out);  // slot 1 died before any claim
  EXPECT_EQ(out, std::vector<std::uint64_t>({3, 8})) << "an incarnation that claimed nothing held nothing";
}

}  // namespace
}  // namespace ringrl
