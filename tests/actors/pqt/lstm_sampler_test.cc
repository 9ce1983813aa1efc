// Tests for actors/pqt/lstm_sampler.h and actors/pqt/torch_reference_sampler.h.
#include "actors/pqt/lstm_sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "actors/pqt/torch_reference_sampler.h"
#include "bench/pqt/sampler_bench.h"

namespace ringrl::actors {
namespace {

std::vector<float> random_blob(const PolicyLayout& layout, std::uint64_t seed, float scale) {
  std::vector<float> blob(layout.num_floats(), 0.0f);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (const auto& t : layout.tensors()) {
    for (std::size_t k = 0; k < t.numel(); ++k) blob[t.offset + k] = u(rng);
  }
  return blob;
}

SamplerOptions opts(int b, int t, bool eos) {
  SamplerOptions o;
  o.batch_size = b;
  o.max_len = t;
  o.eos_token = eos;
  return o;
}

TEST(LstmSampler, RejectsBadInput) {
  EXPECT_THROW(LstmSampler(PolicyShape{}, opts(0, 10, false)), UsageError);
  LstmSampler s(PolicyShape{}, opts(4, 10, false));
  SampledBatch out;
  EXPECT_THROW(s.sample(1, &out), UsageError);  // no weights yet
  std::vector<float> blob(s.layout().num_floats() + 1);
  EXPECT_THROW(s.set_weights(blob.data(), blob.size()), UsageError);
}

TEST(LstmSampler, DeterministicPerSeedAndEosOff) {
  const PolicyShape shape;
  const auto blob = random_blob(PolicyLayout(shape), 1, 0.3f);
  LstmSampler s(shape, opts(64, 100, false));
  s.set_weights(blob.data(), blob.size());
  SampledBatch a, b, c;
  a.resize(64, 100);
  b.resize(64, 100);
  c.resize(64, 100);
  s.sample(7, &a);
  s.sample(7, &b);
  s.sample(8, &c);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.log_probs, b.log_probs);
  EXPECT_NE(a.tokens, c.tokens);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(a.lengths[i], 100);
  for (std::size_t k = 0; k < a.tokens.size(); ++k) {
    ASSERT_GE(a.tokens[k], 1);  // EOS never drawn
    ASSERT_LE(a.tokens[k], 8);
    ASSERT_LE(a.log_probs[k], 0.0f);
    ASSERT_GT(a.log_probs[k], -30.0f);
  }
}

TEST(LstmSampler, EosEndsEpisodesAndPadsWithZero) {
  PolicyShape shape;
  const PolicyLayout layout(shape);
  auto blob = random_blob(layout, 2, 0.3f);
  // Make EOS likely: a large output weight column for token 0 is not possible with zero
  // hidden states, so lean on the layer-1 bias: o gate open, then strong EOS weights.
  const auto& w = layout.output();
  for (int r = 0; r < w.rows; ++r) blob[w.offset + r * w.cols + 0] = 1.5f;
  LstmSampler s(shape, opts(32, 50, true));
  s.set_weights(blob.data(), blob.size());
  SampledBatch out;
  out.resize(32, 50);
  s.sample(3, &out);
  int ended = 0;
  for (int i = 0; i < 32; ++i) {
    const int len = out.lengths[i];
    ASSERT_GE(len, 1);
    ASSERT_LE(len, 50);
    const auto* row = out.row(i);
    for (int t = 0; t < len - 1; ++t) ASSERT_NE(row[t], 0) << "EOS before the end";
    if (len < 50 || row[49] == 0) {
      ASSERT_EQ(row[len - 1], 0);
      ++ended;
    }
    for (int t = len; t < 50; ++t) {
      ASSERT_EQ(row[t], 0);
      ASSERT_EQ(out.log_probs[static_cast<std::size_t>(i) * 50 + t], 0.0f);
    }
  }
  EXPECT_GT(ended, 0);
}

TEST(LstmSampler, ZeroOutputWeightsSampleUniformly) {
  // With W_out = 0 all live logits are 0: tokens must be uniform over the 8 ops and every
  // log-prob is exactly -ln 8.
  PolicyShape shape;
  const PolicyLayout layout(shape);
  auto blob = random_blob(layout, 4, 0.3f);
  const auto& w = layout.output();
  std::fill(blob.begin() + static_cast<long>(w.offset), blob.begin() + static_cast<long>(w.offset + w.numel()), 0.0f);
  LstmSampler s(shape, opts(64, 100, false));
  s.set_weights(blob.data(), blob.size());
  SampledBatch out;
  out.resize(64, 100);
  std::vector<int> counts(9, 0);
  constexpr int kBatches = 5;
  for (int k = 0; k < kBatches; ++k) {
    s.sample(100 + k, &out);
    for (std::size_t j = 0; j < out.tokens.size(); ++j) {
      ++counts[out.tokens[j]];
      ASSERT_NEAR(out.log_probs[j], -std::log(8.0f), 1e-6);
    }
  }
  const double expected = kBatches * 6400 / 8.0;
  double chi2 = 0.0;
  for (int a = 1; a <= 8; ++a) chi2 += (counts[a] - expected) * (counts[a] - expected) / expected;
  EXPECT_EQ(counts[0], 0);
  EXPECT_LT(chi2, 24.3);  // 7 dof, p = 0.001
}

TEST(LstmSampler, MatchesReferenceDistribution) {
  // Same blob: the empirical first-token distribution of both samplers matches softmax of
  // the teacher-forced step-0 logits.
  PolicyShape shape;
  const PolicyLayout layout(shape);
  const auto blob = random_blob(layout, 5, 0.6f);
  const auto o = opts(64, 1, false);
  LstmSampler s(shape, o);
  TorchReferenceSampler r(shape, o);
  s.set_weights(blob.data(), blob.size());
  r.set_weights(blob.data(), blob.size());
  std::int32_t dummy = 1;
  std::vector<float> lg(9);
  s.teacher_forced_logits(&dummy, 1, 1, lg.data());
  double z = 0.0;
  for (int a = 1; a < 9; ++a) z += std::exp(lg[a]);
  SampledBatch out;
  out.resize(64, 1);
  std::vector<double> cs(9, 0.0), cr(9, 0.0);
  constexpr int kBatches = 200;
  for (int k = 0; k < kBatches; ++k) {
    s.sample(k, &out);
    for (int i = 0; i < 64; ++i) cs[out.tokens[i]] += 1.0;
    r.sample(k, &out);
    for (int i = 0; i < 64; ++i) cr[out.tokens[i]] += 1.0;
  }
  const double n = kBatches * 64.0;
  for (int a = 1; a < 9; ++a) {
    const double p = std::exp(lg[a]) / z;
    const double sd = std::sqrt(p * (1 - p) / n);
    EXPECT_NEAR(cs[a] / n, p, 5 * sd) << "dedicated token " << a;
    EXPECT_NEAR(cr[a] / n, p, 5 * sd) << "reference token " << a;
  }
}

TEST(LstmSampler, IsaVariantsAgree) {
  PolicyShape shape;
  shape.lstm_sizes = {35, 20, 35};  // also covers the general (3-layer) path
  const PolicyLayout layout(shape);
  const auto blob = random_blob(layout, 6, 0.4f);
  const auto o = opts(8, 20, true);
  TorchReferenceSampler ref(shape, o);
  ref.set_weights(blob.data(), blob.size());
  std::vector<std::int32_t> tokens(8 * 20);
  std::mt19937 rng(1);
  for (auto& t : tokens) t = static_cast<std::int32_t>(rng() % 9);
  std::vector<float> want(8 * 20 * 9);
  ref.teacher_forced_logits(tokens.data(), 8, 20, want.data());
  for (SamplerIsa isa : available_sampler_isas()) {
    LstmSampler s(shape, o, isa);
    s.set_weights(blob.data(), blob.size());
    std::vector<float> got(want.size());
    s.teacher_forced_logits(tokens.data(), 8, 20, got.data());
    for (std::size_t k = 0; k < got.size(); ++k) {
      ASSERT_NEAR(got[k], want[k], 1e-5) << sampler_isa_name(isa) << " at " << k;
    }
  }
}

TEST(SamplerBench, RunsAndReportsBothSides) {
  SamplerBenchOptions o;
  o.sampler = opts(8, 10, false);
  o.seconds = 0.2;
  o.rounds = 1;
  const SamplerBenchResult r = bench_sampler(o);
  EXPECT_GT(r.dedicated_programs_per_s, 0.0);
  EXPECT_GT(r.torch_programs_per_s, 0.0);
  EXPECT_FALSE(r.isa.empty());
}

}  // namespace
}  // namespace ringrl::actors
