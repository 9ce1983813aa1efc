// `mpirun -np N ringrl bench link`: the links of one run across nodes (docs/cluster.md), timed.
//
//   records   every rank but 0 runs --producers threads that write records of --record-bytes
//             into their rings as fast as they can, for --seconds; the rank forwards them over
//             the record link (mpi/record_link.h) and rank 0 takes them: records/s and bytes/s
//             through the bridges, as rank 0 sees them;
//   weights   a blob of --blob-bytes (1 MiB) goes from rank 0 to every other rank --rounds times,
//             by MPI_Bcast and by one send per rank (what node bridges use), each round timed
//             until every rank said it has it (one small reply each); against the shared-memory
//             weight channel on one machine (publish, then a reader's copy);
//   fan-out   rank 0 publishes the blob --fanout-rate times a second for --seconds through the
//             weight fan-out of a run across nodes (mpi/weight_fanout.h: at most one weights
//             message in flight per node, the newest wins) while every node takes what comes:
//             the weights messages and bytes rank 0 sent per publication.
//
// Rank 0 runs its MPI progress thread as rank 0 of a run does (mpi/comm.h; off only for the
// MPI_Bcast rounds, a collective of its own thread), and prints one JSON line (stdout); other
// ranks print nothing. Without mpirun, or with one
// rank, a UsageError says how to start it.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli_numbers.h"
#include "sweeps/cluster_jobs.h"
#include "app/commands.h"
#include "common/errors.h"
#include "common/spsc_ring.h"
#include "common/weight_channel.h"
#include "mpi/comm.h"
#include "mpi/record_link.h"
#include "mpi/tags.h"
#include "mpi/weight_fanout.h"

namespace ringrl::app {
using namespace ringrl::sweeps;  // child runs, the spread, tuning grids
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint16_t kBenchType = 5;                    // common/records.h kRecordBench
constexpr std::uint64_t kRingCapacity = std::uint64_t{1} << 20;
constexpr auto kIdle = std::chrono::microseconds(50);

struct LinkCli {
  double seconds = 3;
  std::uint32_t record_bytes = 300, producers = 2, rounds = 50;
  std::uint64_t blob_bytes = std::uint64_t{1} << 20;
  double fanout_rate = 1000;  // publications per second
};

std::pair<double, double> p50_max_us(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.back()};
}

// A node: producers fill rings until rank 0 says stop; the forwarder sends everything.
void records_node(mpi::Comm& comm, const LinkCli& c) {
  std::vector<std::unique_ptr<std::byte[]>> memory;
  std::vector<RingHeader*> rings;
  for (std::uint32_t i = 0; i < c.producers; ++i) {
    memory.emplace_back(new (std::align_val_t(kCacheLineBytes)) std::byte[ring_bytes(kRingCapacity)]);
    rings.push_back(init_ring(memory.back().get(), kRingCapacity));
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> producers;
  for (std::uint32_t i = 0; i < c.producers; ++i)
    producers.emplace_back([&, i] {
      RingWriter w(rings[i]);
      for (std::uint64_t seq = 0; !stop.load(std::memory_order_relaxed); ++seq) {
        std::byte* p = w.try_reserve(c.record_bytes);
        if (p == nullptr) {
          std::this_thread::yield();
          continue;
        }
        std::memcpy(p, &seq, std::min<std::size_t>(sizeof seq, c.record_bytes));
        w.commit(kBenchType, seq);
      }
      w.flush();
    });
  std::vector<RingReader> readers;
  for (auto* r : rings) readers.emplace_back(r, std::uint64_t{1} << kBenchType);
  mpi::RecordForwarder f(comm, {});
  while (!comm.try_receive(mpi::kBenchDone))
    if (f.pump(readers, {}) == 0) std::this_thread::sleep_for(kIdle);
  stop = true;
  for (auto& t : producers) t.join();
}

nlohmann::json records_learner(mpi::Comm& comm, const LinkCli& c) {
  std::vector<mpi::NodeShape> shapes;
  for (int r = 1; r < comm.size(); ++r)
    shapes.push_back({r, c.producers, std::uint64_t{1} << kBenchType, max_record_bytes_for(kRingCapacity)});
  mpi::RecordInbox inbox(comm, shapes);
  std::uint64_t records = 0, bytes = 0;
  Clock::time_point first{};
  const auto take = [&](int, std::uint32_t, const RecordView& r) {
    if (first == Clock::time_point{}) first = Clock::now();
    ++records;
    bytes += mpi::batch_frame_bytes(r.length);
    return true;
  };
  while (first == Clock::time_point{}) inbox.poll(take);
  const auto until = first + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(c.seconds));
  while (Clock::now() < until)
    if (inbox.poll(take) == 0) std::this_thread::sleep_for(kIdle);
  const double s = std::chrono::duration<double>(Clock::now() - first).count();
  for (int r = 1; r < comm.size(); ++r) comm.post(r, mpi::kBenchDone, std::string());
  // What is still on the way is taken (and credited) so that every node's last batch completes.
  const auto drain_until = Clock::now() + std::chrono::milliseconds(500);
  while (Clock::now() < drain_until) inbox.poll([](int, std::uint32_t, const RecordView&) { return true; });
  return {{"nodes", comm.size() - 1},
          {"producers_per_node", c.producers},
          {"record_bytes", c.record_bytes},
          {"seconds", s},
          {"records_per_s", static_cast<double>(records) / s},
          {"bytes_per_s", static_cast<double>(bytes) / s}};
}

