// HIRO's learner pieces (spec hiro.md §4, §6, §9): the §4 dimension table for every
// configuration, x,y masking, the recomputed intrinsic reward, relabelling (candidate order,
// clipping, ties, recovery of the generating goal, fun, none), the three random streams, the
// column wiring of both levels' batches into their updates (relabelled with the online low
// actor, gamma per meta transition), records into the replays, and bit-identical updates
// after save/load.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/errors.h"
#include "common/hiro/transition_record.h"
#include "envs/maze/factory.h"
#include "learner/hiro/hiro_learner.h"
#include "learner/hiro/hiro_ops.h"
#include "learner/td3/fifo_replay.h"
#include "learner/td3/td3.h"
#include "tests/learner/td3/td3_test_util.h"

namespace ringrl::hiro {
namespace {

using hiro::GoalSpaceKind;
using td3::Actor;
using td3::Critic;
using td3::FifoReplay;
using td3::Td3Agent;
using td3::Td3Batch;
using td3::Td3Shape;
using td3::Td3Stats;

HiroOptions small(HiroOptions o) {
  o.replay_capacity = 1000;
  o.device = "cpu";
  return o;
}

// ---------------------------------------------------------------- §4 dimension table

struct DimsRow {
  const char* env;
  GoalSpaceKind kind;
  int low_in, low_out, low_c1, low_c2, high_in, high_out, high_c1, high_c2;
};

TEST(HiroDims, MatchTheSpecTableForEveryConfiguration) {
  const DimsRow rows[] = {
      {"ant-maze", GoalSpaceKind::kOrig, 45, 8, 53, 308, 32, 15, 47, 315},
      {"ant-push", GoalSpaceKind::kOrig, 45, 8, 53, 308, 32, 15, 47, 315},
      {"ant-fall", GoalSpaceKind::kOrig, 45, 8, 53, 308, 33, 15, 48, 315},
      {"ant-maze", GoalSpaceKind::kXy, 32, 8, 40, 308, 32, 2, 34, 302},
      {"ant-push", GoalSpaceKind::kXy, 32, 8, 40, 308, 32, 2, 34, 302},
      {"ant-fall", GoalSpaceKind::kXy, 32, 8, 40, 308, 33, 2, 35, 302},
      {"point-maze", GoalSpaceKind::kXy, 9, 2, 11, 302, 9, 2, 11, 302},
      {"kinematic-maze", GoalSpaceKind::kOrig, 45, 8, 53, 308, 32, 15, 47, 315},
      {"kinematic-push", GoalSpaceKind::kOrig, 45, 8, 53, 308, 32, 15, 47, 315},
      {"kinematic-fall", GoalSpaceKind::kOrig, 45, 8, 53, 308, 33, 15, 48, 315},
      {"kinematic-maze", GoalSpaceKind::kXy, 32, 8, 40, 308, 32, 2, 34, 302},
      {"kinematic-fall", GoalSpaceKind::kXy, 32, 8, 40, 308, 33, 2, 35, 302},
  };
  for (const DimsRow& r : rows) {
    SCOPED_TRACE(std::string(r.env) + " " + hiro::goal_space_name(r.kind));
    HiroLearner learner(small(make_hiro_options(r.env, r.kind)));
    Td3Agent& lo = learner.low_agent();
    Td3Agent& hi = learner.high_agent();
    EXPECT_EQ(lo.actor()->fc1->weight.size(1), r.low_in);
    EXPECT_EQ(lo.actor()->out->weight.size(0), r.low_out);
    EXPECT_EQ(hi.actor()->fc1->weight.size(1), r.high_in);
    EXPECT_EQ(hi.actor()->out->weight.size(0), r.high_out);
    for (Critic* c : {&lo.critic1(), &lo.critic2(), &lo.critic1_target(), &lo.critic2_target()}) {
      EXPECT_EQ((*c)->fc1->weight.size(1), r.low_c1);
      EXPECT_EQ((*c)->fc2->weight.size(1), r.low_c2);
      EXPECT_EQ((*c)->fc1->weight.size(0), 300);
      EXPECT_EQ((*c)->out->weight.size(0), 1);
    }
    for (Critic* c : {&hi.critic1(), &hi.critic2()}) {
      EXPECT_EQ((*c)->fc1->weight.size(1), r.high_c1);
      EXPECT_EQ((*c)->fc2->weight.size(1), r.high_c2);
    }
    // ZERO_OBS: the low level masks x,y under hiro_orig only; the high level never.
    const int masked = r.kind == GoalSpaceKind::kOrig ? 2 : 0;
    EXPECT_EQ(lo.options().shape.masked_inputs, masked);
    EXPECT_EQ(hi.options().shape.masked_inputs, 0);
    EXPECT_EQ(lo.actor()->mask.sum().item<int>(), r.low_in - masked);
    EXPECT_EQ(lo.critic1()->mask.sum().item<int>(), r.low_in - masked);
    EXPECT_EQ(hi.actor()->mask.sum().item<int>(), r.high_in);
    // Boxes: env torques / the goal box.
    EXPECT_EQ(lo.options().shape.action_high, learner.options().action_high);
    EXPECT_EQ(hi.options().shape.action_high, learner.options().goal_space.high);
  }
  EXPECT_THROW(make_hiro_options("point-maze", GoalSpaceKind::kOrig), UsageError);
}

TEST(HiroDims, OrigGoalBoxAndActionBoxes) {
  const HiroOptions o = make_hiro_options("ant-maze", GoalSpaceKind::kOrig);
  const std::vector<float> high = {10, 10, 0.5f, 1, 1, 1, 1, 0.5f, 0.3f, 0.5f, 0.3f, 0.5f, 0.3f, 0.5f, 0.3f};
  EXPECT_EQ(o.goal_space.high, high);
  EXPECT_EQ(o.action_high, std::vector<float>(8, 30.0f));
  EXPECT_EQ(o.context_dim, 2);
  const HiroOptions p = make_hiro_options("point-maze", GoalSpaceKind::kXy);
  EXPECT_EQ(p.goal_space.high, std::vector<float>(2, 10.0f));
  EXPECT_EQ(p.action_high, (std::vector<float>{1.0f, 0.25f}));
}

// ---------------------------------------------------------------- masking

TEST(HiroMasking, LowNetsIgnoreXyUnderOrigOnly) {
  torch::manual_seed(1);
  for (GoalSpaceKind kind : {GoalSpaceKind::kOrig, GoalSpaceKind::kXy}) {
    HiroOptions o = small(make_hiro_options("kinematic-maze", kind));
    o.hidden = 32;
    HiroLearner learner(o);
    Td3Agent& lo = learner.low_agent();
    Td3Agent& hi = learner.high_agent();
    const auto x = torch::randn({4, o.dims().low_input()});
    auto x2 = x.clone();
    x2.narrow(1, 0, 2).add_(5.0);
    const auto a = torch::randn({4, o.action_dim()});
    const bool orig = kind == GoalSpaceKind::kOrig;
    torch::NoGradGuard no_grad;
    EXPECT_EQ(torch::equal(lo.actor()->forward(x), lo.actor()->forward(x2)), orig);
    EXPECT_EQ(torch::equal(lo.critic1()->forward(x, a), lo.critic1()->forward(x2, a)), orig);
    EXPECT_EQ(torch::equal(lo.critic2()->forward(x, a), lo.critic2()->forward(x2, a)), orig);
    EXPECT_EQ(torch::equal(lo.critic1_target()->forward(x, a), lo.critic1_target()->forward(x2, a)), orig);
    const auto xh = torch::randn({4, o.dims().high_input()});
    auto xh2 = xh.clone();
    xh2.narrow(1, 0, 2).add_(5.0);
    EXPECT_FALSE(torch::equal(hi.actor()->forward(xh), hi.actor()->forward(xh2)));
  }
}

// ---------------------------------------------------------------- intrinsic reward

TEST(HiroRewards, BatchedIntrinsicRewardMatchesTheScalarForm) {
  torch::manual_seed(2);
  const int k = 15, obs = 30;
  const auto s = torch::randn({6, obs}) * 3;
  const auto g = torch::randn({6, k}) * 2;
  const auto s_next = torch::randn({6, obs}) * 3;
  const auto r = intrinsic_reward(s, g, s_next);
  for (int i = 0; i < 6; ++i) {
    const float want = hiro::intrinsic_reward(s[i].contiguous().data_ptr<float>(), g[i].contiguous().data_ptr<float>(),
                                              s_next[i].contiguous().data_ptr<float>(), k);
    EXPECT_NEAR(r[i].item<float>(), want, 1e-5 * std::fabs(want)) << i;
  }
}

// ---------------------------------------------------------------- relabelling

constexpr int kB = 3, kC = 4, kObs = 4, kAct = 2;

hiro::GoalSpace xy_space() { return hiro::make_goal_space(GoalSpaceKind::kXy, kObs, {}, {}, "test"); }
const std::vector<float> kActLow = {-3.0f, -1.0f};
const std::vector<float> kActHigh = {3.0f, 1.0f};

// A hand-built linear low-level policy on obs (+) g: a = W x.
torch::Tensor linear_policy(const torch::Tensor& x) {
  const auto W = torch::tensor({0.2f, -0.1f, 0.05f, 0.0f, 0.3f, 0.1f,  //
                                0.1f, 0.3f, 0.0f, -0.05f, -0.2f, 0.25f})
                     .view({2, 6});
  return x.matmul(W.t());
}

// A relabel batch whose actions were produced by `policy` under goal `g_star` from s_t.
RelabelBatch generated_batch(const torch::Tensor& g_star, const LowPolicy& policy, std::uint64_t seed) {
  torch::manual_seed(static_cast<std::uint64_t>(seed));
  RelabelBatch b;
  b.states = torch::randn({kB, kC, kObs}) * 2;
  b.s = b.states.select(1, 0).clone();
  b.s_next = b.s + torch::randn({kB, kObs});
  const auto shift = b.s.narrow(1, 0, 2).unsqueeze(1) - b.states.narrow(2, 0, 2);
  const auto goals = g_star.unsqueeze(1) + shift;  // h along the stored states
  b.actions = policy(torch::cat({b.states, goals}, 2).reshape({kB * kC, kObs + 2})).reshape({kB, kC, kAct});
  b.g = torch::zeros({kB, 2});
  return b;
}

TEST(Relabel, CandidateOrderAndClipping) {
  Relabeller rl(RelabelStrategy::kSample, xy_space(), kActLow, kActHigh, torch::kCPU);
  RelabelBatch b = generated_batch(torch::zeros({kB, 2}), linear_policy, 4);
  // Row 0: delta (15, -1) leaves the box; row 1: the stored goal (-12, 3) does.
  b.s_next = b.s.clone();
  b.s_next[0][0] += 15.0f;
  b.s_next[0][1] -= 1.0f;
  b.g[1][0] = -12.0f;
  b.g[1][1] = 3.0f;
  Rng rng(42), replay(42);
  const RelabelResult r = rl.relabel(b, linear_policy, rng);
  ASSERT_EQ(r.candidates.sizes(), (std::vector<std::int64_t>{kB, 10, 2}));
  const auto delta = b.s_next.narrow(1, 0, 2) - b.s.narrow(1, 0, 2);
  for (int i = 0; i < kB; ++i) {
    for (int n = 0; n < 8; ++n)
      for (int j = 0; j < 2; ++j) {
        const double want =
            std::clamp(delta[i][j].item<double>() + 5.0 * static_cast<float>(replay.normal()), -10.0, 10.0);
        EXPECT_NEAR(r.candidates[i][n][j].item<double>(), want, 1e-5) << i << " " << n << " " << j;
      }
    for (int j = 0; j < 2; ++j) {
      EXPECT_FLOAT_EQ(r.candidates[i][8][j].item<float>(), std::clamp(delta[i][j].item<float>(), -10.0f, 10.0f));
      EXPECT_FLOAT_EQ(r.candidates[i][9][j].item<float>(), std::clamp(b.g[i][j].item<float>(), -10.0f, 10.0f));
    }
  }
  EXPECT_EQ(r.candidates[0][8][0].item<float>(), 10.0f);
  EXPECT_EQ(r.candidates[1][9][0].item<float>(), -10.0f);
  EXPECT_TRUE((r.candidates.abs() <= 10.0f).all().item<bool>());
  EXPECT_EQ(rng.state(), replay.state());  // exactly B * 8 * k draws
  // The chosen goal is the candidate at the chosen index, with the best score.
  for (int i = 0; i < kB; ++i) {
    const auto c = r.choice[i].item<std::int64_t>();
    EXPECT_TRUE(torch::equal(r.goals[i], r.candidates[i][c]));
    EXPECT_EQ(r.scores[i][c].item<float>(), r.scores[i].max().item<float>());
  }
}

TEST(Relabel, ScoresAreNormalisedSquaredErrorsAlongTheGoalSequence) {
  Relabeller rl(RelabelStrategy::kSample, xy_space(), kActLow, kActHigh, torch::kCPU);
  const RelabelBatch b = generated_batch(torch::zeros({kB, 2}), linear_policy, 5);
  const auto cand = torch::randn({kB, 2, 2});
  const auto scores = rl.score(b, cand, linear_policy);
  for (int i = 0; i < kB; ++i)
    for (int n = 0; n < 2; ++n) {
      double want = 0.0;
      for (int t = 0; t < kC; ++t) {
        auto in = torch::empty({1, kObs + 2});
        in.narrow(1, 0, kObs).copy_(b.states[i][t]);
        for (int j = 0; j < 2; ++j) in[0][kObs + j] = cand[i][n][j] + b.s[i][j] - b.states[i][t][j];
        const auto pred = linear_policy(in)[0];
        for (int j = 0; j < kAct; ++j) {
          const double e =
              (b.actions[i][t][j].item<double>() - pred[j].item<double>()) / kActHigh[static_cast<std::size_t>(j)];
          want -= e * e;
        }
      }
      EXPECT_NEAR(scores[i][n].item<double>(), want, 1e-4 * (1.0 + std::fabs(want)));
    }
}

TEST(Relabel, RecoversTheGoalThatGeneratedTheActions) {
  Relabeller rl(RelabelStrategy::kSample, xy_space(), kActLow, kActHigh, torch::kCPU);
  const auto g_star = torch::tensor({3.0f, -2.0f, -7.5f, 1.0f, 0.5f, 9.0f}).view({kB, 2});
  // Stored goal = the generating goal: the original (index 9) wins with score 0.
  RelabelBatch b = generated_batch(g_star, linear_policy, 6);
  b.g = g_star.clone();
  Rng rng(1);
  RelabelResult r = rl.relabel(b, linear_policy, rng);
  for (int i = 0; i < kB; ++i) {
    EXPECT_EQ(r.choice[i].item<std::int64_t>(), 9) << i;
    EXPECT_TRUE(torch::equal(r.goals[i], g_star[i]));
  }
  // A useless stored goal but delta = the generating goal: delta (index 8) wins.
  b.g = torch::full({kB, 2}, -9.0f);
  b.s_next = b.s.clone();
  b.s_next.narrow(1, 0, 2).add_(g_star);
  r = rl.relabel(b, linear_policy, rng);
  for (int i = 0; i < kB; ++i) {
    EXPECT_EQ(r.choice[i].item<std::int64_t>(), 8) << i;
    EXPECT_TRUE(torch::allclose(r.goals[i], g_star[i], 1e-6, 1e-5));
  }
}

TEST(Relabel, TiesTakeTheFirstCandidate) {
  Relabeller rl(RelabelStrategy::kSample, xy_space(), kActLow, kActHigh, torch::kCPU);
  // A policy that ignores the goal scores every candidate the same: index 0 wins.
  const LowPolicy constant = [](const torch::Tensor& x) { return torch::zeros({x.size(0), kAct}); };
  RelabelBatch b = generated_batch(torch::zeros({kB, 2}), linear_policy, 7);
  Rng rng(2);
  RelabelResult r = rl.relabel(b, constant, rng);
  EXPECT_TRUE(torch::equal(r.choice, torch::zeros({kB}, torch::kLong)));
  // Delta equal to the stored goal, both generating the actions: delta (8) before original (9).
  const auto g_star = torch::tensor({1.0f, 2.0f, -3.0f, 0.5f, 4.0f, -4.0f}).view({kB, 2});
  b = generated_batch(g_star, linear_policy, 8);
  b.s_next = b.s.clone();
  b.s_next.narrow(1, 0, 2).add_(g_star);
  b.g = b.s_next.narrow(1, 0, 2) - b.s.narrow(1, 0, 2);  // bit-equal to delta
  r = rl.relabel(b, linear_policy, rng);
  for (int i = 0; i < kB; ++i) {
    ASSERT_EQ(r.scores[i][8].item<float>(), r.scores[i][9].item<float>());
    EXPECT_EQ(r.choice[i].item<std::int64_t>(), 8) << i;
  }
}

TEST(Relabel, FunDrawsAroundDeltaWithoutClippingAndNoneKeepsTheGoal) {
  RelabelBatch b = generated_batch(torch::zeros({kB, 2}), linear_policy, 9);
  b.s_next = b.s.clone();
  b.s_next[0][0] += 30.0f;  // delta far outside the box
  b.g = torch::tensor({-20.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f}).view({kB, 2});
  Relabeller fun(RelabelStrategy::kFun, xy_space(), kActLow, kActHigh, torch::kCPU);
  Rng rng(3), replay(3);
  const RelabelResult r = fun.relabel(b, linear_policy, rng);
  const auto delta = b.s_next.narrow(1, 0, 2) - b.s.narrow(1, 0, 2);
  for (int i = 0; i < kB; ++i)
    for (int j = 0; j < 2; ++j)
      EXPECT_NEAR(r.goals[i][j].item<double>(), delta[i][j].item<double>() + 1.0 * static_cast<float>(replay.normal()),
                  1e-5);
  EXPECT_GT(r.goals[0][0].item<float>(), 10.0f);  // not clipped
  Relabeller none(RelabelStrategy::kNone, xy_space(), kActLow, kActHigh, torch::kCPU);
  const auto before = rng.state();
  EXPECT_TRUE(torch::equal(none.relabel(b, linear_policy, rng).goals, b.g));  // stored, unclipped
  EXPECT_EQ(rng.state(), before);
  EXPECT_EQ(parse_relabel_strategy("FuN"), RelabelStrategy::kFun);
  EXPECT_EQ(parse_relabel_strategy("None"), RelabelStrategy::kNone);
  EXPECT_THROW(parse_relabel_strategy("best"), UsageError);
}

TEST(Relabel, MaskingAppliesInTheRelabelPass) {
  // The same actor weights with and without ZERO_OBS; shifting x,y of every stored state by
  // one constant leaves delta and the goal sequences unchanged, so only the masked inputs move.
  const hiro::GoalSpace gs = xy_space();
  Td3Shape shape;
  shape.input_dim = kObs + 2;
  shape.action_dim = kAct;
  shape.action_low = kActLow;
  shape.action_high = kActHigh;
  shape.hidden1 = 8;
  shape.hidden2 = 8;
  shape.masked_inputs = 2;
  Actor masked(shape);
  shape.masked_inputs = 0;
  Actor plain(shape);
  {
    torch::NoGradGuard no_grad;
    torch::manual_seed(10);
    for (auto& p : masked->parameters()) p.uniform_(-1, 1);
    const auto src = masked->parameters();
    auto dst = plain->parameters();
    for (std::size_t i = 0; i < src.size(); ++i) dst[i].copy_(src[i]);
  }
  const LowPolicy pm = [&](const torch::Tensor& x) { return masked->forward(x); };
  const LowPolicy pp = [&](const torch::Tensor& x) { return plain->forward(x); };
  Relabeller rl(RelabelStrategy::kSample, gs, kActLow, kActHigh, torch::kCPU);
  const RelabelBatch b = generated_batch(torch::ones({kB, 2}), linear_policy, 11);
  RelabelBatch shifted = b;
  shifted.states = b.states.clone();
  shifted.states.narrow(2, 0, 2).add_(3.0f);
  shifted.s = b.s.clone();
  shifted.s.narrow(1, 0, 2).add_(3.0f);
  shifted.s_next = b.s_next.clone();
  shifted.s_next.narrow(1, 0, 2).add_(3.0f);
  const auto cand = torch::randn({kB, 10, 2});
  EXPECT_TRUE(torch::allclose(rl.score(b, cand, pm), rl.score(shifted, cand, pm), 1e-5, 1e-5));
  EXPECT_FALSE(torch::allclose(rl.score(b, cand, pp), rl.score(shifted, cand, pp), 1e-3, 1e-3));
}

// ---------------------------------------------------------------- random streams

// Pearson correlation of a[i] and b[i + shift] over the overlap.
double shifted_correlation(const std::vector<double>& a, const std::vector<double>& b, int shift) {
  const int n = static_cast<int>(a.size());
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0, count = 0;
  for (int i = std::max(0, -shift); i < n && i + shift < n; ++i) {
    const double x = a[static_cast<std::size_t>(i)], y = b[static_cast<std::size_t>(i + shift)];
    sa += x;
    sb += y;
    saa += x * x;
    sbb += y * y;
    sab += x * y;
    count += 1;
  }
  const double cov = sab / count - (sa / count) * (sb / count);
  const double va = saa / count - (sa / count) * (sa / count);
  const double vb = sbb / count - (sb / count) * (sb / count);
  return cov / std::sqrt(va * vb);
}

// The low agent, the high agent and the learner draw from three streams. For every pair, the
// first 10k draws share no value at any offset up to 16 and are uncorrelated there (seeds of
// the form seed + salt * G, G splitmix64's increment, give one stream shifted by one or two).
TEST(HiroStreams, TheThreeStreamsAreUnrelated) {
  constexpr int kDraws = 10000;
  constexpr int kMaxShift = 16;
  constexpr double kMaxCorrelation = 0.05;  // 5 standard errors at 10k draws
  for (const std::uint64_t seed : {0ULL, 1ULL, 5ULL, 12345ULL, 0x9E3779B97F4A7C15ULL}) {
    const HiroStreamSeeds s = hiro_stream_seeds(seed);
    const std::uint64_t seeds[3] = {s.low, s.high, s.learner};
    std::vector<std::uint64_t> bits[3];
    std::vector<double> u[3];
    for (int k = 0; k < 3; ++k) {
      Rng rng(seeds[k]);
      for (int i = 0; i < kDraws; ++i) bits[k].push_back(rng.next());
      for (const std::uint64_t b : bits[k]) u[k].push_back(static_cast<double>(b >> 11) * 0x1.0p-53);
    }
    for (int a = 0; a < 3; ++a)
      for (int b = a + 1; b < 3; ++b)
        for (int shift = -kMaxShift; shift <= kMaxShift; ++shift) {
          SCOPED_TRACE("seed " + std::to_string(seed) + ", streams " + std::to_string(a) + " and " + std::to_string(b) +
                       ", shift " + std::to_string(shift));
          int equal = 0;
          for (int i = std::max(0, -shift); i < kDraws && i + shift < kDraws; ++i)
            equal += bits[a][static_cast<std::size_t>(i)] == bits[b][static_cast<std::size_t>(i + shift)];
          ASSERT_EQ(equal, 0);
          ASSERT_LT(std::fabs(shifted_correlation(u[a], u[b], shift)), kMaxCorrelation);
        }
  }
}

// The agents are seeded with those streams, so the high-level networks are not shifted copies
// of the low-level ones (hiro_xy on kinematic-maze: both actors' first layers are [300 x 32]
// with the same bound, so a shared stream would make them equal one draw apart).
TEST(HiroStreams, TheHighNetworksAreNotShiftedCopiesOfTheLowOnes) {
  HiroOptions o = small(make_hiro_options("kinematic-maze", GoalSpaceKind::kXy));
  o.seed = 3;
  HiroLearner l(o);
  const HiroStreamSeeds s = hiro_stream_seeds(o.seed);
  EXPECT_EQ(l.low_agent().options().seed, s.low);
  EXPECT_EQ(l.high_agent().options().seed, s.high);
  const auto lo = l.low_agent().actor()->fc1->weight.detach().flatten().contiguous();
  const auto hi = l.high_agent().actor()->fc1->weight.detach().flatten().contiguous();
  ASSERT_EQ(lo.numel(), hi.numel());
  const std::int64_t n = lo.numel();
  const float* a = lo.data_ptr<float>();
  const float* b = hi.data_ptr<float>();
  for (int shift = -16; shift <= 16; ++shift) {
    std::int64_t equal = 0;
    for (std::int64_t i = std::max<std::int64_t>(0, -shift); i < n && i + shift < n; ++i) equal += a[i] == b[i + shift];
    EXPECT_LT(equal, n / 1000) << "shift " << shift;
  }
}

// ---------------------------------------------------------------- batches into the updates

// Transition / MetaTransition rows with a distinct value in every column (and every row):
// row i, float j holds 0.1 (i + 1) + 0.001 (j + 1), so any two columns swapped show. (Small
// values keep the critics' errors inside Huber's quadratic part, where they move the update.)
std::vector<float> distinct_row(int i, int floats) {
  std::vector<float> r(static_cast<std::size_t>(floats));
  for (int j = 0; j < floats; ++j) r[static_cast<std::size_t>(j)] = 0.1f * (i + 1) + 0.001f * (j + 1);
  return r;
}

torch::Tensor rows_tensor(const std::vector<std::vector<float>>& rows) {
  auto t = torch::empty({static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(rows[0].size())});
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::copy(rows[i].begin(), rows[i].end(), t.data_ptr<float>() + i * rows[0].size());
  return t;
}

// Floats [offset, offset + n) of a row, as a 1-D tensor.
torch::Tensor part(const std::vector<float>& row, int offset, int n) {
  return torch::tensor(std::vector<float>(row.begin() + offset, row.begin() + offset + n));
}

std::vector<std::byte> transition_record(const HiroOptions& o, const std::vector<float>& row) {
  const hiro::TransitionDims d = o.transition_dims();
  const hiro::TransitionLayout L(d);
  hiro::TransitionHeader h{};
  h.obs_dim = static_cast<std::uint16_t>(d.obs_dim);
  h.action_dim = static_cast<std::uint16_t>(d.action_dim);
  h.goal_dim = static_cast<std::uint16_t>(d.goal_dim);
  std::vector<std::byte> bytes(hiro::transition_bytes(d));
  const float* r = row.data();
  hiro::encode_transition(
      bytes.data(), h,
      {r + L.s(), r + L.a(), r + L.s_next(), r + L.g(), r + L.g_next(), r[L.r_env()], r[L.discount()]});
  return bytes;
}

std::vector<std::byte> meta_record(const HiroOptions& o, const std::vector<float>& row) {
  const hiro::MetaTransitionDims d = o.meta_transition_dims();
  const hiro::MetaTransitionLayout L(d);
  hiro::MetaTransitionHeader h{};
  h.obs_dim = static_cast<std::uint16_t>(d.obs_dim);
  h.action_dim = static_cast<std::uint16_t>(d.action_dim);
  h.goal_dim = static_cast<std::uint16_t>(d.goal_dim);
  h.context_dim = static_cast<std::uint16_t>(d.context_dim);
  h.steps = static_cast<std::uint16_t>(d.steps);
  std::vector<std::byte> bytes(hiro::meta_transition_bytes(d));
  const float* r = row.data();
  hiro::encode_meta_transition(bytes.data(), h,
                               {r + L.s(), r + L.g(), r + L.s_next(), r + L.context(), r + L.context_next(),
                                r[L.reward()], r[L.discount()], r + L.low_states(), r + L.low_actions()});
  return bytes;
}

// The rows the learner's next update samples: its stream from the seed, over a replay
// holding `rows` (the same draws as HiroLearner's, with the real FifoReplay).
torch::Tensor learner_draws(const std::vector<std::vector<float>>& rows, int batch, Rng& rng) {
  FifoReplay replay(rows.size(), static_cast<int>(rows[0].size()));
  for (const auto& r : rows) replay.add(r.data());
  std::vector<std::int64_t> slots(static_cast<std::size_t>(batch));
  replay.sample(rng, batch, slots.data());
  auto out = torch::empty({batch, replay.row_floats()});
  replay.gather(slots.data(), batch, out.data_ptr<float>());
  return out;
}

using td3::testing_util::agent_params;
using td3::testing_util::all_tensors;

// Every network and target of `a` to U(-0.3, 0.3): Q then depends visibly on every input
// (the init's U(+-0.003) output layers make the targets nearly 0, and Adam's first steps
// nearly the gradients' signs, so a wrong column could go unseen).
void randomize_agent(Td3Agent& a, std::uint64_t seed) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(seed);
  for (auto& p : agent_params(a)) p.uniform_(-0.3, 0.3);
}

// `dst` gets `src`'s networks and targets (both still without Adam steps).
void copy_agent(Td3Agent& dst, Td3Agent& src) {
  torch::NoGradGuard no_grad;
  auto d = agent_params(dst);
  const auto s = agent_params(src);
  for (std::size_t i = 0; i < d.size(); ++i) d[i].copy_(s[i]);
}

// True when both agents hold bit-identical networks and targets.
bool same_agents(Td3Agent& a, Td3Agent& b) {
  const auto ta = all_tensors(a), tb = all_tensors(b);
  for (std::size_t i = 0; i < ta.size(); ++i)
    if (!torch::equal(ta[i], tb[i])) return false;
  return true;
}

HiroOptions wiring_options(const std::string& relabel) {
  HiroOptions o = small(make_hiro_options("kinematic-maze", GoalSpaceKind::kXy));
  o.hidden = 16;
  o.batch_size = 5;  // with replacement from 3 rows
  o.relabel = relabel;
  o.seed = 9;
  return o;
}

constexpr int kWiringRows = 3;

TEST(HiroBatches, LowLevelColumnsAreXGAReward) {
  const HiroOptions o = wiring_options("none");
  const hiro::TransitionLayout L(o.transition_dims());
  std::vector<std::vector<float>> rows;
  for (int i = 0; i < kWiringRows; ++i) rows.push_back(distinct_row(i, L.floats()));
  const Td3Batch b = low_level_batch(rows_tensor(rows), L);
  for (int i = 0; i < kWiringRows; ++i) {
    const auto& r = rows[static_cast<std::size_t>(i)];
    SCOPED_TRACE("row " + std::to_string(i));
    EXPECT_TRUE(torch::equal(b.x[i], torch::cat({part(r, L.s(), L.obs), part(r, L.g(), L.goal)}))) << "x = s (+) g";
    EXPECT_TRUE(torch::equal(b.a[i], part(r, L.a(), L.act))) << "a";
    EXPECT_TRUE(torch::equal(b.x_next[i], torch::cat({part(r, L.s_next(), L.obs), part(r, L.g_next(), L.goal)})))
        << "x' = s' (+) g'";
    double d2 = 0;
    for (int j = 0; j < L.goal; ++j) {
      const double d = static_cast<double>(r[static_cast<std::size_t>(L.s_next() + j)]) -
                       r[static_cast<std::size_t>(L.s() + j)] - r[static_cast<std::size_t>(L.g() + j)];
      d2 += d * d;
    }
    EXPECT_NEAR(b.r[i].item<double>(), -std::sqrt(d2 + 1e-10), 1e-5) << "r = r_lo(s, g, s')";
  }
}

TEST(HiroBatches, HighLevelColumnsAreXGoalRewardAndTheRelabelInputs) {
  const HiroOptions o = wiring_options("none");
  const hiro::MetaTransitionLayout L(o.meta_transition_dims());
  std::vector<std::vector<float>> rows;
  for (int i = 0; i < kWiringRows; ++i) rows.push_back(distinct_row(i, L.floats()));
  const HighLevelBatch b = high_level_batch(rows_tensor(rows), L);
  for (int i = 0; i < kWiringRows; ++i) {
    const auto& r = rows[static_cast<std::size_t>(i)];
    SCOPED_TRACE("row " + std::to_string(i));
    EXPECT_TRUE(torch::equal(b.td3.x[i], torch::cat({part(r, L.s(), L.obs), part(r, L.context(), L.ctx)})))
        << "x = s_t (+) G_t";
    EXPECT_TRUE(
        torch::equal(b.td3.x_next[i], torch::cat({part(r, L.s_next(), L.obs), part(r, L.context_next(), L.ctx)})))
        << "x' = s_{t+c} (+) G_{t+c}";
    EXPECT_EQ(b.td3.r[i].item<float>(), r[static_cast<std::size_t>(L.reward())]) << "r = R";
    EXPECT_FALSE(b.td3.a.defined()) << "the action is the relabelled goal, set by the caller";
    EXPECT_TRUE(torch::equal(b.relabel.s[i], part(r, L.s(), L.obs))) << "s_t";
    EXPECT_TRUE(torch::equal(b.relabel.s_next[i], part(r, L.s_next(), L.obs))) << "s_{t+c}";
    EXPECT_TRUE(torch::equal(b.relabel.g[i], part(r, L.g(), L.goal))) << "g_t";
    for (int t = 0; t < L.steps; ++t) {
      EXPECT_TRUE(torch::equal(b.relabel.states[i][t], part(r, L.low_states() + t * L.obs, L.obs))) << "state " << t;
      EXPECT_TRUE(torch::equal(b.relabel.actions[i][t], part(r, L.low_actions() + t * L.act, L.act))) << "action " << t;
    }
  }
}

// Three updates of a learner level (`update`, which trains `agent`) and of `twin` on
// `next_batch()`: the same losses and actor-step cadence, and bit-identical agents after each.
void expect_twin_updates(const std::function<HiroUpdateStats()>& update, Td3Agent& agent, Td3Agent& twin,
                         const std::function<Td3Batch()>& next_batch) {
  for (int u = 0; u < 3; ++u) {
    const HiroUpdateStats got = update();
    const Td3Stats want = twin.update(next_batch());
    EXPECT_EQ(got.critic_loss, want.critic_loss.item<double>()) << "update " << u;
    EXPECT_EQ(got.actor_step, want.actor_step) << "update " << u;
    if (want.actor_step) {
      EXPECT_EQ(got.actor_loss, want.actor_loss.item<double>()) << "update " << u;
    }
    EXPECT_TRUE(same_agents(agent, twin)) << "update " << u;
  }
}

// update_low() trains on exactly low_level_batch() of the rows its stream draws: an agent
// built alike and updated by hand on that batch ends bit-identical.
TEST(HiroBatches, UpdateLowConsumesTheLowLevelBatch) {
  const HiroOptions o = wiring_options("none");
  const hiro::TransitionLayout L(o.transition_dims());
  HiroLearner l(o);
  std::vector<std::vector<float>> rows;
  std::string error;
  for (int i = 0; i < kWiringRows; ++i) {
    rows.push_back(distinct_row(i, L.floats()));
    const auto rec = transition_record(o, rows.back());
    ASSERT_TRUE(l.add_transition(rec.data(), static_cast<std::uint32_t>(rec.size()), &error)) << error;
  }
  randomize_agent(l.low_agent(), 17);
  Td3Agent twin(l.low_agent().options(), torch::kCPU);
  copy_agent(twin, l.low_agent());
  Rng draws(hiro_stream_seeds(o.seed).learner);
  expect_twin_updates([&] { return l.update_low(); }, l.low_agent(), twin,
                      [&] { return low_level_batch(learner_draws(rows, o.batch_size, draws), L); });
  // The comparison sees a swap: the same update with g in place of g' ends elsewhere.
  Rng d1(hiro_stream_seeds(o.seed).learner), d2(hiro_stream_seeds(o.seed).learner);
  Td3Agent right(l.low_agent().options(), torch::kCPU), wrong(l.low_agent().options(), torch::kCPU);
  randomize_agent(right, 17);
  randomize_agent(wrong, 17);
  const Td3Stats sr = right.update(low_level_batch(learner_draws(rows, o.batch_size, d1), L));
  Td3Batch swapped = low_level_batch(learner_draws(rows, o.batch_size, d2), L);
  swapped.x_next = torch::cat({swapped.x_next.narrow(1, 0, L.obs), swapped.x.narrow(1, L.obs, L.goal)}, 1);
  const Td3Stats sw = wrong.update(swapped);
  EXPECT_NE(sr.critic_loss.item<double>(), sw.critic_loss.item<double>());
}

// update_high() trains on high_level_batch() with the stored goal as the action (relabel
// none), from the rows its stream draws.
TEST(HiroBatches, UpdateHighConsumesTheHighLevelBatch) {
  const HiroOptions o = wiring_options("none");
  const hiro::MetaTransitionLayout L(o.meta_transition_dims());
  HiroLearner l(o);
  std::vector<std::vector<float>> rows;
  std::string error;
  for (int i = 0; i < kWiringRows; ++i) {
    rows.push_back(distinct_row(i, L.floats()));
    const auto rec = meta_record(o, rows.back());
    ASSERT_TRUE(l.add_meta_transition(rec.data(), static_cast<std::uint32_t>(rec.size()), &error)) << error;
  }
  randomize_agent(l.high_agent(), 18);
  Td3Agent twin(l.high_agent().options(), torch::kCPU);
  copy_agent(twin, l.high_agent());
  Rng draws(hiro_stream_seeds(o.seed).learner);
  expect_twin_updates([&] { return l.update_high(); }, l.high_agent(), twin, [&] {
    HighLevelBatch b = high_level_batch(learner_draws(rows, o.batch_size, draws), L);
    b.td3.a = b.relabel.g;
    return b.td3;
  });
}

// With the sample correction, update_high() relabels with the ONLINE low-level actor: its
// update equals one on the goals the online actor picks, not on those its target would pick.
TEST(HiroBatches, RelabellingScoresWithTheOnlineLowLevelActor) {
  const HiroOptions o = wiring_options("sample");
  const hiro::MetaTransitionLayout L(o.meta_transition_dims());
  HiroLearner l(o);
  std::vector<std::vector<float>> rows;
  std::string error;
  for (int i = 0; i < kWiringRows; ++i) {
    rows.push_back(distinct_row(i, L.floats()));
    const auto rec = meta_record(o, rows.back());
    ASSERT_TRUE(l.add_meta_transition(rec.data(), static_cast<std::uint32_t>(rec.size()), &error)) << error;
  }
  {
    // Online and target low actors far apart, and both far from the near-constant init.
    torch::NoGradGuard no_grad;
    torch::manual_seed(31);
    for (auto& p : l.low_agent().actor()->parameters()) p.uniform_(-0.5, 0.5);
    for (auto& p : l.low_agent().actor_target()->parameters()) p.uniform_(-0.5, 0.5);
  }
  Actor& online = l.low_agent().actor();
  Actor& target = l.low_agent().actor_target();
  const Relabeller relabeller(RelabelStrategy::kSample, o.goal_space, o.action_low, o.action_high, torch::kCPU);
  Rng draws(hiro_stream_seeds(o.seed).learner);
  HighLevelBatch b = high_level_batch(learner_draws(rows, o.batch_size, draws), L);
  Rng for_target = draws;
  torch::NoGradGuard no_grad;
  const auto by_online = relabeller
                             .relabel(
                                 b.relabel, [&](const torch::Tensor& x) { return online->forward(x); }, draws)
                             .goals;
  const auto by_target = relabeller
                             .relabel(
                                 b.relabel, [&](const torch::Tensor& x) { return target->forward(x); }, for_target)
                             .goals;
  ASSERT_FALSE(torch::equal(by_online, by_target)) << "the two actors must pick different goals here";

  randomize_agent(l.high_agent(), 19);
  Td3Agent twin_online(l.high_agent().options(), torch::kCPU);
  Td3Agent twin_target(l.high_agent().options(), torch::kCPU);
  copy_agent(twin_online, l.high_agent());
  copy_agent(twin_target, l.high_agent());
  const HiroUpdateStats got = l.update_high();
  b.td3.a = by_online;
  const Td3Stats online_stats = twin_online.update(b.td3);
  b.td3.a = by_target;
  const Td3Stats target_stats = twin_target.update(b.td3);
  EXPECT_EQ(got.critic_loss, online_stats.critic_loss.item<double>());
  EXPECT_NE(got.critic_loss, target_stats.critic_loss.item<double>());
  EXPECT_TRUE(same_agents(l.high_agent(), twin_online));
}

// gamma_high applies once per meta transition (§3, pitfall 5), gamma_low per env step, each
// to its own level: y = r + gamma * min(Q1', Q2') in the high agent's target, not gamma^c.
TEST(HiroBatches, EachLevelDiscountsWithItsOwnGammaPerTransition) {
  HiroOptions o = wiring_options("none");
  EXPECT_EQ(o.gamma_high, 0.99);
  EXPECT_EQ(o.gamma_low, 0.99);
  o.gamma_low = 0.9;
  o.gamma_high = 0.8;
  HiroLearner l(o);
  EXPECT_EQ(l.low_agent().options().gamma, 0.9);
  EXPECT_EQ(l.high_agent().options().gamma, 0.8);
  Td3Agent& hi = l.high_agent();
  torch::manual_seed(4);
  const int B = 4;
  const auto x_next = torch::randn({B, o.dims().high_input()});
  const auto eps = torch::zeros({B, o.goal_space.dim});
  const auto r = torch::full({B}, 2.0f);
  const auto y = hi.target_q(r, x_next, eps);
  torch::NoGradGuard no_grad;
  const auto a_next = hi.actor_target()->forward(x_next);
  const auto q = torch::min(hi.critic1_target()->forward(x_next, a_next), hi.critic2_target()->forward(x_next, a_next));
  for (int i = 0; i < B; ++i)
    EXPECT_NEAR(y[i].item<double>(), 2.0 + 0.8 * q[i].item<double>(), 1e-6 * (1 + std::fabs(q[i].item<double>())));
}

// ---------------------------------------------------------------- learner: records and save/load

// Random, well-formed records for `o`.
struct RecordMaker {
  const HiroOptions& o;
  Rng rng;
  std::vector<float> buf;
  RecordMaker(const HiroOptions& options, std::uint64_t seed) : o(options), rng(seed) {}
  float u(double lo, double hi) { return static_cast<float>(lo + (hi - lo) * rng.uniform01()); }
  std::vector<float> vec(int n, double lo, double hi) {
    std::vector<float> v(static_cast<std::size_t>(n));
    for (float& x : v) x = u(lo, hi);
    return v;
  }
  std::vector<std::byte> low() {
    const auto d = o.transition_dims();
    const auto s = vec(d.obs_dim, -5, 5), a = vec(d.action_dim, -30, 30), sn = vec(d.obs_dim, -5, 5),
               g = vec(d.goal_dim, -1, 1), gn = vec(d.goal_dim, -1, 1);
    std::vector<std::byte> bytes(hiro::transition_bytes(d));
    hiro::TransitionHeader h{};
    h.obs_dim = static_cast<std::uint16_t>(d.obs_dim);
    h.action_dim = static_cast<std::uint16_t>(d.action_dim);
    h.goal_dim = static_cast<std::uint16_t>(d.goal_dim);
    hiro::encode_transition(bytes.data(), h, {s.data(), a.data(), sn.data(), g.data(), gn.data(), 0.0f, 1.0f});
    return bytes;
  }
  std::vector<std::byte> meta() {
    const auto d = o.meta_transition_dims();
    const auto s = vec(d.obs_dim, -5, 5), g = vec(d.goal_dim, -1, 1), sn = vec(d.obs_dim, -5, 5),
               G = vec(d.context_dim, 0, 16), st = vec(d.steps * d.obs_dim, -5, 5),
               ac = vec(d.steps * d.action_dim, -30, 30);
    std::vector<std::byte> bytes(hiro::meta_transition_bytes(d));
    hiro::MetaTransitionHeader h{};
    h.obs_dim = static_cast<std::uint16_t>(d.obs_dim);
    h.action_dim = static_cast<std::uint16_t>(d.action_dim);
    h.goal_dim = static_cast<std::uint16_t>(d.goal_dim);
    h.context_dim = static_cast<std::uint16_t>(d.context_dim);
    h.steps = static_cast<std::uint16_t>(d.steps);
    hiro::encode_meta_transition(
        bytes.data(), h, {s.data(), g.data(), sn.data(), G.data(), G.data(), u(-20, 0), 1.0f, st.data(), ac.data()});
    return bytes;
  }
};

void feed(HiroLearner& l, RecordMaker& m, int lows, int metas) {
  std::string error;
  for (int i = 0; i < lows; ++i) {
    const auto r = m.low();
    ASSERT_TRUE(l.add_transition(r.data(), static_cast<std::uint32_t>(r.size()), &error)) << error;
  }
  for (int i = 0; i < metas; ++i) {
    const auto r = m.meta();
    ASSERT_TRUE(l.add_meta_transition(r.data(), static_cast<std::uint32_t>(r.size()), &error)) << error;
  }
}

HiroOptions save_load_options() {
  HiroOptions o = small(make_hiro_options("kinematic-maze", GoalSpaceKind::kOrig));
  o.hidden = 64;  // keeps 2 x 100 high-level updates (10,000-row relabel passes) quick
  o.replay_capacity = 400;
  o.seed = 5;
  return o;
}

TEST(HiroLearner, StoresRecordsRefusesMalformedOnesAndUpdates) {
  const HiroOptions o = save_load_options();
  HiroLearner l(o);
  EXPECT_THROW(l.update_low(), UsageError);
  EXPECT_THROW(l.update_high(), UsageError);
  RecordMaker m(o, 1);
  feed(l, m, 5, 3);
  EXPECT_EQ(l.low_replay().size(), 5u);
  EXPECT_EQ(l.high_replay().size(), 3u);
  std::string error;
  auto bad = m.low();
  EXPECT_FALSE(l.add_transition(bad.data(), static_cast<std::uint32_t>(bad.size() - 8), &error));
  EXPECT_FALSE(error.empty());
  auto meta = m.meta();
  EXPECT_FALSE(l.add_transition(meta.data(), static_cast<std::uint32_t>(meta.size()), &error));  // wrong kind
  EXPECT_FALSE(l.add_meta_transition(bad.data(), static_cast<std::uint32_t>(bad.size()), &error));
  EXPECT_EQ(l.low_replay().size(), 5u);
  EXPECT_EQ(l.high_replay().size(), 3u);
  const HiroUpdateStats lo = l.update_low();
  const HiroUpdateStats hi = l.update_high();
  EXPECT_TRUE(lo.actor_step && hi.actor_step);
  EXPECT_TRUE(std::isfinite(lo.critic_loss) && std::isfinite(lo.actor_loss));
  EXPECT_TRUE(std::isfinite(hi.critic_loss) && std::isfinite(hi.actor_loss));
  EXPECT_FALSE(l.update_low().actor_step);
  EXPECT_EQ(l.low_agent().counter(), 2);
  EXPECT_EQ(l.high_agent().counter(), 1);
}

TEST(HiroLearner, OptionsAreValidated) {
  HiroOptions o = save_load_options();
  o.device = "tpu";
  EXPECT_THROW(HiroLearner{o}, UsageError);
  o = save_load_options();
  o.relabel = "best";
  EXPECT_THROW(HiroLearner{o}, UsageError);
  o = save_load_options();
  o.meta_period = 0;
  EXPECT_THROW(HiroLearner{o}, UsageError);
  o = save_load_options();
  o.action_high.pop_back();
  EXPECT_THROW(HiroLearner{o}, UsageError);
  o = save_load_options();
  o.threads = 0;
  try {
    HiroLearner l(o);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "hiro: threads must be in [1, 256], got 0");
  }
}

