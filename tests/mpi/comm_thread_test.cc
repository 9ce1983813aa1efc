// mpi/comm.h's progress thread between real ranks (run by ctest under `mpirun -np 3`): rank 0
// starts it in main(), as rank 0 of a run across nodes does, and every test runs with it.
//   * a node's large message arrives while rank 0's own thread makes no call for seconds (a
//     learner step): without the thread its sender could not finish before rank 0 called MPI;
//   * thousands of messages of many sizes, both ways, arrive once and in order per sender and
//     tag, whether rank 0 asks for one tag or any;
//   * a send's ticket stays in flight until its receiver takes it, and retires after;
//   * a collective stops the thread while it runs, and the thread goes on after it.
// The tests meet by messages, so that the collectives are tested in one place.
// `--no-progress-thread` runs the same tests with rank 0's thread off: the first then fails
// (how it was checked).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "mpi/comm.h"
#include "mpi/handshake.h"

namespace ringrl::mpi {
namespace {

using Clock = std::chrono::steady_clock;
Comm* g_comm = nullptr;  // set by main()

// Test tags, beyond mpi/tags.h's.
constexpr int kGo = 9100, kDone = 9101, kBig = 9102, kTagA = 9103, kTagB = 9104, kBack = 9105, kHeld = 9106;

/// Rank 0 tells every node to go on; every node waits for it.
void go() {
  if (g_comm->rank() == 0) {
    for (int r = 1; r < g_comm->size(); ++r) g_comm->post(r, kGo, "");
  } else {
    ASSERT_TRUE(wait_for(*g_comm, kGo, std::chrono::seconds(60)).has_value());
  }
}
/// Every node tells rank 0 it is done; rank 0 waits for all of them.
void done() {
  if (g_comm->rank() == 0) {
    for (int r = 1; r < g_comm->size(); ++r) ASSERT_TRUE(wait_for(*g_comm, kDone, std::chrono::seconds(60)).has_value());
  } else {
    g_comm->post(0, kDone, "");
    EXPECT_TRUE(g_comm->flush(std::chrono::seconds(60)));
  }
}

// Rank 1 sends 16 MiB while rank 0's own thread sleeps 3 s without an MPI call; the send
// completes long before rank 0 wakes, because rank 0's progress thread receives it.
TEST(ProgressThread, ALargeMessageArrivesWhileRankZerosOwnThreadIsBusy) {
  constexpr std::size_t kBytes = std::size_t{16} << 20;
  go();
  if (g_comm->rank() == 0) {
    std::this_thread::sleep_for(std::chrono::seconds(3));  // a long learner step: no call at all
    const auto m = wait_for(*g_comm, kBig, std::chrono::seconds(60));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->bytes.size(), kBytes);
    EXPECT_EQ(m->bytes.front(), 'x');
    EXPECT_EQ(m->bytes.back(), 'x');
  } else if (g_comm->rank() == 1) {
    const auto start = Clock::now();
    g_comm->post(0, kBig, std::string(kBytes, 'x'));
    ASSERT_TRUE(g_comm->flush(std::chrono::seconds(60)));
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("16 MiB to rank 0 while its own thread slept 3 s: sent in %.3f s\n", s);
    EXPECT_LT(s, 1.5) << "the send waited for rank 0's own thread";
  }
  done();
}

struct Head {
  int source, tag;
  std::uint32_t seq;
};
std::string message(int source, int tag, std::uint32_t seq) {
  const std::size_t size = sizeof(Head) + (seq * 7919u) % (96u << 10);  // 12 B to 96 KiB
  std::string s(size, static_cast<char>('a' + seq % 26));
  const Head h{source, tag, seq};
  std::memcpy(s.data(), &h, sizeof h);
  return s;
}
bool intact(const Message& m, std::uint32_t seq) {
  const std::string want = message(m.source, m.tag, seq);
  return m.bytes == want;
}

// Nodes send kCount messages alternating two tags; rank 0 takes tag B first, then anything,
// and sends kCount back to each node meanwhile. Every message arrives once, intact, in order
// per sender and tag.
TEST(ProgressThread, EveryMessageArrivesOnceInOrderPerSenderAndTag) {
  constexpr std::uint32_t kCount = 1000;
  const int me = g_comm->rank(), n = g_comm->size();
  go();
  if (me == 0) {
    for (int r = 1; r < n; ++r)
      for (std::uint32_t i = 0; i < kCount; ++i) g_comm->post(r, kBack, message(0, kBack, i));
    std::vector<std::vector<std::uint32_t>> next(static_cast<std::size_t>(n), std::vector<std::uint32_t>{0, 1});
    std::uint32_t got = 0, bad = 0;
    const std::uint32_t want = 2 * kCount * static_cast<std::uint32_t>(n - 1);
    const auto deadline = Clock::now() + std::chrono::seconds(120);
    while (got < want && Clock::now() < deadline) {
      // Tag B alone until half of everything came, then any tag: A's messages wait meanwhile.
      auto m = g_comm->try_receive(got < want / 2 ? kTagB : kAnyTag);
      if (!m) {
        g_comm->progress();
        std::this_thread::yield();
        continue;
      }
      std::uint32_t& seq = next[static_cast<std::size_t>(m->source)][m->tag == kTagA ? 0 : 1];
      if (!intact(*m, seq)) ++bad;
      seq += 2;  // each sender's tag A carries the even numbers, tag B the odd
      ++got;
    }
    EXPECT_EQ(got, want);
    EXPECT_EQ(bad, 0u) << "a message came twice, damaged, or out of order";
    EXPECT_TRUE(g_comm->flush(std::chrono::seconds(60)));
    EXPECT_EQ(g_comm->bytes_in_flight(), 0u);
  } else {
    for (std::uint32_t i = 0; i < 2 * kCount; ++i) {
      const int tag = i % 2 == 0 ? kTagA : kTagB;
      g_comm->post(0, tag, message(me, tag, i));
      if (i % 64 == 0) g_comm->progress();
    }
    std::uint32_t bad = 0;
    for (std::uint32_t i = 0; i < kCount; ++i) {
      const auto m = wait_for(*g_comm, kBack, std::chrono::seconds(60));
      ASSERT_TRUE(m.has_value());
      if (!intact(*m, i)) ++bad;
    }
    EXPECT_EQ(bad, 0u);
    EXPECT_TRUE(g_comm->flush(std::chrono::seconds(60)));
  }
  go();  // rank 0 takes any tag above: no node says done before it has all
  done();
}

// Rank 0 posts 16 MiB to rank 1, which takes it only after 1 s: the ticket is in flight until
// then, and retired after.
TEST(ProgressThread, ASendStaysInFlightUntilItsReceiverTakesIt) {
  constexpr std::size_t kBytes = std::size_t{16} << 20;
  go();
  if (g_comm->rank() == 0) {
    const std::uint64_t ticket = g_comm->post(1, kHeld, std::string(kBytes, 'h'));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    g_comm->progress();
    EXPECT_TRUE(g_comm->in_flight(ticket)) << "16 MiB cannot have arrived: rank 1 has not asked";
    EXPECT_GE(g_comm->bytes_in_flight(), kBytes);
    EXPECT_TRUE(g_comm->flush(std::chrono::seconds(60)));
    EXPECT_FALSE(g_comm->in_flight(ticket));
    EXPECT_EQ(g_comm->bytes_in_flight(), 0u);
  } else if (g_comm->rank() == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const auto m = wait_for(*g_comm, kHeld, std::chrono::seconds(60));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->bytes.size(), kBytes);
  }
  done();
}

