#include "common/spsc_ring.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/errors.h"
#include "common/records.h"
#include "common/run_segment.h"
#include "tests/common/test_util.h"

namespace ringrl {
namespace {

// A ring in process memory for single-process tests.
struct LocalRing {
  explicit LocalRing(std::uint64_t capacity)
      : storage(static_cast<std::byte*>(std::aligned_alloc(64, ring_bytes(capacity)))),
        ring(init_ring(storage, capacity)) {}
  ~LocalRing() { std::free(storage); }
  std::byte* storage;
  RingHeader* ring;
};

std::vector<std::byte> pattern(std::uint32_t n, std::uint32_t salt) {
  std::vector<std::byte> v(n);
  for (std::uint32_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 31 + salt * 7) & 0xff);
  return v;
}

TEST(SpscRing, LayoutFacts) {
  static_assert(sizeof(RecordHeader) == 16);
  static_assert(offsetof(RingHeader, tail) - offsetof(RingHeader, head) >= kCacheLineBytes);
  EXPECT_EQ(frame_bytes(0), 16u);
  EXPECT_EQ(frame_bytes(1), 32u);
  EXPECT_EQ(frame_bytes(16), 32u);
  EXPECT_EQ(max_record_bytes_for(1024), 512u - 16u);
}

TEST(SpscRing, InitRejectsBadCapacity) {
  alignas(64) static std::byte buf[ring_bytes(4096)];
  EXPECT_THROW(init_ring(buf, 1000), UsageError);
  EXPECT_THROW(init_ring(buf, 128), UsageError);
  EXPECT_NO_THROW(init_ring(buf, 4096));
}

TEST(SpscRing, EmptyThenOneRecord) {
  LocalRing lr(4096);
  RingWriter w(lr.ring, /*publish_every=*/1);
  RingReader r(lr.ring);
  RecordView v;
  EXPECT_EQ(r.peek(v), PeekStatus::kEmpty);
  const auto p = pattern(100, 1);
  ASSERT_TRUE(w.push(3, 42, p.data(), 100, nullptr, std::chrono::seconds(1)));
  ASSERT_EQ(r.peek(v), PeekStatus::kRecord);
  EXPECT_EQ(v.type, 3);
  EXPECT_EQ(v.version, 42u);
  ASSERT_EQ(v.length, 100u);
  EXPECT_EQ(std::memcmp(v.data, p.data(), 100), 0);
  r.release();
  EXPECT_EQ(r.peek(v), PeekStatus::kEmpty);
}

TEST(SpscRing, BatchedPublicationHidesRecordsUntilFlush) {
  LocalRing lr(4096);
  RingWriter w(lr.ring, /*publish_every=*/4);
  RingReader r(lr.ring);
  RecordView v;
  const auto p = pattern(8, 2);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(w.push(1, i, p.data(), 8, nullptr, std::chrono::seconds(1)));
  EXPECT_EQ(r.peek(v), PeekStatus::kEmpty);
  ASSERT_TRUE(w.push(1, 3, p.data(), 8, nullptr, std::chrono::seconds(1)));  // 4th commit publishes
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(r.peek(v), PeekStatus::kRecord);
    EXPECT_EQ(v.version, static_cast<std::uint64_t>(i));
    r.release();
  }
  ASSERT_TRUE(w.push(1, 4, p.data(), 8, nullptr, std::chrono::seconds(1)));
  EXPECT_EQ(r.peek(v), PeekStatus::kEmpty);
  w.flush();
  EXPECT_EQ(r.peek(v), PeekStatus::kRecord);
}

TEST(SpscRing, FullRingRefusesThenAcceptsAfterRelease) {
  LocalRing lr(1024);
  RingWriter w(lr.ring, 1);
  RingReader r(lr.ring);
  const auto p = pattern(112, 3);  // 128-byte frames: 8 fit
  int pushed = 0;
  while (std::byte* d = w.try_reserve(112)) {
    std::memcpy(d, p.data(), 112);
    w.commit(1, pushed++);
  }
  EXPECT_EQ(pushed, 8);
  EXPECT_FALSE(w.push(1, 99, p.data(), 112, nullptr, std::chrono::milliseconds(5)));
  RecordView v;
  ASSERT_EQ(r.peek(v), PeekStatus::kRecord);
  r.release();
  r.publish_tail();
  EXPECT_TRUE(w.push(1, 99, p.data(), 112, nullptr, std::chrono::milliseconds(5)));
}

