// Tests for learner/pqt/losses.h and learner/pqt/rmsprop_tf1.h against hand-computed values.
#include "learner/pqt/losses.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/errors.h"
#include "learner/pqt/rmsprop_tf1.h"

namespace ringrl::learner {
namespace {

constexpr double kM = 64.0;
constexpr float kMasked = -2.4e38f;

torch::Tensor f32(std::vector<float> v, std::vector<int64_t> shape) {
  return torch::tensor(v, torch::kFloat32).view(shape).clone();
}

TEST(Losses, PgWithPerTimestepBaseline) {
  // log pi(a): 2 episodes x 3 steps; the second has length 2.
  auto alp = f32({-1.0f, -2.0f, -0.5f, -0.3f, -1.5f, -9.0f}, {2, 3}).requires_grad_(true);
  auto mask = f32({1, 1, 1, 1, 1, 0}, {2, 3});
  auto rewards = f32({1.0f, 0.5f}, {2});
  auto base = f32({0.2f, 0.4f, 0.6f}, {3});
  auto adv = advantages(rewards, base, mask);
  // A = [[0.8, 0.6, 0.4], [0.3, 0.1, 0]]
  EXPECT_NEAR(adv[0][0].item<float>(), 0.8f, 1e-6);
  EXPECT_NEAR(adv[1][1].item<float>(), 0.1f, 1e-6);
  EXPECT_EQ(adv[1][2].item<float>(), 0.0f);
  // sum_t logp*A: row0 = -0.8 - 1.2 - 0.2 = -2.2, row1 = -0.09 - 0.15 = -0.24;
  // mean = -1.22; L = -64 * -1.22 = 78.08.
  auto loss = pg_loss(alp, adv, mask, kM);
  EXPECT_NEAR(loss.item<double>(), 78.08, 1e-4);
  loss.backward();
  // dL/dlogp_it = -64/2 * A_it.
  EXPECT_NEAR(alp.grad()[0][0].item<float>(), -32 * 0.8f, 1e-4);
  EXPECT_EQ(alp.grad()[1][2].item<float>(), 0.0f);
}

TEST(Losses, PgWeightsMultiplyAdvantages) {
  auto alp = f32({-1.0f, -2.0f}, {1, 2});
  auto mask = f32({1, 1}, {1, 2});
  auto adv = f32({1.0f, 1.0f}, {1, 2});
  auto w = f32({0.5f, 0.25f}, {1, 2});
  // -64 * (-1*0.5 + -2*0.25) = 64
  EXPECT_NEAR(pg_loss(alp, adv, mask, kM, w).item<double>(), 64.0, 1e-4);
}

TEST(Losses, PgIgnoresMaskedEosLogProb) {
  // A masked padding position holding the -2.4e38 EOS log-prob must not give inf/NaN.
  auto alp = f32({-1.0f, kMasked}, {1, 2}).requires_grad_(true);
  auto mask = f32({1, 0}, {1, 2});
  auto adv = f32({2.0f, 2.0f}, {1, 2});
  auto loss = pg_loss(alp, adv, mask, kM);
  EXPECT_NEAR(loss.item<double>(), 128.0, 1e-4);
  loss.backward();
  EXPECT_TRUE(torch::isfinite(alp.grad()).all().item<bool>());
}

TEST(Losses, EntropyTimesMagic) {
  // p1 = (0.5, 0.25, 0.25): H = 1.5 ln 2. p2 = (1, 0, 0) with 0s as the masked logit: H = 0.
  const float l2 = std::log(0.5f), l4 = std::log(0.25f);
  auto lp = f32({l2, l4, l4, 0.0f, kMasked, kMasked,  // episode 0: p1, p2
                 l2, l4, l4, l2, l4, l4},             // episode 1: p1, (masked step)
                {2, 2, 3})
                .requires_grad_(true);
  auto mask = f32({1, 1, 1, 0}, {2, 2});
  auto h = entropy(lp, mask, kM);
  // mean over episodes of (H1 + 0, H1) = H1; times 64.
  EXPECT_NEAR(h.item<double>(), 64.0 * 1.5 * std::log(2.0), 1e-4);
  // A large coefficient next to the -2.4e38 entries keeps the gradient finite.
  (1e6 * h).backward();
  EXPECT_TRUE(torch::isfinite(lp.grad()).all().item<bool>());
}

TEST(Losses, TopKIsMeanOfSequenceCrossEntropies) {
  auto alp = f32({-1.0f, -2.0f, -3.0f, -0.5f, -7.0f, -7.0f}, {2, 3});
  auto mask = f32({1, 1, 1, 1, 0, 0}, {2, 3});
  // (6 + 0.5) / 2 = 3.25: a mean over the programs, no x64.
  EXPECT_NEAR(topk_loss(alp, mask).item<double>(), 3.25, 1e-6);
}

TEST(Losses, ActionLogProbsGather) {
  auto lp = f32({-1, -2, -3, -4, -5, -6}, {1, 2, 3});
  auto a = torch::tensor({2, 0}, torch::kInt64).view({1, 2});
  auto out = action_log_probs(lp, a);
  EXPECT_EQ(out[0][0].item<float>(), -3.0f);
  EXPECT_EQ(out[0][1].item<float>(), -4.0f);
}

TEST(Losses, EmaBaselineSequentialPerTimestep) {
  std::vector<double> b = {0.0, 0.0, 0.0};
  // Episode 0: R=1, len 3; episode 1: R=0.5, len 1; decay 0.9.
  update_ema_baselines(&b, {1.0f, 0.5f}, {3, 1}, 0.9);
  // t=0: 0.1 then 0.9*0.1 + 0.1*0.5 = 0.14; t=1,2: 0.1.
  EXPECT_NEAR(b[0], 0.14, 1e-12);
  EXPECT_NEAR(b[1], 0.1, 1e-12);
  EXPECT_NEAR(b[2], 0.1, 1e-12);
  EXPECT_THROW(update_ema_baselines(&b, {1.0f}, {4}, 0.9), UsageError);
}

TEST(Losses, ReplayImportanceWeights) {
  // a = 0.5; episode 0 off the buffer (q = 0): w = 1/0.5 = 2; episode 1 q/p = 3: 1/(0.5+1.5) = 0.5.
  const double inf = std::numeric_limits<double>::infinity();
  auto w = replay_importance_weights({-inf, std::log(3e-40)}, {-10.0, std::log(1e-40)}, 0.5,
                                     /*normalize=*/false);
  EXPECT_NEAR(w[0], 2.0, 1e-12);
  EXPECT_NEAR(w[1], 0.5, 1e-9);
  auto wn = replay_importance_weights({-inf, std::log(3e-40)}, {-10.0, std::log(1e-40)}, 0.5,
                                      /*normalize=*/true);
  EXPECT_NEAR(wn[0] + wn[1], 2.0, 1e-12);
  EXPECT_NEAR(wn[0] / wn[1], 4.0, 1e-9);
}

TEST(RmsPropTf1, FirstStepFromAccumulatorOne) {
  auto w = f32({1.0f, -2.0f}, {2}).requires_grad_(true);
  RmsPropTf1 opt({w}, RmsPropTf1Options{/*lr=*/0.1, /*decay=*/0.99, /*epsilon=*/1e-10,
                                        /*initial_accumulator=*/1.0});
  opt.apply_dense(0, f32({0.5f, -2.0f}, {2}));
  // ms = 1 + 0.01 (0.25 - 1) = 0.9925; w = 1 - 0.1 * 0.5 / sqrt(0.9925) = 0.94981144
  // ms = 1 + 0.01 (4 - 1) = 1.03;      w = -2 + 0.1 * 2 / sqrt(1.03)  = -1.80293414
  EXPECT_NEAR(opt.accumulators()[0][0].item<float>(), 0.9925f, 1e-7);
  EXPECT_NEAR(opt.accumulators()[0][1].item<float>(), 1.03f, 1e-7);
  EXPECT_NEAR(w[0].item<float>(), 0.94981144f, 1e-6);
  EXPECT_NEAR(w[1].item<float>(), -1.80293414f, 1e-6);
}

TEST(RmsPropTf1, SparseRowsTouchOnlyGatheredRows) {
  auto e = torch::ones({3, 2}).requires_grad_(true);
  auto e2 = torch::ones({3, 2}).requires_grad_(true);
  RmsPropTf1 by_index({e}, RmsPropTf1Options{0.1, 0.99, 1e-10, 1.0});
  RmsPropTf1 by_mask({e2}, RmsPropTf1Options{0.1, 0.99, 1e-10, 1.0});
  // Row 1 was not gathered (its gradient is 0 and must not decay its accumulator).
  auto g = f32({0.5f, 0.5f, 0.0f, 0.0f, 0.5f, 0.0f}, {3, 2});
  by_index.apply_rows(0, torch::tensor({0, 2}, torch::kInt64), g);
  by_mask.apply_row_mask(0, f32({1, 0, 1}, {3}), g);
  for (auto* opt : {&by_index, &by_mask}) {
    const auto& ms = opt->accumulators()[0];
    const auto& p = opt->params()[0];
    EXPECT_NEAR(ms[0][0].item<float>(), 0.9925f, 1e-7);
    EXPECT_EQ(ms[1][0].item<float>(), 1.0f);           // untouched row
    EXPECT_NEAR(ms[2][1].item<float>(), 0.99f, 1e-7);  // gathered with zero gradient: decays
    EXPECT_EQ(p[1][0].item<float>(), 1.0f);
    EXPECT_NEAR(p[0][0].item<float>(), 0.94981144f, 1e-6);
    EXPECT_EQ(p[2][1].item<float>(), 1.0f);
  }
}

}  // namespace
}  // namespace ringrl::learner