std::string save_bytes(const HiroLearner& l) {
  std::string bytes;
  StringSink sink(&bytes);
  ByteWriter w(sink);
  l.save(w);
  return bytes;
}

// 100 low + 100 high updates (with fresh records half-way), all losses recorded.
std::vector<double> run_updates(HiroLearner& l, RecordMaker& m) {
  std::vector<double> losses;
  for (int i = 0; i < 100; ++i) {
    if (i == 50) feed(l, m, 20, 4);
    const HiroUpdateStats lo = l.update_low();
    const HiroUpdateStats hi = l.update_high();
    losses.insert(losses.end(), {lo.critic_loss, lo.actor_loss, hi.critic_loss, hi.actor_loss});
  }
  return losses;
}

// device_replay keeps the rows on the learner's device and batches with index_select (the
// default with CUDA). Forced on here on the CPU, the same code must give the same batches as
// the host gather: bit-identical learners, also after a wrapped buffer and a checkpoint load
// (which re-uploads the rows).
TEST(HiroLearner, DeviceReplayGivesTheSameBatchesAsTheHostGather) {
  HiroOptions off = save_load_options();
  off.device_replay = "off";
  HiroOptions on = off;
  on.device_replay = "on";
  HiroLearner a(off), b(on);
  RecordMaker ma(off, 21), mb(on, 21);
  feed(a, ma, 450, 60);  // the low replay (400 rows) has wrapped
  feed(b, mb, 450, 60);
  for (int i = 0; i < 7; ++i) {
    a.update_low();
    a.update_high();
    b.update_low();
    b.update_high();
  }
  EXPECT_EQ(save_bytes(a), save_bytes(b));
  // A learner with device rows restored from a checkpoint continues identically.
  HiroLearner c(on);
  const std::string checkpoint = save_bytes(a);
  MemorySource src(checkpoint);
  ByteReader rd(src, "hiro test checkpoint");
  c.load(rd);
  RecordMaker mc(on, 0);
  mc.rng.set_state(ma.rng.state());
  const std::vector<double> la = run_updates(a, ma);
  const std::vector<double> lc = run_updates(c, mc);
  ASSERT_EQ(la.size(), lc.size());
  for (std::size_t i = 0; i < la.size(); ++i) ASSERT_EQ(la[i], lc[i]) << "loss " << i;
  EXPECT_EQ(save_bytes(a), save_bytes(c));
  HiroOptions bad = off;
  bad.device_replay = "sometimes";
  try {
    HiroLearner d(bad);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "hiro: device_replay 'sometimes': expected auto, on or off");
  }
}

