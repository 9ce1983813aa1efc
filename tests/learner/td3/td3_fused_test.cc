// The fused CPU update (learner/td3/td3_fused.h) against the autograd path (td3.h): from the
// same weights and batches, every network, target and loss agrees to float rounding over
// many updates (with ZERO_OBS masking, both actor-step phases and a batch-size change);
// checkpoints move between the two kernels; act() over several chunks equals the module.
// td3_test.cc checks the default kernel (fused on the CPU) against hand-computed values.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/byte_codec.h"
#include "common/errors.h"
#include "learner/td3/td3.h"

namespace ringrl::td3 {
namespace {

Td3Options options(Td3Kernel kernel, int masked) {
  Td3Options o;
  o.shape.input_dim = 9;
  o.shape.action_dim = 3;
  o.shape.action_low = {-2.0f, -0.5f, 0.0f};
  o.shape.action_high = {2.0f, 0.5f, 4.0f};
  o.shape.hidden1 = 40;
  o.shape.hidden2 = 24;
  o.shape.masked_inputs = masked;
  o.seed = 5;
  o.kernel = kernel;
  // Larger rates than the paper's so that many weights move visibly within a few updates.
  o.actor_lr = 3e-3;
  o.critic_lr = 1e-2;
  o.tau = 0.05;
  return o;
}

Td3Batch batch(int rows, int seed) {
  torch::manual_seed(seed);
  return {torch::randn({rows, 9}) * 2, torch::rand({rows, 3}) * 2 - 1, torch::randn({rows}) * 3,
          torch::randn({rows, 9}) * 2};
}

std::vector<torch::Tensor> all_tensors(Td3Agent& a) {
  std::vector<torch::Tensor> out;
  for (torch::nn::Module* m :
       {static_cast<torch::nn::Module*>(a.actor().get()), static_cast<torch::nn::Module*>(a.critic1().get()),
        static_cast<torch::nn::Module*>(a.critic2().get()), static_cast<torch::nn::Module*>(a.actor_target().get()),
        static_cast<torch::nn::Module*>(a.critic1_target().get()),
        static_cast<torch::nn::Module*>(a.critic2_target().get())})
    for (const auto& p : m->parameters()) out.push_back(p.detach().clone());
  return out;
}

// Largest |a - b| / (1e-3 + |b|) over every tensor of both agents.
double max_rel_diff(Td3Agent& a, Td3Agent& b) {
  const auto ta = all_tensors(a), tb = all_tensors(b);
  double worst = 0.0;
  for (std::size_t i = 0; i < ta.size(); ++i)
    worst = std::max(worst, ((ta[i] - tb[i]).abs() / (tb[i].abs() + 1e-3)).max().item<double>());
  return worst;
}

void expect_kernels_agree(int masked) {
  Td3Agent eager(options(Td3Kernel::kEager, masked), torch::kCPU);
  Td3Agent fused(options(Td3Kernel::kFused, masked), torch::kCPU);
  ASSERT_EQ(eager.kernel(), Td3Kernel::kEager);
  ASSERT_EQ(fused.kernel(), Td3Kernel::kFused);
  ASSERT_EQ(max_rel_diff(eager, fused), 0.0) << "same seed, same initial weights";
  const auto start = all_tensors(fused);
  for (int u = 0; u < 12; ++u) {
    const int rows = u < 8 ? 100 : 37;  // the workspaces follow a new batch size
    const Td3Batch b = batch(rows, 100 + u);
    const auto eps = torch::randn({rows, 3});
    const Td3Stats se = eager.update(b, eps);
    const Td3Stats sf = fused.update(b, eps);
    ASSERT_EQ(se.actor_step, sf.actor_step) << u;
    EXPECT_NEAR(sf.critic_loss.item<double>(), se.critic_loss.item<double>(),
                1e-5 * (1 + std::fabs(se.critic_loss.item<double>())))
        << u;
    if (se.actor_step) {
      EXPECT_NEAR(sf.actor_loss.item<double>(), se.actor_loss.item<double>(),
                  1e-5 * (1 + std::fabs(se.actor_loss.item<double>())))
          << u;
    }
    EXPECT_LT(max_rel_diff(eager, fused), 2e-3) << "after update " << u;
  }
  // The comparison means something: the weights moved well beyond the tolerance.
  const auto end = all_tensors(fused);
  double moved = 0.0;
  for (std::size_t i = 0; i < end.size(); ++i) moved = std::max(moved, (end[i] - start[i]).abs().max().item<double>());
  EXPECT_GT(moved, 1e-2);
  if (masked > 0) {
    // ZERO_OBS: the masked input columns of the first layers never receive a gradient, so
    // Adam leaves them at their initial values in both kernels.
    EXPECT_TRUE(torch::equal(fused.actor()->fc1->weight.narrow(1, 0, masked), start[0].narrow(1, 0, masked)));
  }
}

TEST(Td3Fused, AgreesWithAutogradOverManyUpdates) { expect_kernels_agree(0); }
TEST(Td3Fused, AgreesWithAutogradWithMaskedInputs) { expect_kernels_agree(2); }

TEST(Td3Fused, CheckpointsMoveBetweenKernels) {
  for (const bool fused_first : {true, false}) {
    Td3Agent a(options(fused_first ? Td3Kernel::kFused : Td3Kernel::kEager, 2), torch::kCPU);
    for (int u = 0; u < 3; ++u) a.update(batch(50, u));
    std::string bytes;
    StringSink sink(&bytes);
    ByteWriter w(sink);
    a.save(w);
    Td3Agent b(options(fused_first ? Td3Kernel::kEager : Td3Kernel::kFused, 2), torch::kCPU);
    MemorySource src(bytes);
    ByteReader r(src, "td3 checkpoint");
    b.load(r);
    EXPECT_EQ(src.remaining(), 0u);
    EXPECT_EQ(b.counter(), 3);
    EXPECT_EQ(max_rel_diff(a, b), 0.0);
    // Both continue alike: Adam's moments and step count came across.
    for (int u = 3; u < 6; ++u) {
      const Td3Batch bt = batch(50, u);
      const auto eps = torch::randn({50, 3});
      a.update(bt, eps);
      b.update(bt, eps);
    }
    EXPECT_LT(max_rel_diff(a, b), 2e-3) << (fused_first ? "fused -> eager" : "eager -> fused");
  }
}

TEST(Td3Fused, ActOverSeveralChunksEqualsTheModule) {
  Td3Agent fused(options(Td3Kernel::kFused, 2), torch::kCPU);
  for (int u = 0; u < 2; ++u) fused.update(batch(100, u));
  torch::manual_seed(8);
  const auto x = torch::randn({1000, 9}) * 3;  // 1000 rows: several chunks and a partial one
  torch::NoGradGuard no_grad;
  const auto want = fused.actor()->forward(x);
  const auto got = fused.act(x);
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(torch::allclose(got, want, 1e-5, 1e-6)) << (got - want).abs().max().item<double>();
}

TEST(Td3Fused, KernelNamesParseAndAutoIsFusedOnTheCpu) {
  EXPECT_EQ(parse_td3_kernel("auto"), Td3Kernel::kAuto);
  EXPECT_EQ(parse_td3_kernel("eager"), Td3Kernel::kEager);
  EXPECT_EQ(parse_td3_kernel("fused"), Td3Kernel::kFused);
  try {
    parse_td3_kernel("fast");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "td3 kernel 'fast': expected auto, eager or fused");
  }
  Td3Agent a(options(Td3Kernel::kAuto, 0), torch::kCPU);
  EXPECT_EQ(a.kernel(), Td3Kernel::kFused);
}

}  // namespace
}  // namespace ringrl::td3
