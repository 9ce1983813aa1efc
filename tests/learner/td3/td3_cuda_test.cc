// TD3 on CUDA against the CPU: the same initial weights (the host stream draws them, whatever
// the device), the same batches and smoothing draws, 12 updates of both actor-step phases, and
// every network, target, loss and Adam step count agrees within the tolerance the CPU kernels
// hold each other to (td3_fused_test.cc).
//
// The CPU side is the production CPU kernel (fused). The CUDA side runs each kernel there:
// eager, and graph with its phases captured as CUDA graphs (after GraphTd3::kGraphWarmup
// direct calls, so 12 updates replay every phase several times), also with the reference's
// zero-gradient actor steps. A checkpoint taken on CUDA resumes on the CPU and goes on alike.
//
// Without a CUDA device (or with a LibTorch built without CUDA) the CUDA cases GTEST_SKIP,
// naming why. One CPU case stays: the comparison must refuse an agent whose critic learning
// rate is 1% off, so it can fail. Labelled `cuda` in ctest: `ctest -L cuda` runs this binary
// (scripts/gpu_check.sh, docs/gpu.md).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/byte_codec.h"
#include "learner/cuda_support.h"
#include "learner/td3/td3.h"
#include "tests/learner/td3/td3_test_util.h"
#include "learner/td3/td3_graph.h"

