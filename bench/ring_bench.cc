#include "bench/ring_bench.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/cli_numbers.h"
#include "common/errors.h"
#include "common/records.h"
#include "common/run_segment.h"
#include "common/supervisor.h"

namespace ringrl::bench {
namespace {

constexpr std::uint64_t kEndOfStream = ~std::uint64_t{0};
constexpr auto kChildStartTimeout = std::chrono::seconds(10);
constexpr std::uint32_t kBroadcastGapUs = 200;  // idle time between publications

using Clock = std::chrono::steady_clock;

std::string bench_run_id(const char* what) { return fmt::format("bench-{}-{}", what, getpid()); }

// Runs `child` in a forked process and returns its exit status.
template <typename Child>
pid_t fork_child(Child&& child) {
  const pid_t pid = fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork of a bench child process");
  if (pid == 0) {
    int rc = 1;
    try {
      rc = child();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ringrl: bench child: %s\n", e.what());
    }
    _exit(rc);
  }
  return pid;
}

void wait_child(pid_t pid, const char* what) {
  int status = 0;
  pid_t r;
  while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (r < 0) throw std::system_error(errno, std::generic_category(), fmt::format("waitpid for the {} child", what));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(fmt::format("{} consumer process ended with {}", what, describe_wait_status(status)));
}

bool wait_phase(const ControlBlock& c, RunPhase phase) {
  const auto deadline = Clock::now() + kChildStartTimeout;
  // acquire: pairs with the child's release, so what it set up before the phase is visible.
  while (c.phase.load(std::memory_order_acquire) != static_cast<std::uint32_t>(phase)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

}  // namespace

RingBenchResult bench_ring(std::uint32_t record_bytes, double seconds, std::uint64_t ring_capacity,
                           std::uint32_t publish_every) {
  if (record_bytes < 2 * sizeof(std::uint64_t))
    throw UsageError(fmt::format("record size {} bytes: expected at least 16", record_bytes));
  RunLayoutOptions lo;
  lo.num_actors = 1;
  lo.ring_capacity = ring_capacity;
  lo.weight_capacity = 64;
  RunSegment seg = RunSegment::create(bench_run_id("ring"), lo);
  if (record_bytes > seg.ring(0)->max_record_bytes)
    throw UsageError(fmt::format("record size {} bytes does not fit a {}-byte ring", record_bytes, ring_capacity));
  const std::string name = seg.name();
  const pid_t parent = getpid();

  // Consumer: checks each record's sequence number at both ends and copies the payload out, as
  // a learner building a batch would. Reports count and elapsed time through the control block.
  const pid_t child = fork_child([&] {
    RunSegment s = RunSegment::attach(name, parent);
    RingReader reader(s.ring(0), record_type_bit(kRecordBench));
    std::vector<std::byte> sink(record_bytes);
    std::uint64_t expect = 0;
    s.control().phase.store(static_cast<std::uint32_t>(RunPhase::kRunning), std::memory_order_release);  // attached
    Backoff idle;
    Clock::time_point first{};
    for (;;) {
      RecordView rec;
      const PeekStatus st = reader.peek(rec);
      if (st == PeekStatus::kEmpty) {
        idle.pause();
        continue;
      }
      if (st == PeekStatus::kCorrupt) {
        std::fprintf(stderr, "ringrl: bench: %s\n", reader.error().c_str());
        return 2;
      }
      idle.reset();
      std::uint64_t head, tailv;
      std::memcpy(&head, rec.data, sizeof head);
      if (head == kEndOfStream) break;
      if (expect == 0) first = Clock::now();
      std::memcpy(&tailv, rec.data + rec.length - sizeof tailv, sizeof tailv);
      if (head != expect || tailv != expect || rec.length != record_bytes) {
        std::fprintf(stderr, "ringrl: bench: record %llu out of order or torn\n",
                     static_cast<unsigned long long>(expect));
        return 3;
      }
      std::memcpy(sink.data(), rec.data, rec.length);
      reader.release();
      ++expect;
    }
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - first).count();
    s.control().npe.store(expect, std::memory_order_relaxed);  // published by the release below
    s.control().env_steps.store(static_cast<std::uint64_t>(ns), std::memory_order_relaxed);              // same
    s.control().phase.store(static_cast<std::uint32_t>(RunPhase::kStopped), std::memory_order_release);  // results
    return 0;
  });
  if (!wait_phase(seg.control(), RunPhase::kRunning)) {
    kill(child, SIGKILL);
    wait_child(child, "ring");
    throw std::runtime_error("ring bench consumer did not start");
  }

  RingWriter writer(seg.ring(0), publish_every);
  std::vector<std::byte> src(record_bytes, std::byte{0x5a});
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  std::uint64_t seq = 0;
  Backoff full;
  for (;;) {
    std::byte* dst = writer.try_reserve(record_bytes);
    if (dst == nullptr) {
      full.pause();
      continue;
    }
    full.reset();
    std::memcpy(dst, src.data(), record_bytes);
    std::memcpy(dst, &seq, sizeof seq);
    std::memcpy(dst + record_bytes - sizeof seq, &seq, sizeof seq);
    writer.commit(kRecordBench, 0);
    ++seq;
    if ((seq & 1023) == 0 && Clock::now() >= deadline) break;
  }
  std::byte* dst = nullptr;
  while ((dst = writer.try_reserve(record_bytes)) == nullptr) std::this_thread::yield();
  std::memcpy(dst, &kEndOfStream, sizeof kEndOfStream);
  writer.commit(kRecordBench, 0);
  writer.flush();
  wait_child(child, "ring");
  // The child stored these, then kStopped (release), then exited; acquire the phase first.
  if (seg.control().phase.load(std::memory_order_acquire) != static_cast<std::uint32_t>(RunPhase::kStopped))
    throw std::runtime_error("ring bench consumer exited without reporting its results");
  const double count = static_cast<double>(seg.control().npe.load(std::memory_order_relaxed));  // after acquire
  const double secs = static_cast<double>(seg.control().env_steps.load(std::memory_order_relaxed)) / 1e9;  // same
  if (count != static_cast<double>(seq)) throw std::runtime_error("ring bench consumer lost records");
  RingBenchResult r;
  r.record_bytes = record_bytes;
  r.records_per_s = count / secs;
  r.gb_per_s = count * record_bytes / secs / 1e9;
  return r;
}

double bench_memcpy(std::size_t bytes, double seconds) {
  std::vector<std::byte> a(bytes, std::byte{1}), b(bytes, std::byte{2});
  std::memcpy(b.data(), a.data(), bytes);  // fault the pages in
  std::uint64_t copies = 0;
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    std::memcpy(b.data(), a.data(), bytes);
    std::swap(a, b);
    ++copies;
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  volatile std::byte keep = a[bytes / 2];
  (void)keep;
  return static_cast<double>(copies) * bytes / secs / 1e9;
}

BroadcastBenchResult bench_broadcast(std::uint64_t blob_bytes, std::uint32_t samples) {
  RunLayoutOptions lo;
  lo.num_actors = 1;
  lo.ring_capacity = 1 << 16;
  lo.weight_capacity = blob_bytes;
  RunSegment seg = RunSegment::create(bench_run_id("bcast"), lo);
  const std::string name = seg.name();
  const pid_t parent = getpid();

  // Reader: waits for each new version, copies it, and sends the publish-to-copy latency back
  // through the ring; also acknowledges the version so the writer can pace itself.
  const pid_t child = fork_child([&] {
    RunSegment s = RunSegment::attach(name, parent);
    WeightReader reader(s.weights());
    RingWriter out(s.ring(0), 1);
    std::vector<std::byte> copy(blob_bytes);
    std::uint64_t have = 0;
    s.control().phase.store(static_cast<std::uint32_t>(RunPhase::kRunning), std::memory_order_release);  // attached
    Backoff idle;
    while (s.control().stop.load(std::memory_order_acquire) == 0) {  // pairs with request_stop()
      std::size_t n = 0;
      std::uint64_t published = 0;
      const std::uint64_t v = reader.read_if_newer(have, copy.data(), copy.size(), &n, &published);
      if (v == 0) {
        idle.pause();
        continue;
      }
      const std::uint64_t latency = steady_now_ns() - published;
      idle.reset();
      std::uint64_t word;
      std::memcpy(&word, copy.data() + n - sizeof word, sizeof word);
      if (word != v) return 2;  // the last word of blob v holds v: a torn copy would show
      have = v;
      if (!out.push(kRecordBench, v, &latency, sizeof latency, &s.control().stop, std::chrono::seconds(5))) return 3;
      s.control().learner_steps.store(v, std::memory_order_release);  // ack: the pushed latency is visible
    }
    return 0;
  });
  if (!wait_phase(seg.control(), RunPhase::kRunning)) {
    kill(child, SIGKILL);
    wait_child(child, "broadcast");
    throw std::runtime_error("broadcast bench reader did not start");
  }
  WeightWriter writer(seg.weights());
  RingReader in(seg.ring(0));
  std::vector<std::byte> blob(blob_bytes, std::byte{7});
  std::vector<double> lat_us;
  for (std::uint32_t i = 0; i < samples; ++i) {
    const std::uint64_t next = writer.version() + 1;
    std::memcpy(blob.data() + blob_bytes - sizeof next, &next, sizeof next);
    const std::uint64_t v = writer.publish(blob.data(), blob.size());
    Backoff wait;
    while (seg.control().learner_steps.load(std::memory_order_acquire) < v) wait.pause();  // pairs with the ack
    RecordView rec;
    while (in.peek(rec) == PeekStatus::kRecord) {
      std::uint64_t ns;
      std::memcpy(&ns, rec.data, sizeof ns);
      lat_us.push_back(static_cast<double>(ns) / 1e3);
      in.release();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(kBroadcastGapUs));
  }
  seg.request_stop();
  wait_child(child, "broadcast");
  std::sort(lat_us.begin(), lat_us.end());
  BroadcastBenchResult r;
  r.blob_bytes = blob_bytes;
  r.samples = lat_us.size();
  if (!lat_us.empty()) {
    r.p50_us = lat_us[lat_us.size() / 2];
    r.p99_us = lat_us[std::min(lat_us.size() - 1, lat_us.size() * 99 / 100)];
  }
  return r;
}

}  // namespace ringrl::bench

namespace ringrl::app {

void add_ring_bench_command(CLI::App& bench) {
  constexpr double kMinSeconds = 0.05;  // --seconds range
  constexpr double kMaxSeconds = 600.0;
  constexpr std::uint32_t kMaxPublishEvery = 4096;  // --publish-every upper bound
  constexpr std::uint32_t kMaxSamples = 100000;     // --samples upper bound
  struct Options {
    bool json = false;
    double seconds = 1.0;
    std::uint64_t ring_bytes = 1 << 20;
    std::uint32_t publish_every = 16;
    std::vector<std::uint32_t> sizes{64, 256, 4096};
    std::vector<std::uint64_t> blobs{1 << 20, 10 << 20};
    std::uint32_t samples = 200;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd =
      bench.add_subcommand("ring", "Two-process ring throughput, memcpy bandwidth, weight-broadcast latency");
  cmd->add_flag("--json", o->json, "One JSON object per line");
  add_real(*cmd, "--seconds", o->seconds, "Seconds per record size", kMinSeconds, kMaxSeconds)->capture_default_str();
  add_unsigned(*cmd, "--ring-bytes", o->ring_bytes, "Ring data bytes (power of two)")->capture_default_str();
  add_unsigned(*cmd, "--publish-every", o->publish_every, "Records per head publication", 1, kMaxPublishEvery)
      ->capture_default_str();
  add_unsigned(*cmd, "--sizes", o->sizes, "Record payload sizes, bytes")->delimiter(',')->capture_default_str();
  add_unsigned(*cmd, "--blobs", o->blobs, "Weight blob sizes, bytes")->delimiter(',')->capture_default_str();
  add_unsigned(*cmd, "--samples", o->samples, "Broadcasts per blob size", 1, kMaxSamples)->capture_default_str();
  cmd->callback([o] {
    constexpr std::size_t kMemcpyBytes = std::size_t{64} << 20;         // out of every cache
    constexpr std::size_t kMemcpyCachedBytes = std::size_t{256} << 10;  // fits L2, like a hot ring
    const double memcpy_gbs = bench::bench_memcpy(kMemcpyBytes, o->seconds);
    const double memcpy_cached_gbs = bench::bench_memcpy(kMemcpyCachedBytes, o->seconds);
    for (std::uint32_t size : o->sizes) {
      const auto r = bench::bench_ring(size, o->seconds, o->ring_bytes, o->publish_every);
      if (o->json) {
        std::printf("%s\n", nlohmann::json{{"bench", "ring"},
                                           {"record_bytes", size},
                                           {"records_per_s", r.records_per_s},
                                           {"gb_per_s", r.gb_per_s},
                                           {"memcpy_gb_per_s", memcpy_gbs},
                                           {"memcpy_cached_gb_per_s", memcpy_cached_gbs},
                                           {"ring_bytes", o->ring_bytes},
                                           {"publish_every", o->publish_every}}
                                .dump()
                                .c_str());
      } else {
        std::printf(
            "ring  %6u B records: %8.2f M records/s  %6.2f GB/s  (%.0f%% of memcpy %.2f GB/s; %.0f%% of in-cache "
            "memcpy %.2f GB/s)\n",
            size, r.records_per_s / 1e6, r.gb_per_s, 100 * r.gb_per_s / memcpy_gbs, memcpy_gbs,
            100 * r.gb_per_s / memcpy_cached_gbs, memcpy_cached_gbs);
      }
      std::fflush(stdout);
    }
    for (std::uint64_t blob : o->blobs) {
      const auto r = bench::bench_broadcast(blob, o->samples);
      if (o->json) {
        std::printf("%s\n", nlohmann::json{{"bench", "broadcast"},
                                           {"blob_bytes", blob},
                                           {"publish_to_read_us_p50", r.p50_us},
                                           {"p99", r.p99_us},
                                           {"samples", r.samples}}
                                .dump()
                                .c_str());
      } else {
        std::printf("broadcast %8llu B blob: publish -> consistent copy p50 %8.1f us  p99 %8.1f us  (%llu samples)\n",
                    static_cast<unsigned long long>(blob), r.p50_us, r.p99_us,
                    static_cast<unsigned long long>(r.samples));
      }
      std::fflush(stdout);
    }
  });
}

}  // namespace ringrl::app
