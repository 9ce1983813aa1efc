// Tests for learner/top_k_queue.h (spec §5.4).
#include "learner/top_k_queue.h"

#include <gtest/gtest.h>

#include <map>

#include "common/errors.h"

namespace ringrl::learner {
namespace {

using Tokens = MaxUniquePriorityQueue::Tokens;

TEST(TopKQueue, RejectsZeroCapacity) {
  EXPECT_THROW(MaxUniquePriorityQueue(0), UsageError);
}

TEST(TopKQueue, UniquenessByTokenTuple) {
  MaxUniquePriorityQueue q(3);
  EXPECT_TRUE(q.push(0.5, {1, 2, 3}));
  EXPECT_FALSE(q.push(0.9, {1, 2, 3}));  // duplicate ignored, score not updated
  EXPECT_EQ(q.size(), 1u);
  EXPECT_DOUBLE_EQ(q.max().score, 0.5);
  EXPECT_TRUE(q.push(0.5, {1, 2}));      // a prefix is another program
  EXPECT_TRUE(q.push(0.5, {1, 2, 3, 0}));  // EOS is part of the tuple
  EXPECT_EQ(q.size(), 3u);
}

TEST(TopKQueue, OrderingAndCapacity) {
  MaxUniquePriorityQueue q(3);
  q.push(0.2, {2});
  q.push(0.9, {9});
  q.push(0.5, {5});
  ASSERT_TRUE(q.full());
  EXPECT_TRUE(q.push(0.7, {7}));  // evicts 0.2
  EXPECT_EQ(q.size(), 3u);
  EXPECT_FALSE(q.contains({2}));
  EXPECT_FALSE(q.push(0.1, {1}));  // below the minimum: discarded at once
  const auto s = q.sorted();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].tokens, Tokens{9});
  EXPECT_EQ(s[1].tokens, Tokens{7});
  EXPECT_EQ(s[2].tokens, Tokens{5});
  EXPECT_DOUBLE_EQ(q.max().score, 0.9);
  EXPECT_DOUBLE_EQ(q.min().score, 0.5);
}

TEST(TopKQueue, TieWithMinimumDiscardsNewItem) {
  MaxUniquePriorityQueue q(2);
  q.push(0.5, {1});
  q.push(0.8, {2});
  EXPECT_FALSE(q.push(0.5, {3}));  // ties the minimum: the new one goes
  EXPECT_TRUE(q.contains({1}));
  EXPECT_FALSE(q.contains({3}));
  EXPECT_TRUE(q.push(0.50001, {4}));  // strictly better: the old minimum goes
  EXPECT_FALSE(q.contains({1}));
}

TEST(TopKQueue, EvictedProgramMayReenter) {
  MaxUniquePriorityQueue q(1);
  q.push(0.3, {1});
  q.push(0.6, {2});
  EXPECT_FALSE(q.contains({1}));
  EXPECT_TRUE(q.push(0.9, {1}));
  EXPECT_EQ(q.max().tokens, Tokens{1});
}

TEST(TopKQueue, EqualScoresRankByInsertion) {
  MaxUniquePriorityQueue q(3);
  q.push(0.5, {1});
  q.push(0.5, {2});
  q.push(0.5, {3});
  EXPECT_EQ(q.max().tokens, Tokens{1});
  EXPECT_EQ(q.min().tokens, Tokens{3});
  EXPECT_TRUE(q.push(0.6, {4}));  // evicts the latest of the tied minima
  EXPECT_FALSE(q.contains({3}));
}

TEST(TopKQueue, SamplingIsUniformWithReplacement) {
  MaxUniquePriorityQueue q(4);
  for (int k = 0; k < 4; ++k) q.push(0.1 * k, {k});
  std::mt19937_64 rng(7);
  std::map<int, int> counts;
  constexpr int kDraws = 8000;
  for (int i = 0; i < kDraws; ++i) ++counts[q.sample(rng).tokens[0]];
  ASSERT_EQ(counts.size(), 4u);
  for (const auto& [tok, c] : counts) {
    EXPECT_NEAR(c, kDraws / 4, 200) << "token " << tok;  // ~6.5 sigma
  }
}

TEST(TopKQueue, SerializeRoundTrip) {
  MaxUniquePriorityQueue q(3);
  q.push(0.25, {1, 2, 3});
  q.push(-0.5, {4});
  q.push(0.75, {5, 0});
  const std::string bytes = q.serialize();
  MaxUniquePriorityQueue r = MaxUniquePriorityQueue::deserialize(bytes);
  EXPECT_EQ(r.capacity(), 3u);
  const auto a = q.sorted(), b = r.sorted();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].score, b[i].score);
    EXPECT_EQ(a[i].tokens, b[i].tokens);
  }
  // Insertion order survives: a tie after restore still discards the new item.
  EXPECT_FALSE(r.push(-0.5, {9}));
  EXPECT_EQ(r.serialize().size(), bytes.size());
}

TEST(TopKQueue, DeserializeRejectsBadBytes) {
  MaxUniquePriorityQueue q(2);
  q.push(1.0, {1, 2});
  const std::string bytes = q.serialize();
  EXPECT_THROW(MaxUniquePriorityQueue::deserialize("nonsense"), UsageError);
  EXPECT_THROW(MaxUniquePriorityQueue::deserialize(bytes.substr(0, bytes.size() - 1)),
               UsageError);
  EXPECT_THROW(MaxUniquePriorityQueue::deserialize(bytes + "x"), UsageError);
}

}  // namespace
}  // namespace ringrl::learner
