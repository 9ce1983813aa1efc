// UnitOrder (learner/unit_order.h): units reach the learner in ticket order whatever order
// they arrive in; lost and stalled units are skipped; late records are dropped and counted;
// skipped units count the records they never fed.
#include "learner/unit_order.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace ringrl::learner {
namespace {

// A record of unit `ticket` whose payload is its name, e.g. "7.1" (unit 7, its record 1).
struct Rec {
  std::uint64_t ticket;
  int index;
  std::string name;
  RecordView view() const {
    RecordView v;
    v.type = 1;
    v.version = ticket;
    v.unit = static_cast<std::uint16_t>(ticket);
    v.data = reinterpret_cast<const std::byte*>(name.data());
    v.length = static_cast<std::uint32_t>(name.size());
    return v;
  }
};
Rec rec(std::uint64_t ticket, int index) { return {ticket, index, std::to_string(ticket) + "." + std::to_string(index)}; }

// The learner's side: what it was fed, in order; refuses while `full`.
struct Learner {
  std::vector<std::string> fed;
  bool full = false;
  bool operator()(std::uint32_t /*slot*/, const RecordView& v) {
    if (full) return false;
    fed.emplace_back(reinterpret_cast<const char*>(v.data), v.length);
    return true;
  }
};

TEST(UnitOrder, FeedsUnitsInTicketOrderWhateverOrderTheyArriveIn) {
  UnitOrder order(2);
  Learner learner;
  auto feed = [&](std::uint32_t s, const RecordView& v) { return learner(s, v); };
  // Unit 2 arrives whole, then unit 1's first record, then unit 0, then the rest of unit 1.
  for (const Rec& r : {rec(2, 0), rec(2, 1), rec(1, 0), rec(0, 0), rec(0, 1), rec(1, 1)})
    EXPECT_TRUE(order.offer(0, r.ticket, r.view(), feed));
  order.release(feed);
  EXPECT_EQ(learner.fed, (std::vector<std::string>{"0.0", "0.1", "1.0", "1.1", "2.0", "2.1"}));
  EXPECT_EQ(order.next(), 3u);
  EXPECT_EQ(order.held(), 0u);
  EXPECT_EQ(order.late(), 0u);
}

TEST(UnitOrder, ARefusedRecordOfTheNextUnitStaysWithItsSource) {
  UnitOrder order(1);
  Learner learner;
  learner.full = true;
  auto feed = [&](std::uint32_t s, const RecordView& v) { return learner(s, v); };
  const Rec r0 = rec(0, 0), r1 = rec(1, 0);
  EXPECT_FALSE(order.offer(0, r0.ticket, r0.view(), feed)) << "the learner takes no more: the ring keeps it";
  EXPECT_TRUE(order.offer(0, r1.ticket, r1.view(), feed)) << "a later unit is held, not refused";
  learner.full = false;
  EXPECT_TRUE(order.offer(0, r0.ticket, r0.view(), feed));
  EXPECT_EQ(order.release(feed), 1u);
  EXPECT_EQ(learner.fed, (std::vector<std::string>{"0.0", "1.0"}));
}

TEST(UnitOrder, ALostUnitIsSkippedByItsTicketAndItsLateRecordsAreDropped) {
  UnitOrder order(2);
  Learner learner;
  auto feed = [&](std::uint32_t s, const RecordView& v) { return learner(s, v); };
  const Rec a = rec(0, 0), b = rec(1, 0), c = rec(1, 1), late = rec(0, 1);
  EXPECT_TRUE(order.offer(0, a.ticket, a.view(), feed));  // half of unit 0, then its actor died
  EXPECT_TRUE(order.offer(1, b.ticket, b.view(), feed));
  EXPECT_TRUE(order.offer(1, c.ticket, c.view(), feed));
  order.lost(0);
  order.release(feed);
  EXPECT_EQ(learner.fed, (std::vector<std::string>{"0.0", "1.0", "1.1"}));
  EXPECT_EQ(order.skipped(), 1u);
  EXPECT_TRUE(order.offer(0, late.ticket, late.view(), feed));
  EXPECT_EQ(order.late(), 1u) << "a record of a unit already passed is dropped";
  EXPECT_EQ(learner.fed.size(), 3u);
}

TEST(UnitOrder, ALostUnitThatArrivedWholeIsTrainedAfterAll) {
  UnitOrder order(1);
  Learner learner;
  auto feed = [&](std::uint32_t s, const RecordView& v) { return learner(s, v); };
  const Rec a = rec(1, 0), b = rec(0, 0);
  EXPECT_TRUE(order.offer(0, a.ticket, a.view(), feed));  // unit 1 pushed whole before its actor died
  order.lost(1);
  EXPECT_TRUE(order.offer(1, b.ticket, b.view(), feed));
  order.release(feed);
  EXPECT_EQ(learner.fed, (std::vector<std::string>{"0.0", "1.0"}));
  EXPECT_EQ(order.skipped(), 0u);
  order.lost(0);  // a unit already passed: nothing to skip
  order.release(feed);
  EXPECT_EQ(order.skipped(), 0u);
}

TEST(UnitOrder, AStalledUnitIsSkippedOnlyWhileLaterUnitsWait) {
  UnitOrder order(1);
  Learner learner;
  auto feed = [&](std::uint32_t s, const RecordView& v) { return learner(s, v); };
  const auto later = UnitOrder::Clock::now() + std::chrono::hours(1);
  EXPECT_FALSE(order.skip_stalled(later, std::chrono::seconds(1))) << "nothing waits: the actors' watchdogs judge";
  const Rec r2 = rec(2, 0), r1 = rec(1, 0);
  EXPECT_TRUE(order.offer(0, r2.ticket, r2.view(), feed));
  EXPECT_FALSE(order.skip_stalled(UnitOrder::Clock::now(), std::chrono::hours(1)));
  EXPECT_TRUE(order.skip_stalled(later, std::chrono::seconds(1)));
  EXPECT_EQ(order.next(), 1u);
  EXPECT_TRUE(order.offer(0, r1.ticket, r1.view(), feed));
  order.release(feed);
  EXPECT_EQ(learner.fed, (std::vector<std::string>{"1.0", "2.0"}));
}

TEST(UnitOrder, ASkippedUnitCountsTheRecordsItNeverFed) {
  UnitOrder order(4);
  Learner learner;
  auto feed = [&](std::uint32_t s, const RecordView& v) { return learner(s, v); };
  for (const Rec& r : {rec(0, 0), rec(0, 1), rec(0, 2), rec(0, 3), rec(1, 0)}) order.offer(0, r.ticket, r.view(), feed);
  EXPECT_EQ(order.missing(), 0u);
  order.lost(1);  // fed one record of four
  order.release(feed);
  EXPECT_EQ(order.missing(), 3u);
  const Rec held = rec(3, 0);
  order.offer(0, held.ticket, held.view(), feed);
  EXPECT_TRUE(order.skip_stalled(UnitOrder::Clock::now() + std::chrono::hours(1), std::chrono::seconds(1)));
  EXPECT_EQ(order.missing(), 7u) << "unit 2 fed nothing";
  order.release(feed);
  EXPECT_EQ(order.next(), 3u);
}

}  // namespace
}  // namespace ringrl::learner
