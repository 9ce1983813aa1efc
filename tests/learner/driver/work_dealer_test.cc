// WorkDealer (learner/work_dealer.h): units go to participants with room, fewest held first,
// in turn on ties; a slow participant is dealt units only as it delivers them; local tickets
// and tags map to the run's tickets, across the 16-bit wrap.
#include "learner/work_dealer.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace ringrl::learner {
namespace {

TEST(WorkDealer, DealsInTurnWhileEveryoneHasRoom) {
  WorkDealer d({1, 1, 1}, 4);
  d.deal(3);
  EXPECT_EQ(d.dealt(), 3u);
  for (std::uint32_t p = 0; p < 3; ++p) {
    EXPECT_EQ(d.local_permits(p), 1u);
    EXPECT_EQ(d.ticket_of_local(p, 0), std::optional<std::uint64_t>(p)) << "unit p went to participant p";
  }
  d.deal(5);
  EXPECT_EQ(d.dealt(), 3u) << "nobody has room: the permits wait";
}

TEST(WorkDealer, ASlowParticipantGetsUnitsOnlyAsItDeliversThem) {
  WorkDealer d({1, 1}, 2);  // participant 1 is the slow one: it never delivers here
  d.deal(2);
  for (std::uint64_t t = 2; t < 20; ++t) {
    // Participant 0 delivers its unit whole; the next one goes to it again.
    const std::uint64_t mine = *d.ticket_of_local(0, d.local_permits(0) - 1);
    d.arrived(mine);
    d.arrived(mine);
    d.deal(t + 1);
    EXPECT_EQ(d.local_permits(1), 1u) << "the slow participant still holds its first unit";
  }
  EXPECT_EQ(d.local_permits(0), 19u);
  d.release(1);  // its unit skipped: it has room again
  d.deal(21);
  EXPECT_EQ(d.local_permits(1), 2u);
  EXPECT_EQ(d.ticket_of_local(1, 1), std::optional<std::uint64_t>(20));
}

TEST(WorkDealer, FewestHeldFirst) {
  WorkDealer d({3, 3}, 1);
  d.deal(4);  // 0, 1, 0, 1
  d.arrived(*d.ticket_of_local(0, 0));
  d.arrived(*d.ticket_of_local(0, 1));  // participant 0 holds none, 1 holds two
  d.deal(6);
  EXPECT_EQ(d.local_permits(0), 4u);
  EXPECT_EQ(d.local_permits(1), 2u);
}

TEST(WorkDealer, TagsMapToTicketsAcrossTheWrapAndForgottenUnitsMapToNothing) {
  WorkDealer d({2}, 1);
  constexpr std::uint64_t kUnits = (std::uint64_t{1} << 16) + 50;
  for (std::uint64_t t = 0; t < kUnits; ++t) {
    d.deal(t + 1);
    ASSERT_EQ(d.ticket(0, unit_tag(t)), std::optional<std::uint64_t>(t));
    d.arrived(t);
    if (t >= 1) d.forget_below(t);  // one unit behind, as the run's order passes them
  }
  EXPECT_EQ(d.ticket(0, unit_tag(kUnits - 3)), std::nullopt) << "a forgotten unit";
  EXPECT_EQ(d.ticket_of_local(0, kUnits), std::nullopt) << "a unit not dealt";
  EXPECT_EQ(d.holding(0), 0u);
}

}  // namespace
}  // namespace ringrl::learner
