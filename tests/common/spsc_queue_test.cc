// common/spsc_queue.h: full and empty, values moved in and out (a refused push leaves its value),
// and two threads passing a million owned values in order (run under TSan in CI).
#include "common/spsc_queue.h"

#include <memory>
#include <thread>

#include <gtest/gtest.h>

namespace ringrl {
namespace {

TEST(SpscQueue, FullAndEmptyAtItsCapacityRoundedUpToAPowerOfTwo) {
  SpscQueue<int> q(3);
  EXPECT_EQ(q.capacity(), 4u);
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.try_pop().has_value());
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(q.try_push(i));
  int more = 4;
  EXPECT_FALSE(q.try_push(more));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(q.try_pop(), i);
  EXPECT_TRUE(q.empty());
  EXPECT_TRUE(q.try_push(more));  // wrapped around
  EXPECT_EQ(q.try_pop(), 4);
}

TEST(SpscQueue, ARefusedPushLeavesItsValueAndAPopLeavesNothingBehind) {
  SpscQueue<std::shared_ptr<int>> q(2);
  auto a = std::make_shared<int>(1), b = std::make_shared<int>(2), c = std::make_shared<int>(3);
  std::weak_ptr<int> watch = a;
  EXPECT_TRUE(q.try_push(std::move(a)));
  EXPECT_TRUE(q.try_push(b));
  EXPECT_FALSE(q.try_push(c));
  ASSERT_NE(c, nullptr) << "a refused push moved its value away";
  EXPECT_EQ(*c, 3);
  auto got = q.try_pop();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(**got, 1);
  got.reset();
  EXPECT_TRUE(watch.expired()) << "the queue kept a copy of a value it gave away";
}

TEST(SpscQueue, TwoThreadsPassAMillionValuesInOrder) {
  constexpr int kCount = 1'000'000;
  SpscQueue<std::unique_ptr<int>> q(64);
  std::thread producer([&] {
    for (int i = 0; i < kCount; ++i) {
      auto v = std::make_unique<int>(i);
      while (!q.try_push(v)) std::this_thread::yield();
    }
  });
  int next = 0, bad = 0;
  while (next < kCount) {
    auto v = q.try_pop();
    if (!v) {
      std::this_thread::yield();
      continue;
    }
    if (**v != next) ++bad;
    ++next;
  }
  producer.join();
  EXPECT_EQ(bad, 0);
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace ringrl
