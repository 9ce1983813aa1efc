// Actor/learner agreement through the blob: the learner's teacher-forced logits, the
// dedicated sampler's and the plain LibTorch sampler's agree for the same weights.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <random>

#include "actors/pqt/lstm_sampler.h"
#include "actors/pqt/torch_reference_sampler.h"
#include "learner/pqt/pqt_update.h"

namespace ringrl {
namespace {

constexpr float kTol = 1e-5f;

learner::LearnerOptions options(bool eos) {
  learner::LearnerOptions o = learner::LearnerOptions::paper(learner::TrainMode::kPgPqt);
  o.batch_size = 8;
  o.max_len = 12;
  o.eos_token = eos;
  o.device = "cpu";
  o.param_init_factor = 1.0;
  return o;
}

std::vector<std::int32_t> random_tokens(int n, int lo, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> d(lo, 8);
  std::vector<std::int32_t> t(static_cast<std::size_t>(n));
  for (auto& x : t) x = d(rng);
  return t;
}

void expect_logits_match(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k] == kPolicyEosMaskedLogit || b[k] == kPolicyEosMaskedLogit) {
      ASSERT_EQ(a[k], b[k]) << k;
    } else {
      ASSERT_NEAR(a[k], b[k], kTol) << k;
    }
  }
}

class Agreement : public ::testing::TestWithParam<bool> {};

TEST_P(Agreement, LearnerSamplerReferenceLogits) {
  torch::set_num_threads(1);
  const bool eos = GetParam();
  learner::LearnerOptions o = options(eos);
  learner::PqtLearner l(o);
  // Move the weights away from init (biases nonzero) with a couple of steps.
  learner::EpisodeBatch batch;
  batch.resize(o.batch_size, o.max_len);
  batch.tokens = random_tokens(o.batch_size * o.max_len, 1, 5);
  for (int i = 0; i < o.batch_size; ++i) batch.lengths[i] = o.max_len - i % 3;
  for (int i = 0; i < o.batch_size; ++i) batch.rewards[i] = 0.1f * i;
  l.step(batch);
  l.step(batch);

  std::vector<float> blob(l.layout().num_floats());
  l.write_blob(blob.data());
  actors::SamplerOptions so;
  so.batch_size = o.batch_size;
  so.max_len = o.max_len;
  so.eos_token = eos;
  const int b = 5, t = o.max_len;
  const auto tokens = random_tokens(b * t, eos ? 0 : 1, 9);
  const std::vector<float> learner_logits = l.logits(tokens, b, t);
  const std::size_t n = static_cast<std::size_t>(b) * t * o.shape.vocab;

  for (actors::SamplerIsa isa : actors::available_sampler_isas()) {
    actors::LstmSampler s(o.shape, so, isa);
    s.set_weights(blob.data(), blob.size());
    std::vector<float> out(n);
    s.teacher_forced_logits(tokens.data(), b, t, out.data());
    SCOPED_TRACE(actors::sampler_isa_name(isa));
    expect_logits_match(learner_logits, out);
  }
  actors::TorchReferenceSampler ref(o.shape, so);
  ref.set_weights(blob.data(), blob.size());
  std::vector<float> out(n);
  ref.teacher_forced_logits(tokens.data(), b, t, out.data());
  expect_logits_match(learner_logits, out);
}

TEST_P(Agreement, BehaviourLogProbsMatchLearner) {
  // The sampler's per-token log-probs are what the learner computes for the same tokens.
  const bool eos = GetParam();
  learner::LearnerOptions o = options(eos);
  learner::PqtLearner l(o);
  std::vector<float> blob(l.layout().num_floats());
  l.write_blob(blob.data());
  actors::SamplerOptions so;
  so.batch_size = o.batch_size;
  so.max_len = o.max_len;
  so.eos_token = eos;
  actors::LstmSampler s(o.shape, so);
  s.set_weights(blob.data(), blob.size());
  actors::SampledBatch sb;
  sb.resize(so.batch_size, so.max_len);
  s.sample(/*seed=*/42, &sb);
  const auto logits = l.logits(sb.tokens, so.batch_size, so.max_len);
  const int v = o.shape.vocab;
  for (int i = 0; i < so.batch_size; ++i) {
    for (int t = 0; t < sb.lengths[i]; ++t) {
      const float* lg = logits.data() + (static_cast<std::size_t>(i) * so.max_len + t) * v;
      double m = -1e300, z = 0.0;
      for (int a = 0; a < v; ++a) m = std::max<double>(m, lg[a]);
      for (int a = 0; a < v; ++a) z += std::exp(static_cast<double>(lg[a]) - m);
      const int a = sb.tokens[static_cast<std::size_t>(i) * so.max_len + t];
      const double lp = lg[a] - m - std::log(z);
      ASSERT_NEAR(sb.log_probs[static_cast<std::size_t>(i) * so.max_len + t], lp, kTol)
          << "episode " << i << " t " << t;
    }
  }
}

TEST(Agreement, BlobRoundTripLearnerToSampler) {
  // learner A -> blob -> learner B and sampler: B and the sampler see A's weights.
  learner::LearnerOptions o = options(false);
  learner::PqtLearner a(o);
  o.seed = 1234;
  learner::PqtLearner b(o);
  std::vector<float> blob(a.layout().num_floats());
  a.write_blob(blob.data());
  b.read_blob(blob.data());
  std::vector<float> again(blob.size());
  b.write_blob(again.data());
  EXPECT_EQ(blob, again);
  actors::SamplerOptions so;
  so.batch_size = o.batch_size;
  so.max_len = o.max_len;
  actors::LstmSampler s(o.shape, so);
  EXPECT_THROW(s.set_weights(blob.data(), blob.size() - 1), UsageError);
  s.set_weights(blob.data(), blob.size());
  const auto tokens = random_tokens(2 * o.max_len, 1, 3);
  std::vector<float> out(static_cast<std::size_t>(2) * o.max_len * o.shape.vocab);
  s.teacher_forced_logits(tokens.data(), 2, o.max_len, out.data());
  expect_logits_match(b.logits(tokens, 2, o.max_len), out);
}

INSTANTIATE_TEST_SUITE_P(Eos, Agreement, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "eos_on" : "eos_off"; });

}  // namespace
}  // namespace ringrl