// A barrier and a broadcast stop rank 0's thread while they run; it goes on after them, and
// a message posted before them arrives after.
TEST(ProgressThread, CollectivesStopItWhileTheyRunAndItGoesOnAfter) {
  const bool had = g_comm->progress_thread();
  if (g_comm->rank() == 1) g_comm->post(0, kHeld, "before the collectives");
  g_comm->barrier();
  EXPECT_EQ(g_comm->broadcast(g_comm->rank() == 0 ? "from rank 0" : "", 0), "from rank 0");
  EXPECT_EQ(g_comm->progress_thread(), had);
  if (g_comm->rank() == 0) {
    const auto m = wait_for(*g_comm, kHeld, std::chrono::seconds(60));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->bytes, "before the collectives");
  }
  EXPECT_TRUE(g_comm->flush(std::chrono::seconds(60)));
}

}  // namespace
}  // namespace ringrl::mpi

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  bool thread = true;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--no-progress-thread") thread = false;
  std::unique_ptr<ringrl::mpi::Comm> comm = ringrl::mpi::Comm::init();
  ringrl::mpi::g_comm = comm.get();
  if (comm->rank() == 0 && thread && !comm->start_progress_thread()) {
    std::fprintf(stderr, "MPI gives no MPI_THREAD_SERIALIZED\n");
    return 1;
  }
  return RUN_ALL_TESTS();
}
