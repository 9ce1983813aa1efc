// The fused CPU update (learner/td3/td3_fused.h) and the graph kernel's fixed sequence
// (learner/td3/td3_graph.h, run uncaptured on the CPU) against the autograd path (td3.h):
// from the same weights and batches, every network, target and loss agrees to float rounding
// over many updates (with ZERO_OBS masking, both actor-step phases, zero-gradient actor steps
// and a batch-size change); checkpoints move between the kernels; act() over several chunks
// equals the module; one and two learner threads give the same bits (the task cut does not
// depend on the count); cuda_graphs=on is refused where nothing would be captured; the
// bfloat16 products (learner_precision bf16) follow float32 closely, are as independent of
// the thread count, and follow a loaded checkpoint.
// td3_test.cc checks the default kernel (fused on the CPU) against hand-computed values.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/byte_codec.h"
#include "common/errors.h"
#include "learner/td3/td3.h"
#include "tests/learner/td3/td3_test_util.h"
#include "learner/td3/td3_fused.h"

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

using testing_util::all_tensors;
using testing_util::max_rel_diff;

// The eager kernel against `kernel` (fused or graph) over 12 updates.
void expect_kernels_agree(Td3Kernel kernel, int masked, bool zero_grad_steps = false) {
  Td3Options oe = options(Td3Kernel::kEager, masked);
  oe.actor_zero_grad_steps = zero_grad_steps;
  Td3Options of = oe;
  of.kernel = kernel;
  Td3Agent eager(oe, torch::kCPU);
  Td3Agent fused(of, torch::kCPU);
  ASSERT_EQ(eager.kernel(), Td3Kernel::kEager);
  ASSERT_EQ(fused.kernel(), kernel);
  ASSERT_FALSE(fused.captures_cuda_graphs()) << "nothing is captured on the CPU";
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
  EXPECT_EQ(fused.actor_adam().steps, eager.actor_adam().steps);
  EXPECT_EQ(fused.critic_adam().steps, eager.critic_adam().steps);
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

TEST(Td3Fused, AgreesWithAutogradOverManyUpdates) { expect_kernels_agree(Td3Kernel::kFused, 0); }
TEST(Td3Fused, AgreesWithAutogradWithMaskedInputs) { expect_kernels_agree(Td3Kernel::kFused, 2); }
TEST(Td3Graph, AgreesWithAutogradOverManyUpdates) { expect_kernels_agree(Td3Kernel::kGraph, 0); }
TEST(Td3Graph, AgreesWithAutogradWithMaskedInputs) { expect_kernels_agree(Td3Kernel::kGraph, 2); }
TEST(Td3Graph, AgreesWithAutogradWithZeroGradientSteps) {
  expect_kernels_agree(Td3Kernel::kGraph, 2, /*zero_grad_steps=*/true);
}

TEST(Td3Graph, AdamFormsFollowTheirOwnEpsilon) {
  // One step on gradients near eps (inputs and rewards scaled down), where the two forms of
  // td3.h differ by a large factor: the graph kernel's device Adam must move each critic
  // weight as the eager kernel does, in each form.
  constexpr double kScale = 1e-4;
  for (const AdamForm form : {AdamForm::kTensorFlow, AdamForm::kPyTorch}) {
    Td3Options oe = options(Td3Kernel::kEager, 0);
    oe.adam_form = form;
    Td3Options og = oe;
    og.kernel = Td3Kernel::kGraph;
    Td3Agent eager(oe, torch::kCPU), graph(og, torch::kCPU);
    const auto start = all_tensors(eager);
    Td3Batch b = batch(20, 7);
    b = {b.x * kScale, b.a * kScale, b.r * kScale, b.x_next * kScale};
    const auto eps = torch::randn({20, 3});
    eager.update(b, eps);
    graph.update(b, eps);
    const auto te = all_tensors(eager), tg = all_tensors(graph);
    double largest = 0.0, worst = 0.0;
    for (std::size_t i = 0; i < te.size(); ++i) {
      largest = std::max(largest, (te[i] - start[i]).abs().max().item<double>());
      worst = std::max(worst, ((te[i] - start[i]) - (tg[i] - start[i])).abs().max().item<double>());
    }
    EXPECT_GT(largest, 0.0);
    EXPECT_LT(worst, 1e-3 * largest) << (form == AdamForm::kTensorFlow ? "tf" : "torch");
  }
}

TEST(Td3Fused, CheckpointsMoveBetweenKernels) {
  const std::pair<Td3Kernel, Td3Kernel> pairs[] = {{Td3Kernel::kFused, Td3Kernel::kEager},
                                                   {Td3Kernel::kEager, Td3Kernel::kFused},
                                                   {Td3Kernel::kGraph, Td3Kernel::kFused},
                                                   {Td3Kernel::kEager, Td3Kernel::kGraph}};
  for (const auto& [first, second] : pairs) {
    Td3Agent a(options(first, 2), torch::kCPU);
    for (int u = 0; u < 3; ++u) a.update(batch(50, u));
    std::string bytes;
    StringSink sink(&bytes);
    ByteWriter w(sink);
    a.save(w);
    Td3Agent b(options(second, 2), torch::kCPU);
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
    EXPECT_LT(max_rel_diff(a, b), 2e-3) << td3_kernel_name(first) << " -> " << td3_kernel_name(second);
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

// Rows given as sums of two tables' rows, as HIRO's relabel pass gives them: the fused kernel
// runs the first layer per table; the module and the eager agent get the rows formed.
TEST(Td3Fused, ActOnSumsEqualsTheModuleOnTheFormedRows) {
  for (const Td3Kernel kernel : {Td3Kernel::kFused, Td3Kernel::kEager}) {
    Td3Agent agent(options(kernel, /*masked=*/2), torch::kCPU);
    for (int u = 0; u < 2; ++u) agent.update(batch(100, u));
    torch::manual_seed(10);
    const auto a = torch::randn({120, 9}) * 3;
    const auto b = torch::randn({70, 9}) * 3;
    const auto ia = torch::randint(0, 120, {1000}, torch::kLong);  // several chunks and a partial one
    const auto ib = torch::randint(0, 70, {1000}, torch::kLong);
    torch::NoGradGuard no_grad;
    const auto want = agent.actor()->forward(a.index_select(0, ia) + b.index_select(0, ib));
    const auto got = agent.act_on_sums(a, b, ia, ib);
    ASSERT_EQ(got.sizes(), want.sizes());
    EXPECT_TRUE(torch::allclose(got, want, 1e-5, 1e-5)) << td3_kernel_name(kernel) << ": "
                                                         << (got - want).abs().max().item<double>();
  }
}

TEST(Td3Fused, ActOnSumsRefusesAnIndexOutOfRange) {
  Td3Agent agent(options(Td3Kernel::kFused, 2), torch::kCPU);
  const auto a = torch::randn({4, 9}), b = torch::randn({3, 9});
  EXPECT_THROW(agent.act_on_sums(a, b, torch::tensor({0, 4}, torch::kLong), torch::tensor({0, 1}, torch::kLong)),
               UsageError);
  EXPECT_THROW(agent.act_on_sums(a, b, torch::tensor({0, 1}, torch::kLong), torch::tensor({-1, 1}, torch::kLong)),
               UsageError);
}

// Every tensor of both agents (networks, targets, then both Adam states) bit for bit.
bool same_bits(Td3Agent& a, Td3Agent& b) {
  const auto ta = all_tensors(a), tb = all_tensors(b);
  for (std::size_t i = 0; i < ta.size(); ++i)
    if (!torch::equal(ta[i], tb[i])) return false;
  const std::pair<AdamSnapshot, AdamSnapshot> adams[] = {{a.actor_adam(), b.actor_adam()},
                                                         {a.critic_adam(), b.critic_adam()}};
  for (const auto& [x, y] : adams) {
    if (x.steps != y.steps) return false;
    for (std::size_t k = 0; k < x.m.size(); ++k)
      if (!torch::equal(x.m[k], y.m[k]) || !torch::equal(x.v[k], y.v[k])) return false;
  }
  return true;
}

// 12 updates at 1 and at 2 threads from the same weights, on paper-sized hidden layers (two
// unit blocks) and batches of 1, 2 and 4 row blocks: the same bits after every update, the
// same losses, and act() over several chunks the same.
void expect_threads_agree(bool zero_grad_steps, Td3Precision precision = Td3Precision::kFloat32) {
  ASSERT_EQ(FusedTd3::row_blocks(100), 2);
  ASSERT_EQ(FusedTd3::row_blocks(200), 4);
  ASSERT_EQ(FusedTd3::row_blocks(37), 1);
  Td3Options o = options(Td3Kernel::kFused, /*masked=*/2);
  o.shape.hidden1 = 300;
  o.shape.hidden2 = 260;
  o.precision = precision;
  ASSERT_EQ(std::min(o.shape.hidden1, o.shape.hidden2) / FusedTd3::kUnitsPerBlock, 2) << "two unit blocks";
  o.actor_zero_grad_steps = zero_grad_steps;
  Td3Agent one(o, torch::kCPU);
  o.threads = 2;
  Td3Agent two(o, torch::kCPU);
  ASSERT_EQ(one.arena().threads(), 1);
  ASSERT_EQ(two.arena().threads(), 2);
  const auto start = all_tensors(one);
  for (int u = 0; u < 12; ++u) {
    const int rows = u < 6 ? 100 : u < 9 ? 200 : 37;
    const Td3Batch b = batch(rows, 300 + u);
    const auto eps = torch::randn({rows, 3});
    const Td3Stats s1 = one.update(b, eps);
    const Td3Stats s2 = two.update(b, eps);
    ASSERT_EQ(s1.actor_step, s2.actor_step);
    EXPECT_EQ(s1.critic_loss.item<float>(), s2.critic_loss.item<float>()) << u;
    if (s1.actor_step) {
      EXPECT_EQ(s1.actor_loss.item<float>(), s2.actor_loss.item<float>()) << u;
    }
    ASSERT_TRUE(same_bits(one, two)) << "after update " << u;
  }
  // The comparison means something: the weights moved.
  const auto end = all_tensors(two);
  double moved = 0.0;
  for (std::size_t i = 0; i < end.size(); ++i) moved = std::max(moved, (end[i] - start[i]).abs().max().item<double>());
  EXPECT_GT(moved, 1e-2);
  torch::manual_seed(9);
  const auto x = torch::randn({1000, 9}) * 3;
  EXPECT_TRUE(torch::equal(one.act(x), two.act(x)));
  const auto y = torch::randn({300, 9});
  const auto ia = torch::randint(0, 1000, {1000}, torch::kLong), ib = torch::randint(0, 300, {1000}, torch::kLong);
  EXPECT_TRUE(torch::equal(one.act_on_sums(x, y, ia, ib), two.act_on_sums(x, y, ia, ib)));
}

TEST(Td3Fused, OneAndTwoThreadsGiveTheSameBits) { expect_threads_agree(false); }
TEST(Td3Fused, OneAndTwoThreadsGiveTheSameBitsWithZeroGradientSteps) { expect_threads_agree(true); }

TEST(Td3Fused, OneAndTwoThreadsGiveTheSameBitsInBfloat16) {
  expect_threads_agree(true, Td3Precision::kBfloat16);
}

// Paper-sized hidden layers, so that the hidden-to-hidden products run in bfloat16.
Td3Options wide(Td3Precision precision) {
  Td3Options o = options(Td3Kernel::kFused, /*masked=*/2);
  o.shape.hidden1 = 300;
  o.shape.hidden2 = 300;
  o.precision = precision;
  return o;
}

// learner_precision bf16 (td3.h): from the same weights, the bfloat16 products give the
// float32 kernel's actions and losses to bfloat16 rounding, yet not bit for bit (they did run
// in bfloat16); over updates on the same batches (at this test's large learning rates) the
// two sets of weights part by far less than they move.
TEST(Td3FusedBf16, FollowsFloat32CloselyButNotBitForBit) {
  Td3Agent fp32(wide(Td3Precision::kFloat32), torch::kCPU);
  Td3Agent bf16(wide(Td3Precision::kBfloat16), torch::kCPU);
  ASSERT_EQ(max_rel_diff(fp32, bf16), 0.0) << "same seed, same initial weights";
  torch::manual_seed(11);
  const auto x = torch::randn({600, 9}) * 3;
  const auto a32 = fp32.act(x), a16 = bf16.act(x);
  EXPECT_TRUE(torch::allclose(a16, a32, 0.01, 1e-3)) << (a16 - a32).abs().max().item<double>();
  EXPECT_FALSE(torch::equal(a16, a32)) << "the bfloat16 products did not run";
  const auto start = all_tensors(fp32);
  for (int u = 0; u < 10; ++u) {
    const Td3Batch b = batch(100, 400 + u);
    const auto eps = torch::randn({100, 3});
    const Td3Stats s32 = fp32.update(b, eps);
    const Td3Stats s16 = bf16.update(b, eps);
    if (u == 0) {  // the critic loss from the same weights
      const double l32 = s32.critic_loss.item<double>(), l16 = s16.critic_loss.item<double>();
      EXPECT_NEAR(l16, l32, 0.01 * std::fabs(l32));
      EXPECT_NE(l16, l32);
    }
  }
  const auto t32 = all_tensors(fp32), t16 = all_tensors(bf16);
  double moved = 0.0, parted = 0.0;
  for (std::size_t i = 0; i < t32.size(); ++i) {
    moved += (t32[i] - start[i]).abs().sum().item<double>();
    parted += (t16[i] - t32[i]).abs().sum().item<double>();
  }
  EXPECT_GT(moved, 1.0);
  EXPECT_LT(parted, 0.1 * moved);
}

// The bfloat16 weight copies follow a checkpoint: a loaded agent continues bit for bit as
// the one that wrote it (Td3Agent::load calls weights_changed()).
TEST(Td3FusedBf16, ALoadedCheckpointContinuesBitForBit) {
  Td3Agent a(wide(Td3Precision::kBfloat16), torch::kCPU);
  for (int u = 0; u < 3; ++u) a.update(batch(100, u));
  std::string bytes;
  StringSink sink(&bytes);
  ByteWriter w(sink);
  a.save(w);
  Td3Options other = wide(Td3Precision::kBfloat16);
  other.seed = 99;  // other initial weights, and so other weight copies, until the load
  Td3Agent b(other, torch::kCPU);
  MemorySource src(bytes);
  ByteReader r(src, "td3 checkpoint");
  b.load(r);
  ASSERT_TRUE(same_bits(a, b));
  for (int u = 3; u < 7; ++u) {
    const Td3Batch bt = batch(100, u);
    const auto eps = torch::randn({100, 3});
    a.update(bt, eps);
    b.update(bt, eps);
    ASSERT_TRUE(same_bits(a, b)) << "after update " << u;
  }
}

TEST(Td3FusedBf16, NamesParseAndOnlyTheFusedKernelTakesIt) {
  EXPECT_EQ(parse_td3_precision("fp32"), Td3Precision::kFloat32);
  EXPECT_EQ(parse_td3_precision("bf16"), Td3Precision::kBfloat16);
  try {
    parse_td3_precision("fp16");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "learner precision 'fp16': expected fp32 (the reference) or bf16 (a departure, fused CPU kernel)");
  }
  for (const Td3Kernel k : {Td3Kernel::kEager, Td3Kernel::kGraph}) {
    Td3Options o = wide(Td3Precision::kBfloat16);
    o.kernel = k;
    try {
      Td3Agent a(o, torch::kCPU);
      FAIL() << td3_kernel_name(k);
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), std::string("td3: learner precision bf16 needs the fused CPU kernel, not the ") +
                                           td3_kernel_name(k) + " kernel on cpu");
    }
  }
}

