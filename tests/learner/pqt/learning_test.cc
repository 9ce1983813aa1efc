// Learning sanity: sampler -> toy reward -> learner step -> blob -> sampler, a few hundred
// steps. Reward = fraction of '+' tokens (token 3). Seeded; fails if the mean reward of the
// last steps is not clearly above that of the first steps.
#include <gtest/gtest.h>

#include <torch/torch.h>
#include <cstdio>

#include "actors/pqt/lstm_sampler.h"
#include "learner/pqt/pqt_update.h"

namespace ringrl {
namespace {

constexpr int kPlus = 3;
constexpr int kWindow = 20;

struct Curve {
  double first = 0.0;
  double last = 0.0;
};

Curve train(learner::TrainMode mode, int steps, double lr) {
  torch::set_num_threads(1);
  learner::LearnerOptions o = learner::LearnerOptions::paper(mode);
  o.batch_size = 16;
  o.max_len = 8;
  o.lr = lr;
  o.device = "cpu";
  o.seed = 3;
  learner::PqtLearner l(o);
  actors::SamplerOptions so;
  so.batch_size = o.batch_size;
  so.max_len = o.max_len;
  actors::LstmSampler sampler(o.shape, so);
  std::vector<float> blob(l.layout().num_floats());
  actors::SampledBatch sb;
  sb.resize(so.batch_size, so.max_len);
  learner::EpisodeBatch eb;
  eb.resize(o.batch_size, o.max_len);
  Curve c;
  for (int step = 0; step < steps; ++step) {
    l.write_blob(blob.data());
    sampler.set_weights(blob.data(), blob.size());
    sampler.sample(/*seed=*/1000 + step, &sb);
    double mean = 0.0;
    for (int i = 0; i < o.batch_size; ++i) {
      int plus = 0;
      for (int t = 0; t < sb.lengths[i]; ++t) plus += sb.tokens[i * o.max_len + t] == kPlus;
      eb.rewards[i] = static_cast<float>(plus) / o.max_len;
      mean += eb.rewards[i];
    }
    mean /= o.batch_size;
    eb.tokens = sb.tokens;
    eb.lengths = sb.lengths;
    eb.behaviour_log_probs = sb.log_probs;
    for (auto& v : eb.policy_versions) v = l.version();
    l.step(eb);
    if (step < kWindow) c.first += mean / kWindow;
    if (step >= steps - kWindow) c.last += mean / kWindow;
  }
  std::printf("[ learning ] %s: mean reward first %d steps %.3f, last %d steps %.3f\n", learner::train_mode_name(mode),
              kWindow, c.first, kWindow, c.last);
  return c;
}

TEST(Learning, PqtIncreasesToyReward) {
  const Curve c = train(learner::TrainMode::kPqt, 300, 1e-3);
  EXPECT_GT(c.last, c.first + 0.25) << "first " << c.first << " last " << c.last;
}

TEST(Learning, PgIncreasesToyReward) {
  const Curve c = train(learner::TrainMode::kPg, 300, 1e-3);
  EXPECT_GT(c.last, c.first + 0.25) << "first " << c.first << " last " << c.last;
}

}  // namespace
}  // namespace ringrl
