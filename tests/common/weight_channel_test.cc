#include "common/weight_channel.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/errors.h"
#include "common/run_segment.h"
#include "tests/common/test_util.h"

namespace ringrl {
namespace {

struct LocalChannel {
  explicit LocalChannel(std::uint64_t cap)
      : storage(static_cast<std::byte*>(std::aligned_alloc(64, weight_channel_bytes(cap)))),
        ch(init_weight_channel(storage, cap)) {}
  ~LocalChannel() { std::free(storage); }
  std::byte* storage;
  WeightChannelHeader* ch;
};

// Blob of version v: every 64-bit word is v, so any mix of two versions is detectable.
void fill(std::vector<std::uint64_t>& blob, std::uint64_t v) { std::fill(blob.begin(), blob.end(), v); }

bool uniform(const std::vector<std::uint64_t>& blob, std::size_t words, std::uint64_t v) {
  for (std::size_t i = 0; i < words; ++i)
    if (blob[i] != v) return false;
  return true;
}

TEST(WeightChannel, NothingBeforeFirstPublish) {
  LocalChannel lc(1024);
  WeightReader r(lc.ch);
  std::vector<std::byte> dst(1024);
  std::size_t n = 0;
  EXPECT_EQ(r.latest(), 0u);
  EXPECT_EQ(r.read_if_newer(0, dst.data(), dst.size(), &n), 0u);
}

TEST(WeightChannel, VersionsAdvanceAndReadersSeeTheNewest) {
  LocalChannel lc(4096);
  WeightWriter w(lc.ch);
  WeightReader r(lc.ch);
  std::vector<std::uint64_t> blob(512), got(512);
  std::size_t n = 0;
  for (std::uint64_t v = 1; v <= 5; ++v) {
    fill(blob, v);
    EXPECT_EQ(w.publish(blob.data(), blob.size() * 8), v);
  }
  EXPECT_EQ(r.read_if_newer(0, got.data(), got.size() * 8, &n), 5u);
  EXPECT_EQ(n, 4096u);
  EXPECT_TRUE(uniform(got, 512, 5));
  EXPECT_EQ(r.read_if_newer(5, got.data(), got.size() * 8, &n), 0u);  // nothing newer
}

TEST(WeightChannel, OversizeBlobIsAUsageError) {
  LocalChannel lc(64);
  WeightWriter w(lc.ch);
  std::vector<std::byte> big(65);
  EXPECT_THROW(w.publish(big.data(), big.size()), UsageError);
  std::vector<std::byte> ok(64);
  w.publish(ok.data(), ok.size());
  WeightReader r(lc.ch);
  std::vector<std::byte> small(32);
  std::size_t n = 0;
  EXPECT_THROW(r.read_if_newer(0, small.data(), small.size(), &n), UsageError);
}

// A writer thread publishes as fast as it can while readers copy; no copy may mix versions.
TEST(WeightChannelTorn, ConcurrentWriterNeverTearsAReadThreads) {
  constexpr std::size_t kWords = 1 << 15;  // 256 KiB blobs
  LocalChannel lc(kWords * 8);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    WeightWriter w(lc.ch);
    std::vector<std::uint64_t> blob(kWords);
    for (std::uint64_t v = 1; v <= 3000; ++v) {
      fill(blob, v);
      w.publish(blob.data(), blob.size() * 8);
    }
    done = true;
  });
  WeightReader r(lc.ch);
  std::vector<std::uint64_t> got(kWords);
  std::uint64_t have = 0, reads = 0;
  while (!done.load() || r.latest() != have) {
    std::size_t n = 0;
    const std::uint64_t v = r.read_if_newer(have, got.data(), got.size() * 8, &n);
    if (v == 0) continue;
    ASSERT_GE(v, have);
    ASSERT_TRUE(uniform(got, kWords, v)) << "torn copy of version " << v;
    have = v;
    ++reads;
  }
  writer.join();
  EXPECT_EQ(have, 3000u);
  EXPECT_GT(reads, 1u);
}

TEST(WeightChannelTorn, ConcurrentWriterNeverTearsAReadProcesses) {
  constexpr std::size_t kWords = 1 << 17;  // 1 MiB blobs
  RunLayoutOptions lo;
  lo.num_actors = 1;
  lo.weight_capacity = kWords * 8;
  RunSegment seg = RunSegment::create(testing::unique_run_id("torn"), lo);
  const std::string name = seg.name();
  const pid_t parent = getpid();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int rc = 0;
    try {
      RunSegment s = RunSegment::attach(name, parent);
      WeightReader r(s.weights());
      std::vector<std::uint64_t> got(kWords);
      std::uint64_t have = 0;
      while (!s.stop_requested() || r.latest() != have) {
        std::size_t n = 0;
        const std::uint64_t v = r.read_if_newer(have, got.data(), got.size() * 8, &n);
        if (v == 0) continue;
        if (!uniform(got, kWords, v) || v < have) {
          rc = 2;
          break;
        }
        have = v;
      }
      if (rc == 0 && have != 500) rc = 3;
    } catch (...) {
      rc = 4;
    }
    _exit(rc);
  }
  WeightWriter w(seg.weights());
  std::vector<std::uint64_t> blob(kWords);
  for (std::uint64_t v = 1; v <= 500; ++v) {
    fill(blob, v);
    w.publish(blob.data(), blob.size() * 8);
  }
  seg.request_stop();
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2 = torn copy, 3 = missed the last version, 4 = exception";
}

}  // namespace
}  // namespace ringrl
