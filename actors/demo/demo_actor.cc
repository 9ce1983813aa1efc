#include "actors/demo/demo_actor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/actor_runtime.h"
#include "common/demo/demo_record.h"
#include "common/records.h"
#include "common/signals.h"

namespace ringrl::demo {
namespace {

constexpr float kNoise = 0.1f;  // standard deviation of each gradient entry's noise
constexpr auto kWeightsWait = std::chrono::seconds(30);
constexpr auto kPushTimeout = std::chrono::milliseconds(200);

}  // namespace

int run_demo_actor(const ActorLaunch& launch) {
  install_shutdown_handlers();
  ActorRuntime rt(launch.segment, launch.slot);
  std::vector<std::byte> blob;
  if (!rt.wait_for_weights(blob, kWeightsWait)) return rt.should_stop() ? 0 : 3;
  const auto record_floats = static_cast<std::uint32_t>(std::stoul(launch.param(kRecordFloatsParam)));
  std::mt19937_64 rng(launch.seed);
  std::normal_distribution<float> noise(0.f, kNoise);
  const std::uint32_t payload = rt.ring().max_record_bytes();
  std::uint64_t seq = 0;
  while (!rt.should_stop()) {
    rt.refresh_weights(blob);
    const auto* w = reinterpret_cast<const float*>(blob.data());
    const auto dim = static_cast<std::uint32_t>(blob.size() / sizeof(float));
    const std::uint32_t count = std::min<std::uint32_t>(record_floats, dim);
    const auto bytes = static_cast<std::uint32_t>(sizeof(DemoRecord) + count * sizeof(float));
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
    const DemoRecord h{seq, static_cast<std::uint32_t>(seq % chunks), count};
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

}  // namespace ringrl::demo