TEST(HiroLearner, SaveLoadGivesBitIdenticalNextHundredUpdates) {
  const HiroOptions o = save_load_options();
  HiroLearner a(o);
  RecordMaker ma(o, 21);
  feed(a, ma, 450, 60);  // the low replay has wrapped
  for (int i = 0; i < 7; ++i) {
    a.update_low();
    a.update_high();
  }
  const std::string checkpoint = save_bytes(a);
  const std::uint64_t maker_state = ma.rng.state();

  HiroOptions other = o;
  other.seed = 77;  // the checkpoint decides, not the seed
  HiroLearner b(other);
  MemorySource src(checkpoint);
  ByteReader rd(src, "hiro test checkpoint");
  b.load(rd);
  rd.expect_end();
  EXPECT_EQ(save_bytes(b), checkpoint);
  EXPECT_EQ(b.low_agent().counter(), 7);

  RecordMaker mb(o, 0);
  mb.rng.set_state(maker_state);
  const std::vector<double> la = run_updates(a, ma);
  const std::vector<double> lb = run_updates(b, mb);
  ASSERT_EQ(la.size(), lb.size());
  for (std::size_t i = 0; i < la.size(); ++i) ASSERT_EQ(la[i], lb[i]) << "loss " << i;
  // Networks, targets, Adam moments, counters, streams and replays: byte for byte.
  EXPECT_EQ(save_bytes(a), save_bytes(b));
  EXPECT_EQ(a.low_agent().counter(), 107);
  EXPECT_EQ(a.high_replay().added(), 64u);

  // A checkpoint of another configuration is refused.
  HiroOptions xy = small(make_hiro_options("kinematic-maze", GoalSpaceKind::kXy));
  xy.hidden = 64;
  xy.replay_capacity = 400;
  HiroLearner c(xy);
  MemorySource src2(checkpoint);
  ByteReader rd2(src2, "hiro test checkpoint");
  EXPECT_THROW(c.load(rd2), CorruptData);
}

