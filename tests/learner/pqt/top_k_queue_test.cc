// Tests for learner/pqt/top_k_queue.h (spec §5.4).
#include "learner/pqt/top_k_queue.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "common/byte_codec.h"
#include "common/errors.h"

namespace ringrl::learner {
namespace {

using Tokens = MaxUniquePriorityQueue::Tokens;

TEST(TopKQueue, RejectsZeroCapacity) { EXPECT_THROW(MaxUniquePriorityQueue(0), UsageError); }

TEST(TopKQueue, UniquenessByTokenTuple) {
  MaxUniquePriorityQueue q(3);
  EXPECT_TRUE(q.push(0.5, {1, 2, 3}));
  EXPECT_FALSE(q.push(0.9, {1, 2, 3}));  // duplicate ignored, score not updated
  EXPECT_EQ(q.size(), 1u);
  EXPECT_DOUBLE_EQ(q.max().score, 0.5);
  EXPECT_TRUE(q.push(0.5, {1, 2}));        // a prefix is another program
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

std::string saved(const MaxUniquePriorityQueue& q) {
  std::string bytes;
  StringSink sink(&bytes);
  ByteWriter w(sink);
  q.save(w);
  return bytes;
}

MaxUniquePriorityQueue loaded(const std::string& bytes) {
  MemorySource src(bytes);
  ByteReader r(src, "test queue");
  MaxUniquePriorityQueue q = MaxUniquePriorityQueue::load(r);
  r.expect_end();
  return q;
}

TEST(TopKQueue, SaveLoadRoundTrip) {
  MaxUniquePriorityQueue q(3);
  q.push(0.25, {1, 2, 3});
  q.push(-0.5, {4});
  q.push(0.75, {5, 0});
  const std::string bytes = saved(q);
  MaxUniquePriorityQueue r = loaded(bytes);
  EXPECT_EQ(r.capacity(), 3u);
  const auto a = q.sorted(), b = r.sorted();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].score, b[i].score);
    EXPECT_EQ(a[i].tokens, b[i].tokens);
    EXPECT_EQ(a[i].seq, b[i].seq);
  }
  EXPECT_EQ(saved(r), bytes);
  // Insertion order survives: a tie after restore still discards the new item.
  EXPECT_FALSE(r.push(-0.5, {9}));
  // An empty queue keeps its capacity.
  EXPECT_EQ(loaded(saved(MaxUniquePriorityQueue(10))).capacity(), 10u);
}

TEST(TopKQueue, LoadRejectsBadState) {
  MaxUniquePriorityQueue q(2);
  q.push(1.0, {1, 2});
  const std::string bytes = saved(q);
  auto expect_corrupt = [](const std::string& b, const std::string& part) {
    try {
      loaded(b);
      ADD_FAILURE() << "accepted: " << part;
    } catch (const CorruptData& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind("test queue: ", 0), 0u) << msg;
      EXPECT_NE(msg.find(part), std::string::npos) << msg;
    }
  };
  expect_corrupt("nonsense", "bad tag");
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) expect_corrupt(bytes.substr(0, cut), "");
  expect_corrupt(bytes + "x", "unread bytes");
  std::string zero_capacity = bytes;
  std::memset(&zero_capacity[8], 0, sizeof(std::uint64_t));
  expect_corrupt(zero_capacity, "capacity 0");
  std::string one_capacity = bytes;  // holds 1 item; capacity 1 is fine, count 3 is not
  const std::uint64_t three = 3;
  std::memcpy(&one_capacity[24], &three, sizeof three);
  expect_corrupt(one_capacity, "more than its capacity");
}

}  // namespace
}  // namespace ringrl::learner
