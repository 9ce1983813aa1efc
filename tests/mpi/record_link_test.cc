// mpi/record_link.h between real ranks (run by ctest under `mpirun -np 3`): every record of
// every node arrives once, in order per actor slot, intact and with its mapped version, while
// the learner's rank falls behind and the in-flight bound holds the nodes back through their
// full rings; then the bridge's throughput and the 1 MB weight broadcast latency, printed.
// Also rank 0's weight fan-out (mpi/weight_fanout.h) to a node that keeps up and one that does
// not, and the job handshake (mpi/handshake.h) between real ranks: accepted, a rank with other
// settings refused, a rank that says hello twice refused; every rank hears the same answer.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/spsc_ring.h"
#include "common/errors.h"
#include "mpi/comm.h"
#include "mpi/handshake.h"
#include "mpi/job_messages.h"
#include "mpi/weight_fanout.h"
#include "mpi/tags.h"
#include "mpi/record_link.h"

namespace ringrl::mpi {
namespace {

using Clock = std::chrono::steady_clock;

Comm* g_comm = nullptr;  // set by main()

constexpr std::uint16_t kType = 5;
constexpr std::uint32_t kSlotsPerNode = 2;
constexpr std::uint64_t kRingCapacity = 64 << 10;
constexpr std::uint64_t kBound = 64 << 10;  // bytes in flight per node

// Payload: rank, slot, sequence, then bytes that depend on all three.
struct Head {
  std::uint32_t rank, slot;
  std::uint64_t seq;
};

void fill(std::byte* p, std::uint32_t len, const Head& h) {
  std::memcpy(p, &h, sizeof h);
  for (std::uint32_t i = sizeof h; i < len; ++i) p[i] = static_cast<std::byte>((h.seq * 7 + h.slot * 13 + i) & 0xff);
}

bool intact(const RecordView& r, const Head& h) {
  if (r.length < sizeof(Head)) return false;
  Head got;
  std::memcpy(&got, r.data, sizeof got);
  if (got.rank != h.rank || got.slot != h.slot || got.seq != h.seq) return false;
  for (std::uint32_t i = sizeof h; i < r.length; ++i)
    if (r.data[i] != static_cast<std::byte>((h.seq * 7 + h.slot * 13 + i) & 0xff)) return false;
  return true;
}

struct Rings {
  std::vector<std::unique_ptr<std::byte[]>> memory;
  std::vector<RingHeader*> rings;
  explicit Rings(std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i) {
      memory.emplace_back(new (std::align_val_t(kCacheLineBytes)) std::byte[ring_bytes(kRingCapacity)]);
      rings.push_back(init_ring(memory.back().get(), kRingCapacity));
    }
  }
};

// A node: producer threads write `per_slot` records of `len` bytes into each ring while the
// forwarder sends them; returns once every record was credited by the learner's rank.
ForwarderStats run_node(std::uint64_t per_slot, std::uint32_t len, std::size_t batch_bytes, std::atomic<std::uint64_t>* ring_full) {
  Comm& comm = *g_comm;
  Rings r(kSlotsPerNode);
  std::vector<std::thread> producers;
  std::atomic<int> done{0};
  for (std::uint32_t s = 0; s < kSlotsPerNode; ++s)
    producers.emplace_back([&, s] {
      RingWriter w(r.rings[s]);
      for (std::uint64_t seq = 0; seq < per_slot; ++seq) {
        std::byte* p = nullptr;
        while ((p = w.try_reserve(len)) == nullptr) {
          ring_full->fetch_add(1, std::memory_order_relaxed);
          std::this_thread::yield();
        }
        fill(p, len, {static_cast<std::uint32_t>(comm.rank()), s, seq});
        w.commit(kType, /*version=*/seq);
      }
      w.flush();
      done.fetch_add(1);
    });
  std::vector<RingReader> readers;
  for (auto* ring : r.rings) readers.emplace_back(ring, std::uint64_t{1} << kType);
  RecordForwarder f(comm, {0, batch_bytes, kBound, std::chrono::microseconds(500)});
  const auto map = [](std::uint64_t v) { return v * 10 + 1; };
  for (;;) {
    const std::uint64_t got = f.pump(readers, map);
    if (done.load() == static_cast<int>(kSlotsPerNode) && got == 0) {
      f.pump(readers, map);  // what the producers flushed last
      f.flush();
      if (f.in_flight() == 0) break;
    }
    if (got == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  for (auto& t : producers) t.join();
  return f.stats();
}

// The learner's rank: takes every record of every node, checking order, bytes and version.
std::uint64_t run_learner(std::uint64_t per_slot, Clock::duration fall_behind, double* seconds) {
  Comm& comm = *g_comm;
  std::vector<NodeShape> shapes;
  for (int r = 1; r < comm.size(); ++r) shapes.push_back({r, kSlotsPerNode, std::uint64_t{1} << kType, 1 << 16});
  RecordInbox inbox(comm, shapes);
  std::vector<std::vector<std::uint64_t>> next(static_cast<std::size_t>(comm.size()),
                                               std::vector<std::uint64_t>(kSlotsPerNode, 0));
  const std::uint64_t want = per_slot * kSlotsPerNode * static_cast<std::uint64_t>(comm.size() - 1);
  std::uint64_t got = 0, bad = 0;
  std::this_thread::sleep_for(fall_behind);
  Clock::time_point first{};
  while (got < want) {
    got += inbox.poll([&](int rank, std::uint32_t slot, const RecordView& rec) {
      if (first == Clock::time_point{}) first = Clock::now();
      std::uint64_t& seq = next[static_cast<std::size_t>(rank)][slot];
      if (rec.type != kType || rec.version != seq * 10 + 1 || !intact(rec, {static_cast<std::uint32_t>(rank), slot, seq}))
        ++bad;
      ++seq;
      return true;
    });
  }
  *seconds = std::chrono::duration<double>(Clock::now() - first).count();
  comm.flush(std::chrono::seconds(5));
  EXPECT_EQ(bad, 0u);
  for (int r = 1; r < comm.size(); ++r) {
    for (std::uint32_t s = 0; s < kSlotsPerNode; ++s) EXPECT_EQ(next[static_cast<std::size_t>(r)][s], per_slot);
    EXPECT_EQ(inbox.stats(r).records, per_slot * kSlotsPerNode);
  }
  return got;
}

TEST(RecordLink, EveryRecordArrivesOnceInOrderWhileTheBoundHoldsTheNodesBack) {
  ASSERT_GE(g_comm->size(), 2);
  constexpr std::uint64_t kPerSlot = 20000;
  if (g_comm->rank() == 0) {
    double seconds = 0;
    EXPECT_EQ(run_learner(kPerSlot, std::chrono::milliseconds(400), &seconds),
              kPerSlot * kSlotsPerNode * static_cast<std::uint64_t>(g_comm->size() - 1));
  } else {
    std::atomic<std::uint64_t> full{0};
    const ForwarderStats s = run_node(kPerSlot, /*len=*/100, /*batch_bytes=*/16 << 10, &full);
    EXPECT_EQ(s.records, kPerSlot * kSlotsPerNode);
    EXPECT_LE(s.max_in_flight, kBound) << "the in-flight bound held";
    EXPECT_GT(s.held_back, 0u) << "the learner fell behind: the bound stopped the forwarder";
    EXPECT_GT(full.load(), 0u) << "and the full rings held the producers back";
  }
  g_comm->barrier();
}

TEST(RecordLink, ThroughputThroughTheBridge) {
  constexpr std::uint64_t kPerSlot = 200000;
  constexpr std::uint32_t kLen = 128;  // about a PQT program record
  if (g_comm->rank() == 0) {
    double seconds = 0;
    const std::uint64_t n = run_learner(kPerSlot, Clock::duration::zero(), &seconds);
    const double bytes = static_cast<double>(n) * static_cast<double>(batch_frame_bytes(kLen));
    std::printf("record link: %d node(s), %llu records of %u bytes in %.3f s: %.2f M records/s, %.0f MB/s\n",
                g_comm->size() - 1, static_cast<unsigned long long>(n), kLen, seconds, n / seconds / 1e6,
                bytes / seconds / 1e6);
    ::testing::Test::RecordProperty("records_per_s", static_cast<int>(n / seconds));
  } else {
    std::atomic<std::uint64_t> full{0};
    (void)run_node(kPerSlot, kLen, std::size_t{1} << 20, &full);
  }
  g_comm->barrier();
}

TEST(RecordLink, WeightBroadcastLatencyOfOneMegabyte) {
  constexpr int kRounds = 50;
  std::string blob(1 << 20, 'w');
  std::vector<double> us;
  for (int i = 0; i < kRounds; ++i) {
    g_comm->barrier();
    const auto t0 = Clock::now();
    blob[0] = static_cast<char>(i);
    const std::string got = g_comm->broadcast(g_comm->rank() == 0 ? blob : std::string(), 0);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    ASSERT_EQ(got.size(), blob.size());
    ASSERT_EQ(got[0], static_cast<char>(i));
  }
  std::sort(us.begin(), us.end());
  if (g_comm->rank() == 0)
    std::printf("weight broadcast: 1 MiB to %d rank(s): p50 %.0f us, max %.0f us\n", g_comm->size() - 1,
                us[us.size() / 2], us.back());
}

constexpr int kFanoutTag = 9002;  // a test tag, beyond mpi/tags.h's
constexpr std::uint64_t kPublications = 300;
constexpr std::size_t kFanoutBlob = 256 << 10;  // above the shared-memory eager limit: a send needs its receiver

// Rank 0 publishes kPublications blobs as fast as it can, granting permits = the version after
// each; rank 1 takes them as they come, rank 2 sleeps first. Every rank 0 moment holds at most one
// weights message per node in flight; every node ends with the newest weights, sees versions only
// grow, and never holds permits beyond the weights it has (weights before permits).
TEST(WeightFanout, AtMostOneWeightsMessagePerNodeAndPermitsNeverOvertakeTheirWeights) {
  const int me = g_comm->rank();
  if (me == 0) {
    WeightFanout fanout(*g_comm, {1, 2}, kFanoutTag);
    std::vector<std::byte> blob(kFanoutBlob);
    std::uint64_t version = 0;
    const auto permits = [&](std::size_t) { return version; };
    std::size_t most = 0;
    for (std::uint64_t v = 1; v <= kPublications; ++v) {
      std::memcpy(blob.data(), &v, sizeof v);
      version = v;
      fanout.publish(blob.data(), blob.size(), v, 0, permits);
      fanout.grant(permits);
      fanout.pump(permits);
      most = std::max(most, fanout.weights_in_flight());
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (fanout.behind() > 0 && Clock::now() < deadline) {
      fanout.pump(permits);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(fanout.behind(), 0u);
    EXPECT_LE(most, 2u);
    for (int r : {1, 2}) g_comm->post(r, kFanoutTag, encode_stop());
    EXPECT_TRUE(g_comm->flush(std::chrono::seconds(30)));
  } else {
    if (me == 2) std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a slow node
    std::uint64_t weights = 0, permits = 0, messages = 0;
    for (bool done = false; !done;) {
      const std::optional<Message> m = wait_for(*g_comm, kFanoutTag, std::chrono::seconds(60));
      ASSERT_TRUE(m.has_value());
      const BridgeControl c = decode_control(m->bytes, "rank 0");
      ++messages;
      switch (c.kind) {
        case BridgeControlKind::kWeights: {
          std::uint64_t in_blob = 0;
          std::memcpy(&in_blob, c.blob.data(), sizeof in_blob);
          EXPECT_EQ(in_blob, c.channel_version);
          EXPECT_GT(c.channel_version, weights) << "versions only grow";
          weights = c.channel_version;
          EXPECT_LE(c.count, weights);
          permits = c.count;
          break;
        }
        case BridgeControlKind::kPermits:
          EXPECT_LE(c.count, weights) << "permits beyond the weights held";
          permits = c.count;
          break;
        default:
          done = true;
      }
    }
    EXPECT_EQ(weights, kPublications) << "the newest weights arrived";
    EXPECT_LE(permits, weights);
    if (me == 2) std::printf("weight fan-out: the slow node got %llu messages for %llu publications\n",
                             static_cast<unsigned long long>(messages), static_cast<unsigned long long>(kPublications));
  }
}

constexpr int kStuckTag = 9003, kStuckGo = 9004;  // test tags, beyond mpi/tags.h's
constexpr std::size_t kBigMessage = std::size_t{64} << 20;

// Rank 1 starts a 64 MB message and then makes no MPI call for 2 s (a sender frozen in the middle
// of it: the rest needs its progress); rank 2 then sends 20 small messages on the same tag. Rank
// 0 gets all 20 while the big one is stuck, and the big one once its sender goes on.
TEST(Comm, ASenderStuckInTheMiddleOfAMessageHoldsUpNoOtherSender) {
  const int me = g_comm->rank();
  if (me == 1) {
    g_comm->post(0, kStuckTag, std::string(kBigMessage, 'b'));
    g_comm->post(2, kStuckGo, "");
    std::this_thread::sleep_for(std::chrono::seconds(2));  // no MPI call: the big message is stuck
    EXPECT_TRUE(g_comm->flush(std::chrono::seconds(60)));
  } else if (me == 2) {
    ASSERT_TRUE(wait_for(*g_comm, kStuckGo, std::chrono::seconds(30)).has_value());
    for (int i = 0; i < 20; ++i) g_comm->post(0, kStuckTag, "small " + std::to_string(i));
    EXPECT_TRUE(g_comm->flush(std::chrono::seconds(30)));
  } else {
    const auto start = Clock::now();
    int small = 0;
    bool big = false;
    double small_done_s = -1;
    while (!big && Clock::now() - start < std::chrono::seconds(60)) {
      if (auto m = g_comm->try_receive(kStuckTag)) {
        if (m->source == 2) {
          EXPECT_EQ(m->bytes, "small " + std::to_string(small)) << "one sender's messages stay in order";
          if (++small == 20) small_done_s = std::chrono::duration<double>(Clock::now() - start).count();
        } else {
          EXPECT_EQ(m->bytes.size(), kBigMessage);
          big = true;
          EXPECT_EQ(small, 20) << "the small messages came before the stuck one finished";
        }
      }
      g_comm->progress();
    }
    EXPECT_TRUE(big);
    EXPECT_GE(small_done_s, 0.0);
    EXPECT_LT(small_done_s, 1.5) << "the small messages waited for the stuck sender";
  }
}

constexpr int kGoAhead = 9001;  // a test tag, beyond mpi/tags.h's

// The handshake of ranks whose fingerprints are `fingerprint(rank)`; rank 1 says hello twice
// when `twice`.
// Returns the one answer every rank got ("" accepted, else the refusal).
std::string handshake(std::uint64_t (*fingerprint)(int rank), bool twice, int error_rank = -1) {
  const int me = g_comm->rank();
  const Hello mine{build_version(), fingerprint(me), g_comm->host(), {"cpu"}, false,
                   me == error_rank ? "preflight: no such task" : ""};
  std::string answer;
  if (me == 0) {
    try {
      const std::vector<Hello> hellos = welcome_ranks(*g_comm, mine, {}, std::chrono::seconds(20));
      EXPECT_EQ(hellos.size(), static_cast<std::size_t>(g_comm->size()));
      for (const Hello& h : hellos) EXPECT_EQ(h.slots, std::vector<std::string>{"cpu"});
    } catch (const UsageError& e) {
      answer = e.what();
    }
  } else {
    // A rank said hello twice: rank 2 greets after rank 1's first two words (as far as MPI
    // orders messages between different pairs of ranks: either answer below may come).
    if (twice && me == 1) {
      g_comm->post(0, kHello, encode(mine));
      g_comm->post(0, kHello, encode(mine));
      g_comm->post(2, kGoAhead, "");
      const std::optional<Message> w = wait_for(*g_comm, kWelcome, std::chrono::seconds(30));
      EXPECT_TRUE(w.has_value());
      if (w) answer = decode_welcome(w->bytes, "rank 0").error;
      return g_comm->broadcast(answer, 0);
    }
    if (twice && me == 2) {
      EXPECT_TRUE(wait_for(*g_comm, kGoAhead, std::chrono::seconds(30)).has_value());
    }
    const std::optional<Welcome> w = greet_rank0(*g_comm, mine);
    EXPECT_TRUE(w.has_value());
    if (w) answer = w->error;
  }
  // Every rank got the same answer.
  const std::string from_rank0 = g_comm->broadcast(answer, 0);
  EXPECT_EQ(answer, from_rank0) << "rank " << me;
  return answer;
}

TEST(Handshake, RanksWithTheSameSettingsAreWelcomed) {
  EXPECT_EQ(handshake([](int) { return std::uint64_t{7}; }, false), "");
}

TEST(Handshake, ARankWithOtherSettingsIsRefusedNamingIt) {
  const std::string answer = handshake([](int rank) { return std::uint64_t{rank == 2 ? 8u : 7u}; }, false);
  EXPECT_NE(answer.find("rank 2"), std::string::npos) << answer;
}

// A rank whose own check failed still takes part; the job is refused naming it, on every rank.
TEST(Handshake, ARankWithAnErrorOfItsOwnIsNamedInTheRefusal) {
  const std::string answer = handshake([](int) { return std::uint64_t{7}; }, false, 2);
  EXPECT_NE(answer.find("rank 2 on "), std::string::npos) << answer;
  EXPECT_NE(answer.find(": preflight: no such task"), std::string::npos) << answer;
  EXPECT_EQ(handshake([](int) { return std::uint64_t{7}; }, false, 0), "preflight: no such task");
}

// A rank counts once however often it says hello: either the job is refused naming it, or
// rank 0 has every rank's own Hello (checked in handshake()), never one rank's twice.
TEST(Handshake, ARankThatSaysHelloTwiceCountsOnce) {
  const std::string answer = handshake([](int) { return std::uint64_t{7}; }, true);
  EXPECT_TRUE(answer.empty() || answer == "rank 1 said hello twice") << answer;
  if (g_comm->rank() == 0) {  // the second hello, when it came after every rank's first
    const auto deadline = Clock::now() + std::chrono::seconds(2);
    int left = answer.empty() ? 1 : 0;
    while (left > 0 && Clock::now() < deadline)
      if (g_comm->try_receive(kHello)) --left;
    EXPECT_EQ(left, 0);
  }
}

}  // namespace
}  // namespace ringrl::mpi

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::unique_ptr<ringrl::mpi::Comm> comm = ringrl::mpi::Comm::init();
  ringrl::mpi::g_comm = comm.get();
  return RUN_ALL_TESTS();
}