// One round of the blob to every other rank, until each replied; microseconds on rank 0.
double weights_round(mpi::Comm& comm, std::string& blob, bool broadcast) {
  comm.barrier();
  const auto t0 = Clock::now();
  if (broadcast) {
    blob = comm.broadcast(comm.rank() == 0 ? std::move(blob) : std::string(), 0);
  } else if (comm.rank() == 0) {
    for (int r = 1; r < comm.size(); ++r) comm.post(r, mpi::kBenchBlob, blob);
  } else {
    std::optional<mpi::Message> m;
    while (!(m = comm.try_receive(mpi::kBenchBlob))) {
      comm.progress();
      std::this_thread::yield();  // rank 0's progress thread may share this core
    }
    blob = std::move(m->bytes);
  }
  if (comm.rank() != 0) {
    comm.post(0, mpi::kBenchReply, std::string(1, blob.empty() ? '\0' : blob[0]));
    comm.flush(std::chrono::seconds(10));
    return 0;
  }
  // Yielding between polls: rank 0's progress thread needs a core (2 ranks share 2 here).
  for (int got = 1; got < comm.size();) {
    while (!comm.try_receive(mpi::kBenchReply)) std::this_thread::yield();
    ++got;
  }
  comm.flush(std::chrono::seconds(10));
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// The weight fan-out at --fanout-rate publications/s for --seconds (see the file comment).
nlohmann::json fanout(mpi::Comm& comm, const LinkCli& c) {
  if (comm.rank() != 0) {  // a node: take what comes until rank 0 says stop
    for (;;) {
      while (comm.try_receive(mpi::kBenchFanout)) {
      }
      if (comm.try_receive(mpi::kBenchDone)) break;
      std::this_thread::sleep_for(kIdle);
    }
    return {};
  }
  std::vector<int> ranks;
  for (int r = 1; r < comm.size(); ++r) ranks.push_back(r);
  mpi::WeightFanout out(comm, ranks, mpi::kBenchFanout);
  const std::vector<std::byte> blob(c.blob_bytes, std::byte{7});
  const auto none = [](std::size_t) { return std::uint64_t{0}; };
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / c.fanout_rate));
  const auto t0 = Clock::now();
  const auto until = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(c.seconds));
  std::uint64_t publications = 0;
  std::size_t most_in_flight = 0;
  for (auto next = t0; next < until; next += period) {
    while (Clock::now() < next) {
      out.pump(none);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    out.publish(blob.data(), blob.size(), ++publications, 0, none);
    most_in_flight = std::max(most_in_flight, out.weights_in_flight());
  }
  while (out.behind() > 0) out.pump(none);  // the newest reaches every node
  comm.flush(std::chrono::seconds(30));
  for (int r : ranks) comm.post(r, mpi::kBenchDone, std::string());
  const double pubs = static_cast<double>(publications);
  return {{"blob_bytes", c.blob_bytes},
          {"nodes", ranks.size()},
          {"publications", publications},
          {"publications_per_s", pubs / std::chrono::duration<double>(Clock::now() - t0).count()},
          {"weights_messages", out.weights_sent()},
          {"bytes_per_publication", static_cast<double>(out.bytes_sent()) / pubs},
          {"messages_per_node_per_publication", static_cast<double>(out.weights_sent()) / (pubs * ranks.size())},
          {"most_in_flight", most_in_flight}};
}

