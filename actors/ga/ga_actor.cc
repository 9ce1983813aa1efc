#include "actors/ga/ga_actor.h"

#include <chrono>
#include <cstring>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/actor_runtime.h"
#include "common/backoff.h"
#include "common/blob_layout.h"
#include "common/errors.h"
#include "common/exit_status.h"
#include "common/ga/request_layout.h"
#include "common/records.h"
#include "common/signals.h"

namespace ringrl::actors {
namespace {

constexpr auto kFirstWeightsTimeout = std::chrono::seconds(60);
constexpr auto kWaitSlice = std::chrono::milliseconds(100);  // per wait; heartbeat between slices

}  // namespace

void GaActorOptions::validate() const {
  const std::int64_t place = run_slot >= 0 ? run_slot : static_cast<std::int64_t>(slot);
  if (actors < 1 || place >= actors)
    throw UsageError(fmt::format("GA actor slot {}: expected 0 to {} (actors {})", place, actors - 1, actors));
  if (population < 1) throw UsageError(fmt::format("population {}: expected at least 1", population));
  if (genome_length < 1) throw UsageError(fmt::format("timestep_limit {}: expected at least 1", genome_length));
}

GaFitnessRecord score_ga_row(bf::Scorer& scorer, std::uint32_t row, const std::string& genome) {
  const bf::ScoreResult s = scorer.score(genome);
  GaFitnessRecord r{};
  r.request_index = row;
  r.correct = s.correct ? 1 : 0;
  r.reason = static_cast<std::uint8_t>(s.reason);
  r.reward = s.total_reward;
  r.genome_hash = ga_genome_hash(genome.data(), genome.size());
  return r;
}

int run_ga_actor(const GaActorOptions& o) {
  o.validate();
  install_shutdown_handlers();
  ActorRuntime rt(o.segment, o.slot, o.require_parent_creator);
  bf::ScoreOptions so = bf::ScoreOptions::for_variant(bf::Variant::kPaper);
  so.max_code_length = o.genome_length;
  bf::Scorer scorer = bf::make_task(o.task, so);
  const BlobLayout layout = ga_request_layout(static_cast<int>(o.population), o.genome_length);
  std::vector<std::byte> blob;
  std::vector<std::string> genomes;
  if (!rt.wait_for_weights(blob, kFirstWeightsTimeout)) return rt.should_stop() ? 0 : 3;
  while (!rt.should_stop()) {
    // The request: checked before any row is scored.
    std::string error;
    const float* payload = blob_payload(blob, layout, &error);
    if (payload == nullptr || !read_ga_request(payload, layout, &genomes, &error)) {
      spdlog::error("GA actor {}: {}", o.slot, error);
      return kExitActorRefused;
    }
    const std::uint64_t version = rt.weights_version();
    std::uint64_t pushed = 0;
    const std::size_t place = o.run_slot >= 0 ? static_cast<std::size_t>(o.run_slot) : o.slot;
    for (std::size_t j = place; j < genomes.size() && !rt.should_stop(); j += o.actors) {
      const GaFitnessRecord r = score_ga_row(scorer, static_cast<std::uint32_t>(j), genomes[j]);
      std::byte* dst = rt.ring().try_reserve(sizeof r);
      while (dst == nullptr) {
        // Full ring: the learner is behind. Wait (back-pressure), keep the heartbeat going.
        rt.ring().flush();
        rt.slot().ring_stalls.fetch_add(1, std::memory_order_relaxed);  // a counter for display
        wait_until([&] { return (dst = rt.ring().try_reserve(sizeof r)) != nullptr; }, rt.stop_flag(), kWaitSlice);
        rt.heartbeat();
        if (dst == nullptr && rt.should_stop()) return 0;
      }
      std::memcpy(dst, &r, sizeof r);
      rt.ring().commit(kRecordGaFitness, version);
      ++pushed;
      rt.heartbeat();
    }
    rt.ring().flush();
    rt.count(pushed, pushed);
    // The next request.
    while (!rt.should_stop()) {
      const WaitResult w = wait_until(
          [&] {
            rt.heartbeat();
            return rt.refresh_weights(blob);
          },
          rt.stop_flag(), kWaitSlice);
      if (w == WaitResult::kReady) break;
    }
  }
  return 0;
}

}  // namespace ringrl::actors