TEST(Td3Fused, KernelNamesParseAndAutoIsFusedOnTheCpu) {
  EXPECT_EQ(parse_td3_kernel("auto"), Td3Kernel::kAuto);
  EXPECT_EQ(parse_td3_kernel("eager"), Td3Kernel::kEager);
  EXPECT_EQ(parse_td3_kernel("fused"), Td3Kernel::kFused);
  EXPECT_EQ(parse_td3_kernel("graph"), Td3Kernel::kGraph);
  try {
    parse_td3_kernel("fast");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "td3 kernel 'fast': expected auto, eager, fused or graph");
  }
  Td3Agent a(options(Td3Kernel::kAuto, 0), torch::kCPU);
  EXPECT_EQ(a.kernel(), Td3Kernel::kFused);
}

TEST(Td3Graph, CudaGraphsOnIsRefusedWhereNothingWouldBeCaptured) {
  EXPECT_EQ(parse_cuda_graphs("auto"), CudaGraphs::kAuto);
  EXPECT_EQ(parse_cuda_graphs("off"), CudaGraphs::kOff);
  EXPECT_THROW(parse_cuda_graphs("yes"), UsageError);
  for (const Td3Kernel k : {Td3Kernel::kAuto, Td3Kernel::kFused, Td3Kernel::kGraph, Td3Kernel::kEager}) {
    Td3Options o = options(k, 0);
    o.cuda_graphs = CudaGraphs::kOn;
    try {
      Td3Agent a(o, torch::kCPU);
      FAIL() << td3_kernel_name(k);
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("cuda_graphs=on needs the graph kernel on a CUDA device"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace ringrl::td3
