// Tests for learner/pqt/top_k_queue.h (spec §5.4).
#include "learner/pqt/top_k_queue.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

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

// The heap array as (score, first token) pairs.
std::vector<std::pair<double, int>> heap_of(const MaxUniquePriorityQueue& q) {
  std::vector<std::pair<double, int>> out;
  for (const auto& it : q.heap()) out.emplace_back(it.score, it.tokens.at(0));
  return out;
}

std::vector<int> sorted_of(const MaxUniquePriorityQueue& q) {
  std::vector<int> out;
  for (const auto& it : q.sorted()) out.push_back(it.tokens.at(0));
  return out;
}

using Heap = std::vector<std::pair<double, int>>;

// Equal scores are not ordered (MPQItemContainer compares the score alone): the heapq sifts
// decide which of the tied minima is the root, and the root is the one a better program
// evicts. Expected arrays from CPython's heapq (push / heappushpop, items compared by score).
TEST(TopKQueue, TiedMinimaLeaveAsHeapqPopsThem) {
  MaxUniquePriorityQueue q(3);
  q.push(0.5, {1});
  q.push(0.5, {2});
  q.push(0.5, {3});
  EXPECT_EQ(heap_of(q), (Heap{{0.5, 1}, {0.5, 2}, {0.5, 3}}));
  EXPECT_EQ(q.min().tokens, Tokens{1});  // the root, the oldest here
  EXPECT_EQ(q.max().tokens, Tokens{1});  // the first highest score of the array
  EXPECT_TRUE(q.push(0.6, {4}));         // the root (1) leaves, not the newest tie (3)
  EXPECT_EQ(heap_of(q), (Heap{{0.5, 3}, {0.5, 2}, {0.6, 4}}));
  EXPECT_EQ(sorted_of(q), (std::vector<int>{4, 3, 2}));  // ties in array order
  EXPECT_TRUE(q.push(0.6, {5}));                          // now the root is 3
  EXPECT_EQ(heap_of(q), (Heap{{0.5, 2}, {0.6, 5}, {0.6, 4}}));
  EXPECT_EQ(q.max().tokens, Tokens{5});
  EXPECT_FALSE(q.push(0.5, {6}));  // ties the root: the new one goes
  EXPECT_TRUE(q.push(0.6, {7}));
  EXPECT_EQ(heap_of(q), (Heap{{0.6, 4}, {0.6, 5}, {0.6, 7}}));
  EXPECT_TRUE(q.push(0.7, {8}));  // of three tied minima, the root (4) leaves
  EXPECT_EQ(heap_of(q), (Heap{{0.6, 7}, {0.6, 5}, {0.7, 8}}));
  EXPECT_EQ(sorted_of(q), (std::vector<int>{8, 7, 5}));
}

// The remove-char plateau: a full queue of equal rewards, then better programs one by one.
// heapq evicts 100, 102, 106, 105 (the roots); evicting the newest tie would drop 109, 108,
// 107, 106.
TEST(TopKQueue, PlateauOfTiesKeepsWhatHeapqKeeps) {
  MaxUniquePriorityQueue q(10);
  for (int i = 0; i < 10; ++i) q.push(0.5501, {100 + i});
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(q.push(0.6, {200 + i}));
  for (int gone : {100, 102, 105, 106}) EXPECT_FALSE(q.contains({gone})) << gone;
  for (int kept : {101, 103, 104, 107, 108, 109}) EXPECT_TRUE(q.contains({kept})) << kept;
  std::vector<int> order;
  for (const auto& it : q.heap()) order.push_back(it.tokens[0]);
  EXPECT_EQ(order, (std::vector<int>{101, 104, 200, 103, 109, 201, 202, 107, 108, 203}));
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
  }
  EXPECT_EQ(saved(r), bytes);
  // A tie after restore still discards the new item.
  EXPECT_FALSE(r.push(-0.5, {9}));
  // An empty queue keeps its capacity.
  EXPECT_EQ(loaded(saved(MaxUniquePriorityQueue(10))).capacity(), 10u);
}

TEST(TopKQueue, SaveLoadKeepsTheHeapOrderAmongTies) {
  // The restored queue evicts the same tied programs as the one that kept running.
  MaxUniquePriorityQueue q(10);
  for (int i = 0; i < 10; ++i) q.push(0.5501, {100 + i});
  q.push(0.6, {200});
  MaxUniquePriorityQueue r = loaded(saved(q));
  EXPECT_EQ(heap_of(r), heap_of(q));
  for (int i = 1; i < 4; ++i) {
    q.push(0.6, {200 + i});
    r.push(0.6, {200 + i});
  }
  EXPECT_EQ(heap_of(r), heap_of(q));
}

TEST(TopKQueue, LoadsTheUnorderedFormatByInsertionOrder) {
  // RRLTOPK2 (before the heap): capacity, next insertion number, items (score, number,
  // tokens) in no order. They are pushed by insertion number.
  std::string bytes;
  StringSink sink(&bytes);
  ByteWriter w(sink);
  const char tag[8] = {'R', 'R', 'L', 'T', 'O', 'P', 'K', '2'};
  w.put_bytes(tag, sizeof tag);
  w.put<std::uint64_t>(3);  // capacity
  w.put<std::uint64_t>(5);  // next insertion number
  w.put<std::uint64_t>(3);  // items
  const struct {
    double score;
    std::uint64_t seq;
    int token;
  } old[] = {{0.7, 4, 7}, {0.5, 1, 5}, {0.5, 2, 6}};
  for (const auto& o : old) {
    w.put<double>(o.score);
    w.put<std::uint64_t>(o.seq);
    w.put_vector(Tokens{o.token});
  }
  MaxUniquePriorityQueue q = loaded(bytes);
  EXPECT_EQ(q.capacity(), 3u);
  EXPECT_EQ(heap_of(q), (Heap{{0.5, 5}, {0.5, 6}, {0.7, 7}}));
  // From then on it is the heap: saved in the new format, and the root goes first.
  EXPECT_EQ(heap_of(loaded(saved(q))), heap_of(q));
  EXPECT_TRUE(q.push(0.6, {8}));
  EXPECT_FALSE(q.contains({5}));
}

TEST(TopKQueue, LoadRejectsAnArrayThatIsNotAHeap) {
  MaxUniquePriorityQueue q(2);
  q.push(0.25, {1});
  q.push(0.75, {2});
  const std::string bytes = saved(q);
  // The two items (of equal size) swapped: [0.75, 0.25] is not a min-heap.
  const std::string item1 = bytes.substr(24, (bytes.size() - 24) / 2), item2 = bytes.substr(24 + item1.size());
  ASSERT_EQ(item1.size(), item2.size());
  const std::string reordered = bytes.substr(0, 24) + item2 + item1;
  try {
    loaded(reordered);
    ADD_FAILURE() << "accepted an array out of heap order";
  } catch (const CorruptData& e) {
    EXPECT_NE(std::string(e.what()).find("not in heap order"), std::string::npos) << e.what();
  }
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
  std::memcpy(&one_capacity[16], &three, sizeof three);
  expect_corrupt(one_capacity, "more than its capacity");
}

}  // namespace
}  // namespace ringrl::learner
