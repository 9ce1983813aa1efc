// Tests for learner/pqt/policy.h and the blob layout of common/pqt/policy_layout.h.
#include "learner/pqt/policy.h"

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
  // The offsets documented in docs/policy.md.
  EXPECT_EQ(layout.lstm_kernel(0).offset, 96u);
  EXPECT_EQ(layout.lstm_bias(0).offset, 6400u);
  EXPECT_EQ(layout.lstm_kernel(1).offset, 6544u);
  EXPECT_EQ(layout.lstm_bias(1).offset, 16352u);
  EXPECT_EQ(layout.output().offset, 16496u);
  EXPECT_EQ(layout.num_floats(), 16816u);
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

// The fused LSTM layer (hand-written BPTT) must give the plain autograd values and gradients.
void check_fused_matches_reference(bool cpu_loops, bool eos) {
  PolicyOptions o;
  o.param_init_factor = 1.0;
  o.eos_token = eos;
  o.cpu_loops = cpu_loops;
  o.shape.lstm_sizes = {35, 20, 35};  // three layers: also a hidden layer in the middle
  Policy p(o);
  {
    torch::NoGradGuard g;
    for (auto& b : p->biases) b.uniform_(-0.5, 0.5);  // nonzero biases
  }
  auto actions = torch::randint(eos ? 0 : 1, 9, {5, 9}, torch::kInt64);
  auto weights = torch::randn({5, 9, 9});
  weights.select(2, 0).zero_();  // the masked EOS logit is constant
  auto run = [&](bool fused) {
    for (auto& q : p->parameters()) q.mutable_grad() = torch::Tensor();
    PolicyForward f = fused ? p->forward(actions, true) : p->forward_reference(actions, true);
    auto live = f.logits.narrow(2, eos ? 0 : 1, eos ? 9 : 8);
    (live * weights.narrow(2, eos ? 0 : 1, eos ? 9 : 8)).sum().backward();
    std::vector<torch::Tensor> out{f.logits.detach().clone(), f.embedded.grad().clone()};
    for (const auto& q : p->blob_parameters()) out.push_back(q.grad().clone());
    return out;
  };
  const auto ref = run(false);
  const auto fused = run(true);
  ASSERT_EQ(ref.size(), fused.size());
  for (std::size_t k = 0; k < ref.size(); ++k) {
    EXPECT_TRUE(torch::allclose(fused[k], ref[k], /*rtol=*/1e-4, /*atol=*/1e-5))
        << "tensor " << k << " max diff " << (fused[k] - ref[k]).abs().max().item<float>();
  }
}

TEST(Policy, FusedLstmMatchesAutogradCpuLoops) { check_fused_matches_reference(true, false); }
TEST(Policy, FusedLstmMatchesAutogradTensorOps) { check_fused_matches_reference(false, true); }

}  // namespace
}  // namespace ringrl::learner
