// The transport on its own: `ringrl demo` (with its `demo` actor kind) and `ringrl bench ring`.
//
// The demo is a complete actor -> ring -> learner -> weights loop without a neural network:
// the learner holds a weight vector w, each actor reads the newest w from the weight channel
// and pushes noisy gradient records g = (target - w) + noise for one chunk of w, and the
// learner applies w += lr * g and republishes. The distance to the target shrinks, and the
// loop reports record throughput, weight versions and policy lag.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "app/actor_registry.h"
#include "app/cli_numbers.h"
#include "app/commands.h"
#include "bench/ring_bench.h"
#include "common/actor_pool.h"
#include "common/actor_runtime.h"
#include "common/errors.h"
#include "common/records.h"
#include "common/seeds.h"
#include "common/signals.h"
#include "common/supervisor.h"

namespace ringrl::app {
namespace {

constexpr float kDemoLearningRate = 0.05f;
constexpr float kDemoNoise = 0.1f;
constexpr std::uint32_t kDemoPublishEvery = 256;  // records per weight publication
constexpr auto kDemoReportEvery = std::chrono::seconds(1);
constexpr auto kPushTimeout = std::chrono::milliseconds(200);

struct DemoRecord {  // payload prefix; `count` floats follow
  std::uint64_t seq;
  std::uint32_t chunk;
  std::uint32_t count;
};

float demo_target(std::uint32_t j) { return std::sin(0.01f * static_cast<float>(j)); }

struct DemoOptions {
  std::uint32_t actors = 2;
  double seconds = 10;
  std::uint32_t record_bytes = 256;
  std::uint32_t dim = 4096;
  std::string run_id;
  bool json = false;
};

int demo_actor(const ActorLaunch& launch) {
  install_shutdown_handlers();
  ActorRuntime rt(launch.segment, launch.slot);
  std::vector<std::byte> blob;
  if (!rt.wait_for_weights(blob, std::chrono::seconds(30))) return rt.should_stop() ? 0 : 3;
  const auto record_floats = static_cast<std::uint32_t>(std::stoul(launch.param("record_floats")));
  std::mt19937_64 rng(launch.seed);
  std::normal_distribution<float> noise(0.f, kDemoNoise);
  const std::uint32_t payload = rt.ring().max_record_bytes();
  std::uint64_t seq = 0;
  while (!rt.should_stop()) {
    rt.refresh_weights(blob);
    const auto* w = reinterpret_cast<const float*>(blob.data());
    const auto dim = static_cast<std::uint32_t>(blob.size() / sizeof(float));
    const std::uint32_t count = std::min<std::uint32_t>(record_floats, dim);
    const std::uint32_t bytes = static_cast<std::uint32_t>(sizeof(DemoRecord) + count * sizeof(float));
    if (bytes > payload) return 4;
    std::byte* dst = nullptr;
    const auto r =
        wait_until([&] { return (dst = rt.ring().try_reserve(bytes)) != nullptr; }, rt.stop_flag(), kPushTimeout);
    if (r != WaitResult::kReady) {
      rt.slot().ring_stalls.fetch_add(1, std::memory_order_relaxed);  // a counter for display
      rt.heartbeat();
      continue;
    }
    const std::uint32_t chunks = (dim + count - 1) / count;
    DemoRecord h{seq, static_cast<std::uint32_t>(seq % chunks), count};
    std::memcpy(dst, &h, sizeof h);
    auto* g = reinterpret_cast<float*>(dst + sizeof h);
    for (std::uint32_t k = 0; k < count; ++k) {
      const std::uint32_t j = (h.chunk * count + k) % dim;
      g[k] = demo_target(j) - w[j] + noise(rng);
    }
    rt.ring().commit(kRecordDemoGradient, rt.weights_version());
    rt.count(1, 1);
    rt.heartbeat();
    ++seq;
  }
  return 0;
}

void run_demo(const DemoOptions& o) {
  if (o.record_bytes < sizeof(DemoRecord) + sizeof(float) || o.record_bytes > (1u << 20))
    throw UsageError(fmt::format("--record-bytes {}: expected {} to {}", o.record_bytes,
                                 sizeof(DemoRecord) + sizeof(float), 1u << 20));
  if (o.dim < 1 || o.dim > (1u << 26)) throw UsageError(fmt::format("--dim {}: expected 1 to {}", o.dim, 1u << 26));
  if (!(o.seconds > 0)) throw UsageError(fmt::format("--seconds {}: expected a positive number", o.seconds));
  install_shutdown_handlers();
  install_crash_handlers();
  const std::string run_id = o.run_id.empty() ? fmt::format("demo-{}", getpid()) : o.run_id;
  RunLayoutOptions layout;
  layout.num_actors = o.actors;
  layout.weight_capacity = std::uint64_t{o.dim} * sizeof(float);
  const std::uint32_t count = static_cast<std::uint32_t>((o.record_bytes - sizeof(DemoRecord)) / sizeof(float));
  ActorPoolOptions po;
  po.run_id = run_id;
  po.layout = layout;
  po.record_mask = record_type_bit(kRecordDemoGradient);
  po.heartbeat_timeout = std::chrono::seconds(10);
  po.launch = [&](std::uint32_t slot) {
    ActorLaunch launch;
    launch.kind = "demo";
    launch.seed = actor_seed(/*base=*/0, slot);
    launch.params["record_floats"] = std::to_string(count);
    return launch;
  };
  ActorPool pool(po);

  std::vector<float> w(o.dim, 0.f);
  std::uint64_t version = 0;  // of the newest weights
  auto publish = [&] { version = pool.publish(w.data(), w.size() * sizeof(float), 0); };
  publish();
  pool.start();
  spdlog::info("demo: segment {}, {} actors, {}-byte records, {} weights", pool.segment_name(), o.actors,
               o.record_bytes, o.dim);

  std::uint64_t records = 0, bytes = 0, since_publish = 0, lag_max = 0, lag_sum = 0;
  std::vector<std::uint64_t> lags;
  const auto t0 = std::chrono::steady_clock::now();
  auto next_report = t0 + kDemoReportEvery;
  std::uint64_t last_records = 0;
  auto distance = [&] {
    double d = 0;
    for (std::uint32_t j = 0; j < o.dim; ++j) d += std::pow(demo_target(j) - w[j], 2);
    return std::sqrt(d / o.dim);
  };
  auto drain = [&] {
    return pool.drain([&](std::uint32_t i, const RecordView& rec) {
      DemoRecord h;
      std::memcpy(&h, rec.data, sizeof h);
      if (rec.length != sizeof h + std::uint64_t{h.count} * sizeof(float) || h.count == 0)
        throw std::runtime_error(
            fmt::format("actor {} sent a demo record of {} bytes for {} values", i, rec.length, h.count));
      const auto* g = reinterpret_cast<const float*>(rec.data + sizeof h);
      for (std::uint32_t k2 = 0; k2 < h.count; ++k2)
        w[(std::uint64_t{h.chunk} * h.count + k2) % o.dim] += kDemoLearningRate * g[k2];
      const std::uint64_t lag = version - rec.version;
      lag_max = std::max(lag_max, lag);
      lag_sum += lag;
      if (lags.size() < (1u << 20)) lags.push_back(lag);
      bytes += rec.length;
      ++records;
      if (++since_publish >= kDemoPublishEvery) {
        publish();
        since_publish = 0;
      }
      return true;
    });
  };
  Backoff idle;
  while (!shutdown_requested()) {
    const auto now = std::chrono::steady_clock::now();
    if (now - t0 >= std::chrono::duration<double>(o.seconds)) break;
    if (drain() == 0)
      idle.pause();
    else
      idle.reset();
    if (now >= next_report) {
      pool.poll();
      const double dt = std::chrono::duration<double>(now - t0).count();
      spdlog::info("demo: {:.0f} s  {:.2f} M records/s  weights v{}  rms distance {:.4f}  restarts {}", dt,
                   (records - last_records) / 1e6 / std::chrono::duration<double>(kDemoReportEvery).count(),
                   version, distance(), pool.supervisor().total_restarts());
      last_records = records;
      next_report = now + kDemoReportEvery;
    } else if ((records & 1023) == 0) {
      pool.poll();
    }
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  pool.stop();
  drain();
  std::sort(lags.begin(), lags.end());
  const std::uint64_t lag_p50 = lags.empty() ? 0 : lags[lags.size() / 2];
  nlohmann::json out = {{"demo", "done"},
                        {"actors", o.actors},
                        {"seconds", elapsed},
                        {"records", records},
                        {"records_per_s", records / elapsed},
                        {"mb_per_s", bytes / elapsed / 1e6},
                        {"weight_versions", version},
                        {"lag_p50", lag_p50},
                        {"lag_max", lag_max},
                        {"rms_distance", distance()},
                        {"restarts", pool.supervisor().total_restarts()},
                        {"interrupted", shutdown_requested()}};
  if (o.json) {
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf(
        "demo: %llu records in %.1f s = %.2f M records/s (%.0f MB/s), %llu weight versions, lag p50 %llu max %llu, rms "
        "distance %.4f, restarts %u\n",
        static_cast<unsigned long long>(records), elapsed, records / elapsed / 1e6, bytes / elapsed / 1e6,
        static_cast<unsigned long long>(version), static_cast<unsigned long long>(lag_p50),
        static_cast<unsigned long long>(lag_max), distance(), pool.supervisor().total_restarts());
  }
  std::fflush(stdout);
}

void add_transport_commands(CommandTree& tree) {
  register_actor_kind("demo", demo_actor);

  auto demo_opts = std::make_shared<DemoOptions>();
  CLI::App* demo = tree.root.add_subcommand(
      "demo", "Run the actor -> ring -> learner -> weights loop without a model and print throughput");
  add_unsigned(*demo, "--actors", demo_opts->actors, "Actor processes", 1, kMaxActors)->capture_default_str();
  add_real(*demo, "--seconds", demo_opts->seconds, "How long to run", 0)->capture_default_str();
  add_unsigned(*demo, "--record-bytes", demo_opts->record_bytes, "Payload bytes per record")->capture_default_str();
  add_unsigned(*demo, "--dim", demo_opts->dim, "Weight vector length (floats)")->capture_default_str();
  demo->add_option("--run-id", demo_opts->run_id, "Run id for the segment name (default demo-<pid>)");
  demo->add_flag("--json", demo_opts->json, "Print the summary as one JSON object");
  demo->callback([demo_opts] { run_demo(*demo_opts); });

  add_ring_bench_command(tree.bench);
}

const CommandFamily kRegistration(kOrderTransport, add_transport_commands);

}  // namespace
}  // namespace ringrl::app