TEST(SpscRing, StopFlagEndsAWaitingPush) {
  LocalRing lr(1024);
  RingWriter w(lr.ring, 1);
  const auto p = pattern(400, 0);
  ASSERT_TRUE(w.push(1, 0, p.data(), 400, nullptr, std::chrono::seconds(1)));
  ASSERT_TRUE(w.push(1, 0, p.data(), 400, nullptr, std::chrono::seconds(1)));
  std::atomic<std::uint32_t> stop{1};
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(w.push(1, 0, p.data(), 400, &stop, std::chrono::seconds(30)));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST(SpscRing, WrapAroundWithVariableSizesKeepsOrderAndBytes) {
  LocalRing lr(4096);
  RingWriter w(lr.ring, 3);
  RingReader r(lr.ring);
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> len(0, 700);
  std::uint64_t next_read = 0;
  std::vector<std::uint32_t> lengths;
  for (std::uint64_t i = 0; i < 20000; ++i) {
    const std::uint32_t n = len(rng);
    lengths.push_back(n);
    const auto p = pattern(n, static_cast<std::uint32_t>(i));
    while (!w.push(2, i, p.data(), n, nullptr, std::chrono::nanoseconds(0))) {
      RecordView v;
      ASSERT_EQ(r.peek(v), PeekStatus::kRecord) << r.error();
      ASSERT_EQ(v.version, next_read);
      ASSERT_EQ(v.length, lengths[next_read]);
      const auto e = pattern(v.length, static_cast<std::uint32_t>(next_read));
      ASSERT_TRUE(v.length == 0 || std::memcmp(v.data, e.data(), v.length) == 0);  // e.data() is null when empty
      r.release();
      ++next_read;
    }
  }
  w.flush();
  RecordView v;
  while (r.peek(v) == PeekStatus::kRecord) {
    ASSERT_EQ(v.version, next_read++);
    r.release();
  }
  EXPECT_EQ(next_read, 20000u);
  EXPECT_GT(lr.ring->head.load(), 4 * 4096u);  // it wrapped many times
}

TEST(SpscRing, MaximumSizeRecordsFitAtEveryOffset) {
  LocalRing lr(4096);
  RingWriter w(lr.ring, 1);
  RingReader r(lr.ring);
  const std::uint32_t max = w.max_record_bytes();
  EXPECT_EQ(max, 4096u / 2 - 16u);
  const auto big = pattern(max, 9);
  for (std::uint32_t shift = 0; shift < 40; ++shift) {
    // A small record moves the write position so the maximum frame lands at a new offset.
    const auto small = pattern(shift * 8, shift);
    ASSERT_TRUE(w.push(1, shift, small.data(), shift * 8, nullptr, std::chrono::seconds(1)));
    ASSERT_TRUE(w.push(2, shift, big.data(), max, nullptr, std::chrono::seconds(1)));
    RecordView v;
    ASSERT_EQ(r.peek(v), PeekStatus::kRecord);
    EXPECT_EQ(v.type, 1);
    r.release();
    ASSERT_EQ(r.peek(v), PeekStatus::kRecord) << r.error();
    ASSERT_EQ(v.type, 2);
    ASSERT_EQ(v.length, max);
    ASSERT_EQ(std::memcmp(v.data, big.data(), max), 0);
    r.release();
    r.publish_tail();
  }
  EXPECT_FALSE(w.push(1, 0, big.data(), max + 1, nullptr, std::chrono::seconds(1)));
}

// Corrupt frames are reported, never followed: write a bad header where the next frame goes.
class CorruptFrame : public ::testing::Test {
 protected:
  LocalRing lr{4096};
  void publish_raw(const RecordHeader& h, std::uint64_t advance) {
    std::memcpy(lr.storage + sizeof(RingHeader), &h, sizeof h);
    lr.ring->head.store(advance, std::memory_order_release);
  }
  std::string expect_corrupt(std::uint64_t allowed = RingReader::kAllTypes) {
    RingReader r(lr.ring, allowed);
    RecordView v;
    EXPECT_EQ(r.peek(v), PeekStatus::kCorrupt);
    EXPECT_EQ(r.peek(v), PeekStatus::kCorrupt);  // stays corrupt
    return r.error();
  }
};

TEST_F(CorruptFrame, LengthAboveMaximum) {
  publish_raw({5000, 1, 0, 0}, 64);
  EXPECT_NE(expect_corrupt().find("length exceeds"), std::string::npos);
}
TEST_F(CorruptFrame, PastPublishedHead) {
  publish_raw({200, 1, 0, 0}, 32);
  EXPECT_NE(expect_corrupt().find("past the published head"), std::string::npos);
}
TEST_F(CorruptFrame, TypeNotAllowed) {
  publish_raw({8, 7, 0, 0}, 32);
  EXPECT_NE(expect_corrupt(record_type_bit(kRecordDemoGradient)).find("type not allowed"), std::string::npos);
}
TEST_F(CorruptFrame, TypeOutOfRange) {
  publish_raw({8, 200, 0, 0}, 32);
  EXPECT_NE(expect_corrupt().find("type not allowed"), std::string::npos);
}
TEST_F(CorruptFrame, PaddingThatDoesNotReachTheEnd) {
  publish_raw({100, kPaddingRecordType, 0, 0}, 128);
  EXPECT_NE(expect_corrupt().find("padding"), std::string::npos);
}
TEST_F(CorruptFrame, HeadBeyondCapacity) {
  publish_raw({8, 1, 0, 0}, 1 << 20);
  EXPECT_NE(expect_corrupt().find("inconsistent"), std::string::npos);
}
TEST_F(CorruptFrame, RecordCrossingTheEnd) {
  // Consumer positioned near the end: a frame there must not run past the buffer.
  lr.ring->tail.store(4096 - 32);
  RecordHeader h{100, 1, 0, 0};
  std::memcpy(lr.storage + sizeof(RingHeader) + 4096 - 32, &h, sizeof h);
  lr.ring->head.store(4096 - 32 + 256, std::memory_order_release);
  EXPECT_NE(expect_corrupt().find("crosses the end"), std::string::npos);
}

// Producer and consumer threads; the consumer checks order, length and a checksum of every
// payload; both sides use random sizes and random batching.
TEST(SpscRingFuzz, TwoThreadsChecksums) {
  LocalRing lr(1 << 14);
  constexpr std::uint64_t kRecords = 200000;
  std::uint64_t produced_sum = 0;
  std::thread producer([&] {
    RingWriter w(lr.ring, 5);
    std::mt19937 rng(11);
    std::uniform_int_distribution<std::uint32_t> len(8, 600);
    for (std::uint64_t i = 0; i < kRecords; ++i) {
      const std::uint32_t n = len(rng);
      std::byte* d = nullptr;
      while ((d = w.try_reserve(n)) == nullptr) std::this_thread::yield();
      for (std::uint32_t k = 0; k < n; ++k) d[k] = static_cast<std::byte>(rng());
      std::memcpy(d, &i, 8);
      std::uint64_t sum = 0;  // byte checksum of the whole payload, carried in the version field
      for (std::uint32_t k = 0; k < n; ++k) sum += static_cast<std::uint8_t>(d[k]);
      produced_sum += i;
      w.commit(1, sum);
    }
    w.flush();
  });
  std::uint64_t next = 0, consumed_sum = 0;
  RingReader r(lr.ring);
  while (next < kRecords) {
    RecordView v;
    const auto st = r.peek(v);
    ASSERT_NE(st, PeekStatus::kCorrupt) << r.error();
    if (st == PeekStatus::kEmpty) {
      std::this_thread::yield();
      continue;
    }
    std::uint64_t seq = 0;
    std::memcpy(&seq, v.data, 8);
    ASSERT_EQ(seq, next);
    std::uint64_t sum = 0;
    for (std::uint32_t k = 0; k < v.length; ++k) sum += static_cast<std::uint8_t>(v.data[k]);
    ASSERT_EQ(sum, v.version) << "record " << next;
    consumed_sum += seq;
    r.release();
    ++next;
  }
  producer.join();
  EXPECT_EQ(consumed_sum, produced_sum);
  EXPECT_EQ(consumed_sum, kRecords * (kRecords - 1) / 2);
}

// A real segment, a forked consumer process that attaches by name.
TEST(SpscRingProcess, TwoProcessesThroughASegment) {
  RunLayoutOptions lo;
  lo.num_actors = 1;
  lo.ring_capacity = 1 << 16;
  lo.weight_capacity = 64;
  RunSegment seg = RunSegment::create(testing::unique_run_id("ring2p"), lo);
  constexpr std::uint64_t kRecords = 300000;
  const pid_t parent = getpid();
  const std::string name = seg.name();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int rc = 0;
    try {
      RunSegment s = RunSegment::attach(name, parent);
      RingReader r(s.ring(0), record_type_bit(kRecordBench));
      std::uint64_t next = 0, sum = 0;
      while (next < kRecords) {
        RecordView v;
        const auto st = r.peek(v);
        if (st == PeekStatus::kCorrupt) {
          rc = 2;
          break;
        }
        if (st == PeekStatus::kEmpty) {
          std::this_thread::yield();
          continue;
        }
        std::uint64_t seq;
        std::memcpy(&seq, v.data, 8);
        if (seq != next || v.version != next * 3 || v.length != 8 + (next % 200)) {
          rc = 3;
          break;
        }
        sum += seq;
        r.release();
        ++next;
      }
      if (rc == 0 && sum != kRecords * (kRecords - 1) / 2) rc = 4;
    } catch (...) {
      rc = 5;
    }
    _exit(rc);
  }
  RingWriter w(seg.ring(0), 16);
  std::vector<std::byte> buf(8 + 200);
  for (std::uint64_t i = 0; i < kRecords; ++i) {
    std::memcpy(buf.data(), &i, 8);
    ASSERT_TRUE(w.push(kRecordBench, i * 3, buf.data(), static_cast<std::uint32_t>(8 + i % 200), nullptr,
                       std::chrono::seconds(30)));
  }
  w.flush();
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace ringrl
