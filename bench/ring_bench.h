// `ringrl bench ring`: two-process ring throughput for several record sizes, single-core
// memcpy bandwidth, and weight-broadcast latency, all measured in one invocation.
#pragma once

#include <cstdint>
#include <vector>

#include <CLI/CLI.hpp>

namespace ringrl::bench {

struct RingBenchResult {
  std::uint32_t record_bytes = 0;
  double records_per_s = 0;
  double gb_per_s = 0;  // payload bytes moved producer -> consumer
};

struct BroadcastBenchResult {
  std::uint64_t blob_bytes = 0;
  double p50_us = 0;
  double p99_us = 0;
  std::uint64_t samples = 0;
};

/// Producer in this process, consumer in a forked process attached by segment name.
RingBenchResult bench_ring(std::uint32_t record_bytes, double seconds, std::uint64_t ring_capacity,
                           std::uint32_t publish_every);
/// Single-core memcpy bandwidth, GB/s, for out-of-cache buffers of `bytes`.
double bench_memcpy(std::size_t bytes, double seconds);
/// Publish-to-consistent-copy latency seen by a reader in another process.
BroadcastBenchResult bench_broadcast(std::uint64_t blob_bytes, std::uint32_t samples);

}  // namespace ringrl::bench

namespace ringrl::app {
void add_ring_bench_command(CLI::App& bench);
}
