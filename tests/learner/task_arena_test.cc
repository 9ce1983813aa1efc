// The fused TD3 kernel's threads (learner/task_arena.h): every task runs once and names a
// slot of its own; two threads run two tasks at once; tasks run in the caller's
// floating-point mode; busy time counts under the phase set; bad thread counts are refused.
#include <sched.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include "common/errors.h"
#include "learner/task_arena.h"

namespace ringrl::learner {
namespace {

constexpr auto kMeetTimeout = std::chrono::seconds(20);  // a loaded machine may start the worker late

TEST(TaskArena, RunsEveryTaskOnceOnASlotOfItsOwn) {
  for (const int threads : {1, 2, 3}) {
    TaskArena arena(threads);
    constexpr int kTasks = 1000;
    std::vector<std::atomic<int>> runs(kTasks);
    std::vector<std::atomic<int>> busy(static_cast<std::size_t>(threads));
    std::atomic<bool> shared_slot{false};
    arena.run(kTasks, [&](int task, int slot) {
      ASSERT_GE(slot, 0);
      ASSERT_LT(slot, threads);
      if (busy[static_cast<std::size_t>(slot)].fetch_add(1, std::memory_order_acq_rel) != 0) shared_slot = true;
      runs[static_cast<std::size_t>(task)].fetch_add(1, std::memory_order_relaxed);
      busy[static_cast<std::size_t>(slot)].fetch_sub(1, std::memory_order_acq_rel);
    });
    for (int t = 0; t < kTasks; ++t) ASSERT_EQ(runs[static_cast<std::size_t>(t)].load(), 1) << threads << " " << t;
    EXPECT_FALSE(shared_slot) << "two tasks ran on one slot at once";
  }
}

TEST(TaskArena, OneThreadRunsTheTasksInOrderOnTheCaller) {
  TaskArena arena(1);
  std::vector<int> order;
  const auto caller = std::this_thread::get_id();
  arena.run(5, [&](int task, int slot) {
    EXPECT_EQ(slot, 0);
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(task);
  });
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

// Two tasks that each wait for the other finish only if two threads run them at once; each
// checks that it runs in the caller's floating-point mode (subnormals flushed).
TEST(TaskArena, TwoThreadsRunTwoTasksAtOnceInTheCallersFloatingPointMode) {
  cpu_set_t cpus;
  ASSERT_EQ(sched_getaffinity(0, sizeof cpus, &cpus), 0);
  if (CPU_COUNT(&cpus) < 2) GTEST_SKIP() << "one CPU: oneTBB starts no second thread";
  TaskArena arena(2);
#if defined(__SSE__)
  const unsigned saved = _mm_getcsr();
  _mm_setcsr(saved | _MM_FLUSH_ZERO_ON | 0x0040 /* DAZ */);
  const unsigned want = _mm_getcsr();
#endif
  std::atomic<int> arrived{0};
  std::atomic<bool> met[2] = {false, false};
  std::atomic<int> slots_seen{0};
  std::atomic<bool> mode_ok{true};
  arena.run(2, [&](int task, int slot) {
    slots_seen.fetch_or(1 << slot, std::memory_order_relaxed);
#if defined(__SSE__)
    if (_mm_getcsr() != want) mode_ok = false;
#endif
    arrived.fetch_add(1, std::memory_order_acq_rel);
    const auto deadline = std::chrono::steady_clock::now() + kMeetTimeout;
    while (arrived.load(std::memory_order_acquire) < 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    met[task] = arrived.load(std::memory_order_acquire) == 2;
  });
#if defined(__SSE__)
  _mm_setcsr(saved);
#endif
  EXPECT_TRUE(met[0] && met[1]) << "the two tasks did not run at the same time";
  EXPECT_EQ(slots_seen.load(), 3) << "slots 0 and 1";
  EXPECT_TRUE(mode_ok.load());
}

// Many short runs back to back, and arenas made and dropped at once (a worker may start
// after the first runs, or only at the destructor): no task is lost or run twice, no wake-up is
// lost (a lost one hangs the test).
TEST(TaskArena, ManyShortRunsAndShortLivedArenas) {
  for (const int threads : {2, 3}) {
    TaskArena arena(threads);
    long long sum = 0;
    std::atomic<long long> got{0};
    for (int r = 0; r < 20000; ++r) {
      const int tasks = 1 + r % 4;
      arena.run(tasks, [&](int task, int) { got.fetch_add(task + 1, std::memory_order_relaxed); });
      sum += tasks * (tasks + 1) / 2;
    }
    EXPECT_EQ(got.load(), sum) << threads;
  }
  for (int k = 0; k < 300; ++k) {
    TaskArena arena(2 + k % 2);
    std::atomic<int> ran{0};
    for (int r = 0; r < k % 3; ++r) arena.run(3, [&](int, int) { ran.fetch_add(1, std::memory_order_relaxed); });
    EXPECT_EQ(ran.load(), 3 * (k % 3));
  }
}

TEST(TaskArena, BusyTimeCountsUnderThePhaseSet) {
  TaskArena arena(2);
  arena.set_phase(learner::Phase::kCritic);
  arena.run(4, [](int, int) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); });
  arena.set_phase(learner::Phase::kTarget);
  arena.run(3, [](int, int) {});
  const auto sum = [&](learner::Phase p) {
    ThreadBusy total;
    for (const ThreadBusy& b : arena.busy(p)) {
      total.seconds += b.seconds;
      total.tasks += b.tasks;
    }
    return total;
  };
  ASSERT_EQ(arena.busy(learner::Phase::kCritic).size(), 2u);
  EXPECT_EQ(sum(learner::Phase::kCritic).tasks, 4u);
  EXPECT_GE(sum(learner::Phase::kCritic).seconds, 4 * 0.002);
  EXPECT_EQ(sum(learner::Phase::kTarget).tasks, 3u);
  EXPECT_EQ(sum(learner::Phase::kActor).tasks, 0u);
  arena.reset_busy();
  EXPECT_EQ(sum(learner::Phase::kCritic).tasks, 0u);
}

TEST(TaskArena, RefusesThreadCountsOutsideOneToTheMaximum) {
  EXPECT_THROW(TaskArena(0), UsageError);
  EXPECT_THROW(TaskArena(kMaxTaskThreads + 1), UsageError);
  try {
    TaskArena bad(0);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "learner threads 0: expected 1 to 256");
  }
}

}  // namespace
}  // namespace ringrl::learner