nlohmann::json shm_channel(const LinkCli& c) {
  std::unique_ptr<std::byte[]> memory(new (std::align_val_t(kCacheLineBytes)) std::byte[weight_channel_bytes(c.blob_bytes)]);
  WeightChannelHeader* ch = init_weight_channel(memory.get(), c.blob_bytes);
  WeightWriter w(ch);
  WeightReader r(ch);
  std::vector<std::byte> blob(c.blob_bytes, std::byte{1}), copy(c.blob_bytes);
  std::vector<double> us;
  std::uint64_t have = 0;
  for (std::uint32_t i = 0; i < c.rounds; ++i) {
    const auto t0 = Clock::now();
    w.publish(blob.data(), blob.size());
    std::size_t bytes = 0;
    have = r.read_if_newer(have, copy.data(), copy.size(), &bytes);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  const auto [p50, max] = p50_max_us(us);
  return {{"p50_us", p50}, {"max_us", max}};
}

int run_link_bench(const LinkCli& c) {
  std::unique_ptr<mpi::Comm> comm = join_mpi_job();
  if (!comm)
    throw UsageError("bench link times the links between ranks: start it with 2 or more, e.g. "
                     "mpirun -np 2 ringrl bench link");
  nlohmann::json out;
  // Rank 0 moves its messages on a thread of their own, as in a run across nodes (mpi/comm.h;
  // the collectives below stop it while they run).
  if (comm->rank() == 0) out["progress_thread"] = comm->start_progress_thread();
  if (comm->rank() == 0)
    out["records"] = records_learner(*comm, c);
  else
    records_node(*comm, c);
  comm->barrier();
  for (const bool bcast : {true, false}) {
    // MPI_Bcast is the caller's own collective: rank 0's progress thread is off for those
    // rounds (a run sends its weights, with the thread on).
    if (comm->rank() == 0 && bcast) comm->stop_progress_thread();
    if (comm->rank() == 0 && !bcast) comm->start_progress_thread();
    std::vector<double> us;
    std::string blob(c.blob_bytes, 'w');
    for (std::uint32_t i = 0; i < c.rounds; ++i) us.push_back(weights_round(*comm, blob, bcast));
    if (comm->rank() == 0) {
      const auto [p50, max] = p50_max_us(us);
      out[bcast ? "weights_bcast" : "weights_sends"] = {{"blob_bytes", c.blob_bytes}, {"p50_us", p50}, {"max_us", max}};
    }
  }
  comm->barrier();
  nlohmann::json f = fanout(*comm, c);
  comm->flush(std::chrono::seconds(10));
  if (comm->rank() == 0) {
    out["weights_fanout"] = std::move(f);
    out["weights_shm_channel"] = shm_channel(c);
    out["host"] = comm->host();
    std::printf("%s\n", out.dump().c_str());
    std::fflush(stdout);
  }
  return 0;
}

void add_link_bench_command(CommandTree& tree) {
  auto c = std::make_shared<LinkCli>();
  CLI::App* cmd = tree.bench.add_subcommand(
      "link", "Under mpirun: records/s through node bridges and weight broadcast latency (docs/cluster.md)");
  add_real(*cmd, "--seconds", c->seconds, "How long the records flow", 0.1, 3600)->capture_default_str();
  add_unsigned(*cmd, "--record-bytes", c->record_bytes, "Payload bytes per record (a PQT program: about 300)", 1,
               1 << 16)
      ->capture_default_str();
  add_unsigned(*cmd, "--producers", c->producers, "Producer threads (rings) per node", 1, 64)->capture_default_str();
  add_unsigned(*cmd, "--blob-bytes", c->blob_bytes, "Weight blob bytes", 1, std::uint64_t{1} << 30)
      ->capture_default_str();
  add_unsigned(*cmd, "--rounds", c->rounds, "Weight publications timed", 1, 100000)->capture_default_str();
  add_real(*cmd, "--fanout-rate", c->fanout_rate, "Publications per second through the weight fan-out", 1, 1e6)
      ->capture_default_str();
  cmd->add_flag_callback("--json", [] {}, "Accepted for symmetry with the other benches (the output is JSON)");
  cmd->callback([c, status = &tree.status] {
    *status = run_link_bench(*c);
  });
}

const CommandFamily kRegistration(kOrderBench, add_link_bench_command);

}  // namespace
}  // namespace ringrl::app
