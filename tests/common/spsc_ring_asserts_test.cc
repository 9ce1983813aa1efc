// The ring's debug-only precondition checks (common/spsc_ring.h). NDEBUG is undefined for this
// file, so the asserts are compiled in whatever the build type; each misuse must abort with a
// message that names it. This binary holds no other ring code, so no NDEBUG copy of the inline
// handle functions competes with these at link time.
#undef NDEBUG

#include <cstdlib>
#include <new>

#include <gtest/gtest.h>

#include "common/spsc_ring.h"

namespace ringrl {
namespace {

constexpr std::uint64_t kCapacity = 4096;

// A ring in process memory.
struct LocalRing {
  explicit LocalRing(std::uint64_t capacity)
      : storage(static_cast<std::byte*>(std::aligned_alloc(kCacheLineBytes, ring_bytes(capacity)))),
        ring(init_ring(storage, capacity)) {}
  ~LocalRing() { std::free(storage); }
  LocalRing(const LocalRing&) = delete;
  LocalRing& operator=(const LocalRing&) = delete;
  std::byte* storage;
  RingHeader* ring;
};

TEST(SpscRingAssertsDeathTest, CommitWithoutAReservation) {
  LocalRing lr(kCapacity);
  RingWriter w(lr.ring, 1);
  EXPECT_DEATH(w.commit(1, 0), "commit\\(\\) without a successful try_reserve\\(\\)");
}

TEST(SpscRingAssertsDeathTest, SecondCommitOfOneReservation) {
  LocalRing lr(kCapacity);
  RingWriter w(lr.ring, 1);
  ASSERT_NE(w.try_reserve(8), nullptr);
  w.commit(1, 0);
  EXPECT_DEATH(w.commit(1, 0), "commit\\(\\) without a successful try_reserve\\(\\)");
}

TEST(SpscRingAssertsDeathTest, CommitAfterAFailedReservation) {
  LocalRing lr(kCapacity);
  RingWriter w(lr.ring, 1);
  while (w.try_reserve(100) != nullptr) w.commit(1, 0);  // fill the ring
  EXPECT_DEATH(w.commit(1, 0), "commit\\(\\) without a successful try_reserve\\(\\)");
}

TEST(SpscRingAssertsDeathTest, ReservationLargerThanTheMaximumRecord) {
  LocalRing lr(kCapacity);
  RingWriter w(lr.ring, 1);
  EXPECT_DEATH((void)w.try_reserve(w.max_record_bytes() + 1), "larger than max_record_bytes\\(\\)");
}

TEST(SpscRingAssertsDeathTest, CommitWithThePaddingTypeOrATypeOutOfRange) {
  LocalRing lr(kCapacity);
  RingWriter w(lr.ring, 1);
  ASSERT_NE(w.try_reserve(8), nullptr);
  EXPECT_DEATH(w.commit(kPaddingRecordType, 0), "type must be 1..kMaxRecordType");
  EXPECT_DEATH(w.commit(kMaxRecordType + 1, 0), "type must be 1..kMaxRecordType");
}

TEST(SpscRingAssertsDeathTest, ReleaseWithoutARecordFromPeek) {
  LocalRing lr(kCapacity);
  RingReader r(lr.ring);
  EXPECT_DEATH(r.release(), "release\\(\\) without a peek\\(\\) that returned a record");
  RecordView v;
  ASSERT_EQ(r.peek(v), PeekStatus::kEmpty);
  EXPECT_DEATH(r.release(), "release\\(\\) without a peek\\(\\) that returned a record");
}

TEST(SpscRingAssertsDeathTest, SecondReleaseOfOneRecord) {
  LocalRing lr(kCapacity);
  RingWriter w(lr.ring, 1);
  RingReader r(lr.ring);
  ASSERT_NE(w.try_reserve(8), nullptr);
  w.commit(1, 0);
  RecordView v;
  ASSERT_EQ(r.peek(v), PeekStatus::kRecord);
  r.release();
  EXPECT_DEATH(r.release(), "release\\(\\) without a peek\\(\\) that returned a record");
}

TEST(SpscRingAssertsDeathTest, HandlesOverACapacityThatIsNotAPowerOfTwo) {
  // init_ring refuses such a capacity; a damaged header must not slip past the handles either.
  LocalRing lr(kCapacity);
  lr.ring->capacity = 3000;
  EXPECT_DEATH(RingWriter w(lr.ring), "power of two");
  EXPECT_DEATH(RingReader r(lr.ring), "power of two");
}

TEST(SpscRingAsserts, CorrectUseTripsNothing) {
  LocalRing lr(kCapacity);
  RingWriter w(lr.ring, 1);
  RingReader r(lr.ring);
  for (int i = 0; i < 1000; ++i) {
    std::byte* p = w.try_reserve(w.max_record_bytes());
    if (p == nullptr) {
      RecordView v;
      ASSERT_EQ(r.peek(v), PeekStatus::kRecord) << r.error();
      r.release();
      continue;
    }
    w.commit(kMaxRecordType, static_cast<std::uint64_t>(i));
  }
  RecordView v;
  while (r.peek(v) == PeekStatus::kRecord) r.release();
  EXPECT_EQ(r.peek(v), PeekStatus::kEmpty);
}

}  // namespace
}  // namespace ringrl
