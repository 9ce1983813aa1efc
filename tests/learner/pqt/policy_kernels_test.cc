// Tests for learner/pqt/policy_kernels.h: every instruction-set build of the LSTM layer kernels
// gives the baseline build's numbers (the AVX-512 build computes the recurrent products with
// its own register-blocked code, the others through Eigen), over whole and partial row ranges;
// and bench/pqt/kernel_bench.h times each build.
#include "learner/pqt/policy_kernels.h"

#include "bench/pqt/kernel_bench.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace ringrl::learner {
namespace {

std::vector<float> random_floats(std::size_t n, std::mt19937& rng, float scale) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

struct LayerRun {
  std::vector<float> acts, cs, tcs, hs, dg, dbias;
};

// Forward and backward of one layer, rows [begin, end) first and then the rest (two calls, as
// two threads would make them).
LayerRun run_layer(const PolicyKernels& k, const LstmLayerDims& d, int split, const std::vector<float>& pre,
                   const std::vector<float>& kh, const std::vector<float>& bias, const std::vector<float>& dh_out) {
  const std::size_t gates = static_cast<std::size_t>(d.steps) * d.batch * 4 * d.hidden;
  const std::size_t state = static_cast<std::size_t>(d.steps) * d.batch * d.hidden;
  LayerRun r{std::vector<float>(gates), std::vector<float>(state), std::vector<float>(state),
             std::vector<float>(state), std::vector<float>(gates), std::vector<float>(4 * d.hidden, 0.0f)};
  std::vector<float> scratch(
      static_cast<std::size_t>(std::max(lstm_forward_scratch(d.hidden), lstm_backward_scratch(d.batch, d.hidden))));
  for (const auto& [b, e] : {std::pair{0, split}, std::pair{split, d.batch}}) {
    k.forward(d, b, e, pre.data(), kh.data(), bias.data(), 1.0f, r.acts.data(), r.cs.data(), r.tcs.data(), r.hs.data(),
              scratch.data());
  }
  for (const auto& [b, e] : {std::pair{0, split}, std::pair{split, d.batch}}) {
    k.backward(d, b, e, kh.data(), r.acts.data(), r.cs.data(), r.tcs.data(), dh_out.data(), r.dg.data(), r.dbias.data(),
               scratch.data());
  }
  return r;
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  float worst = 0.0f, scale = 1.0f;
  for (std::size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  EXPECT_LE(worst, 1e-5f * scale) << what;
}

TEST(PolicyKernels, EveryInstructionSetGivesTheBaselineNumbers) {
  const std::vector<const PolicyKernels*> builds = available_policy_kernels();
  ASSERT_FALSE(builds.empty());
  EXPECT_EQ(std::string(builds.front()->isa), "generic");
  // h = 35: the spec model (4h = 140 columns, 9 vectors); 20: 5 vectors; 40: 160 columns, wider
  // than the register-blocked products take (the general product).
  for (const int h : {35, 20, 40}) {
    const LstmLayerDims d{6, 13, h};
    std::mt19937 rng(static_cast<unsigned>(h));
    const std::vector<float> pre = random_floats(static_cast<std::size_t>(d.steps) * d.batch * 4 * h, rng, 1.0f);
    const std::vector<float> kh = random_floats(static_cast<std::size_t>(h) * 4 * h, rng, 0.3f);
    const std::vector<float> bias = random_floats(4 * static_cast<std::size_t>(h), rng, 0.5f);
    const std::vector<float> dh = random_floats(static_cast<std::size_t>(d.steps) * d.batch * h, rng, 1.0f);
    const LayerRun want = run_layer(*builds.front(), d, d.batch, pre, kh, bias, dh);
    for (const PolicyKernels* k : builds) {
      for (const int split : {d.batch, 5}) {
        const std::string tag = std::string(k->isa) + " h " + std::to_string(h) + " split " + std::to_string(split);
        const LayerRun got = run_layer(*k, d, split, pre, kh, bias, dh);
        expect_near_all(got.acts, want.acts, tag + ": gates");
        expect_near_all(got.cs, want.cs, tag + ": c");
        expect_near_all(got.hs, want.hs, tag + ": h");
        expect_near_all(got.dg, want.dg, tag + ": dL/dpre");
        expect_near_all(got.dbias, want.dbias, tag + ": dL/dbias");
      }
    }
  }
}

TEST(PolicyKernelBench, TimesEveryInstructionSetAndMarksTheChosenOne) {
  PolicyShape shape;
  shape.lstm_sizes = {35, 20};
  const std::vector<PolicyKernelTiming> t = bench_policy_kernels(shape, 9, 7, 0.05, 2);
  const std::vector<const PolicyKernels*> builds = available_policy_kernels();
  ASSERT_EQ(t.size(), builds.size());
  int chosen = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(t[i].isa, builds[i]->isa);
    EXPECT_GT(t[i].ms_per_update, 0.0) << t[i].isa;
    EXPECT_TRUE(std::isfinite(t[i].ms_per_update)) << t[i].isa;
    if (t[i].chosen) {
      ++chosen;
      EXPECT_EQ(t[i].isa, policy_kernels().isa);
    }
  }
  EXPECT_EQ(chosen, 1);
  shape.lstm_sizes.clear();
  EXPECT_THROW(bench_policy_kernels(shape, 9, 7, 0.01), std::exception) << "the shape is checked first";
}

}  // namespace
}  // namespace ringrl::learner