// The learner's threads change no bit: both levels' fused updates and the relabel pass (the
// low actor over 10,000 candidate rows in chunks) on 1 and on 2 threads, paper-sized networks
// (two unit blocks, two row blocks of the batch of 100), hiro_orig masking, 12 updates each.
TEST(HiroLearner, OneAndTwoThreadsGiveTheSameBits) {
  HiroOptions o = save_load_options();
  o.hidden = 300;
  ASSERT_EQ(o.batch_size, 100);
  HiroLearner one(o);
  o.threads = 2;
  HiroLearner two(o);
  ASSERT_EQ(one.arena().threads(), 1);
  ASSERT_EQ(two.arena().threads(), 2);
  RecordMaker m1(o, 8), m2(o, 8);
  feed(one, m1, 300, 40);
  feed(two, m2, 300, 40);
  for (int i = 0; i < 12; ++i) {
    const HiroUpdateStats l1 = one.update_low(), l2 = two.update_low();
    const HiroUpdateStats h1 = one.update_high(), h2 = two.update_high();
    ASSERT_EQ(l1.critic_loss, l2.critic_loss) << i;
    ASSERT_EQ(l1.actor_loss, l2.actor_loss) << i;
    ASSERT_EQ(h1.critic_loss, h2.critic_loss) << i;
    ASSERT_EQ(h1.actor_loss, h2.actor_loss) << i;
  }
  // Networks, targets, Adam moments, counters, streams and replays: byte for byte.
  EXPECT_EQ(save_bytes(one), save_bytes(two));
  // The relabel pass ran as its first layer on the two tables (act_on_sums) and its 40 row
  // chunks per pass, each once.
  const std::vector<learner::ThreadBusy> relabel = two.arena().busy(learner::Phase::kRelabel);
  ASSERT_EQ(relabel.size(), 2u);
  EXPECT_EQ(relabel[0].tasks + relabel[1].tasks, 12u * (2u + 40u));
}

TEST(HiroLearner, RunsOnCudaWhenPresentAndItsCheckpointLoadsOnCpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  HiroOptions o = save_load_options();
  o.device = "cuda:0";
  HiroLearner gpu(o);
  RecordMaker m(o, 3);
  feed(gpu, m, 50, 10);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(std::isfinite(gpu.update_low().critic_loss));
    EXPECT_TRUE(std::isfinite(gpu.update_high().critic_loss));
  }
  o.device = "cpu";
  HiroLearner cpu(o);
  const std::string bytes = save_bytes(gpu);
  MemorySource src(bytes);
  ByteReader rd(src, "cuda checkpoint");
  cpu.load(rd);
  EXPECT_EQ(save_bytes(cpu), bytes);
}

}  // namespace
}  // namespace ringrl::hiro
