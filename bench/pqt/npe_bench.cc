#include "bench/pqt/npe_bench.h"

#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "actors/pqt/lstm_sampler.h"
#include "bench/forked_rates.h"
#include "common/pqt/program_record.h"
#include "envs/bf/scorer.h"

namespace ringrl::bench {

std::vector<learner::EpisodeBatch> synthetic_batches(const learner::PqtLearner& learner,
                                                     const actors::PqtActorOptions& ao, int count) {
  actors::SamplerOptions so;
  so.batch_size = ao.batch_size;
  so.max_len = static_cast<int>(ao.score.max_code_length);
  so.eos_token = ao.eos_token;
  so.softmax_tr = ao.softmax_tr;
  actors::LstmSampler sampler(ao.shape, so);
  std::vector<float> blob(learner.layout().num_floats());
  learner.write_blob(blob.data());
  sampler.set_weights(blob.data(), blob.size());
  bf::Scorer scorer = bf::make_task(ao.task, ao.score);
  actors::SampledBatch sb;
  sb.resize(so.batch_size, so.max_len);
  std::vector<learner::EpisodeBatch> out(static_cast<std::size_t>(count));
  for (int k = 0; k < count; ++k) {
    sampler.sample(static_cast<std::uint64_t>(k) + 1, &sb);
    auto& b = out[static_cast<std::size_t>(k)];
    b.resize(so.batch_size, so.max_len);
    b.tokens = sb.tokens;
    b.lengths = sb.lengths;
    b.behaviour_log_probs = sb.log_probs;
    for (int i = 0; i < so.batch_size; ++i) {
      const auto n = static_cast<std::size_t>(sb.lengths[static_cast<std::size_t>(i)]);
      b.rewards[static_cast<std::size_t>(i)] =
          static_cast<float>(scorer.score(program_string(sb.row(i), n)).total_reward);
      b.policy_versions[static_cast<std::size_t>(i)] = 0;
    }
  }
  return out;
}

double actor_only_ceiling(const actors::PqtActorOptions& ao, const std::vector<float>& weights, std::uint32_t n,
                          double seconds) {
  return sum_of_forked_rates(
      n,
      [&](std::uint32_t i) {
        actors::PqtActorOptions mine = ao;
        mine.seed = ao.seed + i;
        return actors::actor_only_programs_per_s(mine, weights.data(), seconds);
      },
      "bench npe");
}

}  // namespace ringrl::bench