namespace ringrl::td3 {
namespace {

constexpr int kUpdates = 12;
constexpr int kRows = 100;
constexpr double kRelTol = 2e-3;   // td3_fused_test.cc's tolerance between kernels
constexpr double kMinMoved = 1e-2;  // the updates must move some weight at least this far
constexpr double kPerturbedLr = 1.01;

Td3Options options(Td3Kernel kernel) {
  Td3Options o;
  o.shape.input_dim = 9;
  o.shape.action_dim = 3;
  o.shape.action_low = {-2.0f, -0.5f, 0.0f};
  o.shape.action_high = {2.0f, 0.5f, 4.0f};
  o.shape.hidden1 = 64;
  o.shape.hidden2 = 48;
  o.shape.masked_inputs = 2;
  o.seed = 11;
  o.kernel = kernel;
  o.actor_lr = 3e-3;  // larger than the paper's, so that the weights move within 12 updates
  o.critic_lr = 1e-2;
  o.tau = 0.05;
  return o;
}

std::string no_cuda_reason() {
  if (!learner::built_with_cuda()) return "this LibTorch has no CUDA";
  if (!torch::cuda::is_available()) return learner::describe_cuda_device(0);
  return "";
}

using testing_util::all_tensors;
using testing_util::max_rel_diff;

struct Inputs {
  Td3Batch batch;
  torch::Tensor eps;
};

Inputs inputs(int u) {
  torch::manual_seed(500 + u);
  return {{torch::randn({kRows, 9}) * 2, torch::rand({kRows, 3}) * 2 - 1, torch::randn({kRows}) * 3,
           torch::randn({kRows, 9}) * 2},
          torch::randn({kRows, 3})};
}

Td3Batch on(const Td3Batch& b, torch::Device d) { return {b.x.to(d), b.a.to(d), b.r.to(d), b.x_next.to(d)}; }

// Updates `a` (on its device) and `ref` (CPU) alike from update `from` to `to`; the worst
// relative difference seen after any update, and the losses compared on the way.
double run_alike(Td3Agent& a, Td3Agent& ref, int from, int to) {
  double worst = 0.0;
  for (int u = from; u < to; ++u) {
    const Inputs in = inputs(u);
    const Td3Stats sa = a.update(on(in.batch, a.device()), in.eps.to(a.device()));
    const Td3Stats sr = ref.update(in.batch, in.eps);
    EXPECT_EQ(sa.actor_step, sr.actor_step) << u;
    const double ca = sa.critic_loss.item<double>(), cr = sr.critic_loss.item<double>();
    EXPECT_NEAR(ca, cr, 1e-4 * (1 + std::fabs(cr))) << "critic loss, update " << u;
    if (sa.actor_step) {
      const double aa = sa.actor_loss.item<double>(), ar = sr.actor_loss.item<double>();
      EXPECT_NEAR(aa, ar, 1e-4 * (1 + std::fabs(ar))) << "actor loss, update " << u;
    }
    worst = std::max(worst, max_rel_diff(a, ref));
  }
  return worst;
}

void expect_agrees_with_cpu(Td3Options device_options, torch::Device device, bool expect_graphs) {
  Td3Options cpu_options = device_options;
  cpu_options.kernel = Td3Kernel::kFused;
  cpu_options.cuda_graphs = CudaGraphs::kOff;
  Td3Agent a(device_options, device);
  Td3Agent ref(cpu_options, torch::kCPU);
  ASSERT_EQ(a.captures_cuda_graphs(), expect_graphs);
  ASSERT_EQ(max_rel_diff(a, ref), 0.0) << "same seed, same initial weights on both devices";
  const auto start = all_tensors(ref);
  const double worst = run_alike(a, ref, 0, kUpdates);
  std::printf("td3 %s on %s (graphs %s) - cpu fused: worst relative difference %.3g\n", td3_kernel_name(a.kernel()),
              device.str().c_str(), expect_graphs ? "on" : "off", worst);
  EXPECT_LT(worst, kRelTol);
  EXPECT_EQ(a.actor_adam().steps, ref.actor_adam().steps);
  EXPECT_EQ(a.critic_adam().steps, ref.critic_adam().steps);
  const auto end = all_tensors(ref);
  double moved = 0.0;
  for (std::size_t i = 0; i < end.size(); ++i) moved = std::max(moved, (end[i] - start[i]).abs().max().item<double>());
  EXPECT_GT(moved, kMinMoved);
}

TEST(Td3Cuda, GraphKernelWithCapturedPhasesAgreesWithTheCpu) {
  if (const std::string why = no_cuda_reason(); !why.empty()) GTEST_SKIP() << why;
  Td3Options o = options(Td3Kernel::kGraph);
  o.cuda_graphs = CudaGraphs::kOn;
  static_assert(kUpdates / 2 > GraphTd3::kGraphWarmup, "the actor phase must be replayed too");
  expect_agrees_with_cpu(o, torch::Device(torch::kCUDA, 0), /*expect_graphs=*/true);
}

TEST(Td3Cuda, GraphKernelWithZeroGradientStepsAgreesWithTheCpu) {
  if (const std::string why = no_cuda_reason(); !why.empty()) GTEST_SKIP() << why;
  Td3Options o = options(Td3Kernel::kAuto);  // auto on CUDA: the graph kernel, captured
  o.actor_zero_grad_steps = true;
  expect_agrees_with_cpu(o, torch::Device(torch::kCUDA, 0), /*expect_graphs=*/true);
}

TEST(Td3Cuda, EagerKernelAgreesWithTheCpu) {
  if (const std::string why = no_cuda_reason(); !why.empty()) GTEST_SKIP() << why;
  Td3Options o = options(Td3Kernel::kAuto);
  o.cuda_graphs = CudaGraphs::kOff;  // auto without graphs: the eager kernel
  expect_agrees_with_cpu(o, torch::Device(torch::kCUDA, 0), /*expect_graphs=*/false);
}

TEST(Td3Cuda, CheckpointFromCudaGraphsResumesOnTheCpu) {
  if (const std::string why = no_cuda_reason(); !why.empty()) GTEST_SKIP() << why;
  Td3Agent a(options(Td3Kernel::kGraph), torch::Device(torch::kCUDA, 0));
  Td3Agent ref(options(Td3Kernel::kFused), torch::kCPU);
  run_alike(a, ref, 0, 8);
  std::string bytes;
  StringSink sink(&bytes);
  ByteWriter w(sink);
  a.save(w);
  Td3Agent b(options(Td3Kernel::kFused), torch::kCPU);
  MemorySource src(bytes);
  ByteReader r(src, "td3 checkpoint");
  b.load(r);
  EXPECT_EQ(b.counter(), 8);
  EXPECT_LT(run_alike(b, ref, 8, kUpdates), kRelTol);
}

TEST(Td3Cuda, TheComparisonRefusesAOnePercentLearningRateError) {
  Td3Options o = options(Td3Kernel::kGraph);
  o.critic_lr *= kPerturbedLr;
  Td3Agent a(o, torch::kCPU);
  Td3Agent ref(options(Td3Kernel::kFused), torch::kCPU);
  double worst = 0.0;
  for (int u = 0; u < kUpdates; ++u) {
    const Inputs in = inputs(u);
    a.update(in.batch, in.eps);
    ref.update(in.batch, in.eps);
    worst = std::max(worst, max_rel_diff(a, ref));
  }
  EXPECT_GT(worst, kRelTol);
}

}  // namespace
}  // namespace ringrl::td3
