// FifoReplay (spec hiro.md §3, §8): overwrite order, uniform sampling, save/load.
#include "learner/td3/fifo_replay.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/errors.h"

namespace ringrl::td3 {
namespace {

std::vector<float> row_of(float v) { return {v, v + 0.5f, -v}; }

TEST(FifoReplay, OverwritesTheOldestRowFirst) {
  FifoReplay r(/*capacity=*/4, /*row_floats=*/3);
  EXPECT_TRUE(r.empty());
  for (int i = 0; i < 6; ++i) r.add(row_of(static_cast<float>(i)).data());
  EXPECT_EQ(r.size(), 4u);
  EXPECT_EQ(r.added(), 6u);
  // Slots 0, 1 were overwritten by rows 4, 5; slots 2, 3 still hold rows 2, 3.
  const float expect[4] = {4, 5, 2, 3};
  for (std::size_t slot = 0; slot < 4; ++slot) {
    EXPECT_EQ(r.row(slot)[0], expect[slot]) << slot;
    EXPECT_EQ(r.row(slot)[1], expect[slot] + 0.5f) << slot;
    EXPECT_EQ(r.row(slot)[2], -expect[slot]) << slot;
  }
  r.add(row_of(6).data());
  EXPECT_EQ(r.row(2)[0], 6.0f);
}

TEST(FifoReplay, SamplesUniformlyOverTheFilledPart) {
  FifoReplay r(/*capacity=*/100, /*row_floats=*/1);
  for (int i = 0; i < 10; ++i) {
    const float v = static_cast<float>(i);
    r.add(&v);
  }
  Rng rng(5);
  constexpr int kDraws = 20000;
  std::vector<std::int64_t> slots(kDraws);
  r.sample(rng, kDraws, slots.data());
  std::vector<int> count(10, 0);
  for (std::int64_t s : slots) {
    ASSERT_GE(s, 0);
    ASSERT_LT(s, 10);
    ++count[static_cast<std::size_t>(s)];
  }
  for (int c : count) {  // 2000 expected each, sd ~42
    EXPECT_GT(c, 1800);
    EXPECT_LT(c, 2200);
  }
  std::vector<float> out(3);
  const std::int64_t pick[3] = {7, 0, 7};
  r.gather(pick, 3, out.data());
  EXPECT_EQ(out, (std::vector<float>{7, 0, 7}));
}

TEST(FifoReplay, SaveLoadRoundTrip) {
  FifoReplay a(/*capacity=*/5, /*row_floats=*/3);
  for (int i = 0; i < 7; ++i) a.add(row_of(static_cast<float>(i)).data());
  std::string bytes;
  StringSink sink(&bytes);
  ByteWriter w(sink);
  a.save(w);
  FifoReplay b(5, 3);
  MemorySource src(bytes);
  ByteReader rd(src, "replay test");
  b.load(rd);
  rd.expect_end();
  EXPECT_EQ(b.size(), a.size());
  EXPECT_EQ(b.added(), a.added());
  for (std::size_t s = 0; s < 5; ++s)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(b.row(s)[j], a.row(s)[j]);
  // The next add goes to the same slot in both.
  a.add(row_of(100).data());
  b.add(row_of(100).data());
  for (std::size_t s = 0; s < 5; ++s) EXPECT_EQ(b.row(s)[0], a.row(s)[0]);

  // Another shape, or truncated bytes, are refused.
  FifoReplay other(6, 3);
  MemorySource src2(bytes);
  ByteReader rd2(src2, "replay test");
  EXPECT_THROW(other.load(rd2), CorruptData);
  FifoReplay c(5, 3);
  MemorySource src3(bytes.data(), bytes.size() - 4);
  ByteReader rd3(src3, "replay test");
  EXPECT_THROW(c.load(rd3), CorruptData);
}

TEST(FifoReplay, RejectsEmptyShapes) {
  EXPECT_THROW(FifoReplay(0, 3), UsageError);
  EXPECT_THROW(FifoReplay(3, 0), UsageError);
}

}  // namespace
}  // namespace ringrl::td3
