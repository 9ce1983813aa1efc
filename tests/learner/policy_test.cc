// Tests for learner/policy.h and the blob layout of common/policy_layout.h.
#include "learner/policy.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ringrl::learner {
namespace {

TEST(PolicyLayout, DefaultShapeOffsetsAndSize) {
  const PolicyLayout layout;
  ASSERT_EQ(layout.tensors().size(), 6u);
  EXPECT_EQ(layout.embedding().rows, 9);
  EXPECT_EQ(layout.embedding().cols, 10);
  EXPECT_EQ(layout.lstm_kernel(0).rows, 45);
  EXPECT_EQ(layout.lstm_kernel(0).cols, 140);
  EXPECT_EQ(layout.lstm_kernel(1).rows, 70);
  EXPECT_EQ(layout.lstm_bias(1).cols, 140);
  EXPECT_EQ(layout.output().rows, 35);
  EXPECT_EQ(layout.output().cols, 9);
  EXPECT_EQ(layout.num_parameters(), 90u + 6300 + 140 + 9800 + 140 + 315);
  std::size_t end = 0;
  for (const auto& t : layout.tensors()) {
    EXPECT_EQ(t.offset % kPolicyBlobAlignFloats, 0u) << t.name;
    EXPECT_GE(t.offset, end) << t.name;
    end = t.offset + t.numel();
  }
  EXPECT_LE(end, layout.num_floats());
  EXPECT_EQ(layout.num_floats() % kPolicyBlobAlignFloats, 0u);
}

TEST(PolicyLayout, FingerprintTracksShape) {
  PolicyShape other;
  other.lstm_sizes = {35, 36};
  EXPECT_EQ(PolicyLayout().fingerprint(), PolicyLayout(PolicyShape{}).fingerprint());
  EXPECT_NE(PolicyLayout().fingerprint(), PolicyLayout(other).fingerprint());
  PolicyShape bad;
  bad.lstm_sizes = {};
  EXPECT_THROW(PolicyLayout{bad}, UsageError);
}

TEST(Policy, InitRanges) {
  PolicyOptions o;
  o.param_init_factor = 0.5;
  Policy p(o);
  EXPECT_LE(p->embedding.abs().max().item<float>(), 1.0f);
  EXPECT_GT(p->embedding.abs().max().item<float>(), 0.8f);  // U(-1, 1), 90 draws
  // Layer 0 kernel 45 x 140: s = sqrt(3 * 0.5 / 92.5).
  const double s0 = std::sqrt(1.5 / 92.5);
  EXPECT_NEAR(variance_scaling_limit(45, 140, 0.5), s0, 1e-12);
  EXPECT_LE(p->kernels[0].abs().max().item<float>(), s0 + 1e-7);
  EXPECT_GT(p->kernels[0].abs().max().item<float>(), 0.95 * s0);
  EXPECT_EQ(p->biases[0].abs().max().item<float>(), 0.0f);
  // Same seed, same weights; another seed, others.
  Policy q(o);
  EXPECT_TRUE(torch::equal(p->kernels[1], q->kernels[1]));
  o.seed = 2;
  Policy r(o);
  EXPECT_FALSE(torch::equal(p->kernels[1], r->kernels[1]));
}

TEST(Policy, BlobRoundTrip) {
  Policy a(PolicyOptions{});
  PolicyOptions ob;
  ob.seed = 99;
  Policy b(ob);
  std::vector<float> blob(a->layout().num_floats(), 123.0f);
  a->write_blob(blob.data());
  // Padding is zeroed, tensors land at their offsets.
  const auto& k1 = a->layout().lstm_kernel(1);
  EXPECT_EQ(blob[k1.offset + 5], a->kernels[1].view({-1})[5].item<float>());
  EXPECT_EQ(blob[a->layout().embedding().offset + a->layout().embedding().numel()], 0.0f);
  b->read_blob(blob.data());
  for (std::size_t k = 0; k < a->blob_parameters().size(); ++k) {
    EXPECT_TRUE(torch::equal(a->blob_parameters()[k], b->blob_parameters()[k])) << k;
  }
}

TEST(Policy, ForwardShapesAndEosMask) {
  Policy p(PolicyOptions{});
  auto actions = torch::randint(1, 9, {3, 7}, torch::kInt64);
  auto f = p->forward(actions);
  EXPECT_EQ(f.logits.sizes(), (std::vector<int64_t>{3, 7, 9}));
  EXPECT_TRUE((f.logits.select(2, 0) == kPolicyEosMaskedLogit).all().item<bool>());
  EXPECT_TRUE(torch::isfinite(f.logits.narrow(2, 1, 8)).all().item<bool>());
  // Inputs are the actions shifted right behind EOS.
  EXPECT_TRUE(torch::equal(f.input_tokens.select(1, 0), torch::zeros({3}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(f.input_tokens.narrow(1, 1, 6), actions.narrow(1, 0, 6)));
  // Causality: changing the last action changes no logit.
  auto changed = actions.clone();
  changed.select(1, 6).fill_(1);
  changed[0][6] = 2;
  EXPECT_TRUE(torch::allclose(p->forward(changed).logits, f.logits));
  PolicyOptions eos;
  eos.eos_token = true;
  Policy q(eos);
  EXPECT_TRUE(torch::isfinite(q->forward(actions).logits).all().item<bool>());
}

}  // namespace
}  // namespace ringrl::learner
