// learner/threads.h: the learner-threads rule every wing resolves its learner_threads key with.
#include "learner/threads.h"

#include <sched.h>

#include <vector>

#include <gtest/gtest.h>

namespace ringrl::learner {
namespace {

// Auto learner threads (PQT and HIRO alike): the CPUs no actor holds, and at least two where
// two CPUs are there (the test narrows its own thread's affinity, which available_cpus() reads).
TEST(LearnerThreads, AutoTakesTheFreeCpusAndAtLeastTwo) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 5; ++c) {
    if (CPU_ISSET(c, &saved)) cpus.push_back(c);
  }
  const auto allow = [&](std::size_t n) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (std::size_t k = 0; k < n; ++k) CPU_SET(cpus[k], &set);
    ASSERT_EQ(sched_setaffinity(0, sizeof set, &set), 0);
  };
  EXPECT_EQ(resolve_learner_threads(3, 1), 3u);  // asked for: as asked
  allow(1);
  EXPECT_EQ(resolve_learner_threads(0, 1), 1u);
  if (cpus.size() >= 2) {
    allow(2);
    EXPECT_EQ(resolve_learner_threads(0, 1), 2u);
    EXPECT_EQ(resolve_learner_threads(0, 2), 2u);
  }
  if (cpus.size() >= 5) {
    allow(5);
    EXPECT_EQ(resolve_learner_threads(0, 1), 4u);
    EXPECT_EQ(resolve_learner_threads(0, 4), 2u);
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
}

}  // namespace
}  // namespace ringrl::learner
