#include "actors/pqt/pqt_actor.h"

#include <chrono>
#include <cstring>
#include <vector>

#include <spdlog/spdlog.h>

#include "actors/pqt/lstm_sampler.h"
#include "common/actor_runtime.h"
#include "common/blob_layout.h"
#include "common/pqt/program_record.h"
#include "common/records.h"
#include "common/seeds.h"
#include "common/signals.h"

namespace ringrl::actors {
namespace {

constexpr auto kFirstWeightsTimeout = std::chrono::seconds(60);
constexpr auto kPushWait = std::chrono::milliseconds(100);  // per wait; retried until stopped

SamplerOptions sampler_options(const PqtActorOptions& o) {
  SamplerOptions so;
  so.batch_size = o.batch_size;
  so.max_len = static_cast<int>(o.score.max_code_length);
  so.eos_token = o.eos_token;
  so.softmax_tr = o.softmax_tr;
  return so;
}

// Samples one batch and scores every program; calls emit(i, header) for each.
template <typename Emit>
void sample_and_score(LstmSampler& sampler, bf::Scorer& scorer, SampledBatch& batch, std::string& code,
                      std::uint64_t seed, std::uint64_t batch_index, Emit&& emit) {
  sampler.sample(seed, &batch);
  for (int i = 0; i < batch.batch_size; ++i) {
    const auto n = static_cast<std::size_t>(batch.lengths[static_cast<std::size_t>(i)]);
    const std::int32_t* row = batch.row(i);
    code.resize(n);
    for (std::size_t t = 0; t < n; ++t) code[t] = kProgramTokenChars[row[t]];
    const bf::ScoreResult r = scorer.score(code);
    ProgramEpisodeHeader h{};
    h.length = static_cast<std::uint32_t>(n);
    h.correct = r.correct ? 1 : 0;
    h.reason = static_cast<std::uint8_t>(r.reason);
    h.reward = r.total_reward;
    h.actor_batch = batch_index;
    emit(i, h);
  }
}

}  // namespace

int run_pqt_actor(const PqtActorOptions& o) {
  install_shutdown_handlers();
  ActorRuntime rt(o.segment, o.slot, o.require_parent_creator);
  LstmSampler sampler(o.shape, sampler_options(o));
  bf::Scorer scorer = bf::make_task(o.task, o.score);
  const std::size_t num_floats = sampler.layout().num_floats();
  std::vector<std::byte> blob;
  if (!rt.wait_for_weights(blob, kFirstWeightsTimeout)) return rt.should_stop() ? 0 : 3;
  // Uses the weights only when the blob carries this actor's policy layout (its fingerprint).
  auto load = [&] {
    std::string error;
    const float* weights = blob_payload(blob, sampler.layout().blob(), &error);
    if (weights == nullptr) {
      spdlog::error("actor {}: {}", o.slot, error);
      return false;
    }
    sampler.set_weights(weights, num_floats);
    return true;
  };
  if (!load()) return 4;
  SampledBatch batch;
  batch.resize(o.batch_size, static_cast<int>(o.score.max_code_length));
  std::string code;
  for (std::uint64_t k = 0; !rt.should_stop(); ++k) {
    // One batch is one unit of the work gate: claim it, then sample with the newest weights.
    if (!rt.wait_for_work()) break;
    if (rt.refresh_weights(blob) && !load()) return 4;
    const std::uint64_t version = rt.weights_version();
    bool stopped = false;
    sample_and_score(sampler, scorer, batch, code, mix_seed(o.seed, k), k, [&](int i, const ProgramEpisodeHeader& h) {
      if (stopped) return;
      const std::uint32_t bytes = program_episode_bytes(h.length);
      std::byte* dst = rt.ring().try_reserve(bytes);
      while (dst == nullptr) {
        // Full ring: the learner is behind. Wait (back-pressure), keep the heartbeat going.
        rt.slot().ring_stalls.fetch_add(1, std::memory_order_relaxed);  // a counter for display
        wait_until([&] { return (dst = rt.ring().try_reserve(bytes)) != nullptr; }, rt.stop_flag(), kPushWait);
        rt.heartbeat();
        if (dst == nullptr && rt.should_stop()) {
          stopped = true;
          return;
        }
      }
      encode_program_episode(dst, h, batch.row(i),
                             batch.log_probs.data() + static_cast<std::size_t>(i) * batch.max_len);
      rt.ring().commit(kRecordProgramEpisode, version, rt.unit());
    });
    rt.ring().flush();
    rt.count(static_cast<std::uint64_t>(o.batch_size), static_cast<std::uint64_t>(o.batch_size));
    rt.heartbeat();
  }
  return 0;
}

double actor_only_programs_per_s(const PqtActorOptions& o, const float* weights, double seconds) {
  LstmSampler sampler(o.shape, sampler_options(o));
  bf::Scorer scorer = bf::make_task(o.task, o.score);
  sampler.set_weights(weights, sampler.layout().num_floats());
  SampledBatch batch;
  batch.resize(o.batch_size, static_cast<int>(o.score.max_code_length));
  std::string code;
  std::uint64_t programs = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const auto deadline = t0 + std::chrono::duration<double>(seconds);
  for (std::uint64_t k = 0; std::chrono::steady_clock::now() < deadline; ++k) {
    sample_and_score(sampler, scorer, batch, code, mix_seed(o.seed, k), k, [](int, const ProgramEpisodeHeader&) {});
    programs += static_cast<std::uint64_t>(o.batch_size);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return static_cast<double>(programs) / secs;
}

}  // namespace ringrl::actors
