// HIRO's low level learns (spec hiro.md §3, §6, §13). First, hiro_xy on the kinematic Maze: a HiroLearner
// trained at the 1:1 rate (one low-level update per env step after the initial collection)
// drives the agent to the relative goals a random goal source hands it every c steps. The
// measure is the final in-segment distance ||s_t[:k] + g_t - s_{t+c}[:k]|| (§6.2, §6.3) of
// noise-free segments, before and after training, on the same seeded goals and starts; the
// greedy straight-line command (walls ignored) gives the reference for what the maze allows.
//
// Then hiro_orig-style goals (§2, §6.1): per-dimension boxes and x,y masked from the low
// level, on a small state whose every entry is a goal dim (LowLevelReachesPerDimensionGoals).
//
// Small networks and a wider exploration noise than §3's keep each to about 10 s on one
// core; everything is seeded and runs on one torch thread, so the result is deterministic.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "common/hiro/goal_space.h"
#include "common/hiro/transition_record.h"
#include "envs/maze/factory.h"
#include "learner/hiro/hiro_learner.h"
#include "learner/td3/td3.h"
#include "learner/threads.h"

namespace ringrl::hiro {
namespace {

constexpr const char* kEnv = "kinematic-maze";
constexpr double kMaxStep = 1.0;  // configs/hiro.json kinematic_max_step: a ±10 goal is c steps away
constexpr int kHidden = 64;       // small networks (§4 uses 300-300)
constexpr int kBatch = 64;
constexpr std::size_t kReplay = 20000;
constexpr int kInitialSteps = 1000;       // collected before the first update (§3: 2,500)
constexpr int kTrainSteps = 10000;        // env steps with one low-level update each
constexpr double kExploreNoise = 6.0;     // sigma in action units (range ±30; §3 uses 1.0)
constexpr int kEvalSegments = 100;        // noise-free segments per measurement
constexpr double kRequiredRatio = 0.6;    // trained distance < this x the untrained one
constexpr double kReferenceSlack = 1.25;  // ... and < this x the greedy straight-line reference
constexpr std::uint64_t kSeed = 7;
constexpr std::uint64_t kGoalSeed = 11;     // training goal source
constexpr std::uint64_t kEvalSeed = 12345;  // evaluation starts and goals (the same both times)

// Drives the env with the learner's low-level policy and a uniform random goal source.
class LowLevelRig {
 public:
  LowLevelRig(HiroLearner& learner, const envs::maze::MazeEnvOptions& env_options)
      : learner_(learner),
        env_(envs::maze::make_maze_env(kEnv, env_options)),
        gs_(learner.options().goal_space),
        obs_(learner.options().obs_dim),
        act_(learner.options().action_dim()),
        k_(gs_.dim),
        c_(learner.options().meta_period),
        dims_{obs_, act_, k_},
        record_(hiro::transition_bytes(dims_)) {}

  /// The low-level action at (s, g): the online actor, plus N(0, noise^2) clipped when noise > 0.
  void act(const float* s, const float* g, double noise, Rng& rng, float* a) {
    auto x = torch::empty({1, obs_ + k_});
    std::copy(s, s + obs_, x.data_ptr<float>());
    std::copy(g, g + k_, x.data_ptr<float>() + obs_);
    const auto out = learner_.low_agent().act(x).contiguous();
    const envs::Box& box = env_->spec().action;
    for (int j = 0; j < act_; ++j) {
      const float v = out.data_ptr<float>()[j] + static_cast<float>(noise * rng.normal());
      a[j] = std::min(std::max(v, box.low[static_cast<std::size_t>(j)]), box.high[static_cast<std::size_t>(j)]);
    }
  }

  void draw_goal(Rng& rng, float* g) const {
    for (int j = 0; j < k_; ++j)
      g[j] =
          static_cast<float>(rng.uniform(gs_.low[static_cast<std::size_t>(j)], gs_.high[static_cast<std::size_t>(j)]));
  }

  /// `steps` noisy env steps into the low-level replay; one update per step when `train`.
  void collect(int steps, bool train, Rng& rng) {
    const int episode_length = env_->spec().episode_length;
    std::vector<float> s1(static_cast<std::size_t>(obs_)), g_next(static_cast<std::size_t>(k_)),
        a(static_cast<std::size_t>(act_));
    for (int n = 0; n < steps; ++n) {
      if (t_ == 0) {
        s_.resize(static_cast<std::size_t>(obs_));
        g_.resize(static_cast<std::size_t>(k_));
        env_->reset(rng.next(), envs::Span<float>(s_));
        draw_goal(rng, g_.data());
      }
      act(s_.data(), g_.data(), kExploreNoise, rng, a.data());
      const envs::StepResult r = env_->step(envs::Span<const float>(a), envs::Span<float>(s1));
      // g' = h(s, g, s') inside a segment; a fresh goal at a decision boundary (the reference).
      const bool boundary = (t_ + 1) % c_ == 0;
      if (boundary) {
        draw_goal(rng, g_next.data());
      } else {
        hiro::goal_transition(s_.data(), g_.data(), s1.data(), k_, g_next.data());
      }
      hiro::TransitionHeader h{};
      h.obs_dim = static_cast<std::uint16_t>(obs_);
      h.action_dim = static_cast<std::uint16_t>(act_);
      h.goal_dim = static_cast<std::uint16_t>(k_);
      h.flags = t_ + 1 == episode_length ? hiro::kTransitionEpisodeEnd : 0;
      h.t = static_cast<std::uint32_t>(t_);
      hiro::encode_transition(record_.data(), h,
                              {s_.data(), a.data(), s1.data(), g_.data(), g_next.data(), r.reward, 1.0f});
      std::string error;
      ASSERT_TRUE(learner_.add_transition(record_.data(), static_cast<std::uint32_t>(record_.size()), &error)) << error;
      if (train) learner_.update_low(/*read_losses=*/false);
      s_.swap(s1);
      g_.swap(g_next);
      t_ = t_ + 1 == episode_length ? 0 : t_ + 1;
    }
  }

  /// The greedy straight-line command towards s[:2] + g at full speed (walls ignored): the
  /// reference for what a goal-reaching policy can get in this maze.
  void greedy(const float* g, float* a) const {
    const envs::Box& box = env_->spec().action;
    std::fill(a, a + act_, 0.f);
    for (int j = 0; j < std::min(k_, hiro::kXyGoalDim); ++j) {
      const float command = std::min(std::max(static_cast<float>(g[j] / kMaxStep), -1.f), 1.f);
      a[j] = command * box.high[static_cast<std::size_t>(j)];
    }
  }

  /// Mean final in-segment distance ||s_t[:k] + g - s_{t+c}[:k]|| over noise-free segments
  /// from seeded starts (a fresh episode every 10 segments, spread over the episode), with the
  /// learner's policy or the greedy reference.
  double mean_segment_distance(int segments, std::uint64_t seed, bool use_greedy = false) {
    Rng rng(seed);
    constexpr int kSegmentsPerEpisode = 10;
    std::vector<float> s(static_cast<std::size_t>(obs_)), s1(s), g(static_cast<std::size_t>(k_)), g0(g),
        a(static_cast<std::size_t>(act_));
    double sum = 0;
    for (int i = 0; i < segments; ++i) {
      if (i % kSegmentsPerEpisode == 0) env_->reset(rng.next(), envs::Span<float>(s));
      draw_goal(rng, g0.data());
      g = g0;
      const std::vector<float> start = s;
      for (int t = 0; t < c_; ++t) {
        if (use_greedy) {
          greedy(g.data(), a.data());
        } else {
          act(s.data(), g.data(), /*noise=*/0.0, rng, a.data());
        }
        env_->step(envs::Span<const float>(a), envs::Span<float>(s1));
        hiro::goal_transition(s.data(), g.data(), s1.data(), k_, g.data());
        s.swap(s1);
      }
      double d2 = 0;
      for (int j = 0; j < k_; ++j) {
        const double d =
            start[static_cast<std::size_t>(j)] + g0[static_cast<std::size_t>(j)] - s[static_cast<std::size_t>(j)];
        d2 += d * d;
      }
      sum += std::sqrt(d2);
    }
    return sum / segments;
  }

 private:
  HiroLearner& learner_;
  std::unique_ptr<envs::Env> env_;
  hiro::GoalSpace gs_;
  int obs_, act_, k_, c_;
  hiro::TransitionDims dims_;
  std::vector<std::byte> record_;
  std::vector<float> s_, g_;
  int t_ = 0;  // step within the current training episode
};

// Both TD3 kernels (td3.h) learn: they agree to rounding per update, and this checks that the
// agreement holds where it matters, over thousands of updates.
class HiroLearning : public ::testing::TestWithParam<std::string> {};

TEST_P(HiroLearning, LowLevelReachesItsGoalsOnTheKinematicMaze) {
  const auto t0 = std::chrono::steady_clock::now();
  learner::set_torch_threads(1);
  envs::maze::MazeEnvOptions env_options;
  env_options.max_step = kMaxStep;
  HiroOptions o = make_hiro_options(kEnv, hiro::GoalSpaceKind::kXy, env_options);
  o.hidden = kHidden;
  o.batch_size = kBatch;
  o.replay_capacity = kReplay;
  o.device = "cpu";
  o.seed = kSeed;
  o.td3_kernel = GetParam();
  HiroLearner learner(o);
  LowLevelRig rig(learner, env_options);

  const double untrained = rig.mean_segment_distance(kEvalSegments, kEvalSeed);
  const double reference = rig.mean_segment_distance(kEvalSegments, kEvalSeed, /*use_greedy=*/true);
  Rng rng(kGoalSeed);
  rig.collect(kInitialSteps, /*train=*/false, rng);
  rig.collect(kTrainSteps, /*train=*/true, rng);
  const double trained = rig.mean_segment_distance(kEvalSegments, kEvalSeed);

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "%s kernel: final in-segment distance: untrained %.3f, after %d updates %.3f (ratio %.3f), greedy "
      "straight-line reference %.3f; %.1f s\n",
      GetParam().c_str(), untrained, kTrainSteps, trained, trained / untrained, reference, seconds);
  EXPECT_EQ(learner.low_agent().counter(), kTrainSteps);
  EXPECT_GT(untrained, 1.0);  // the untrained policy barely moves
  EXPECT_LT(trained, kRequiredRatio * untrained);
  EXPECT_LT(trained, kReferenceSlack * reference);  // what is left is mostly walls in the way
}

INSTANTIATE_TEST_SUITE_P(Kernels, HiroLearning, ::testing::Values("fused", "eager"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

// ------------------------------------------------ hiro_orig-style goals on a small state

// A small state whose every entry is a goal dimension with its own box, in the manner of
// hiro_orig's 15 dims of the ant (§6.1): x, y (+-10), z (+-0.5), a quaternion-like entry
// (+-1), a hip-like (+-0.5) and an ankle-like one (+-0.3). Action j in [-1, 1] moves entry j
// by kJointStep[j] * a_j, so each goal box is crossed in c steps at full command; no walls.
// The low level masks x, y (ZERO_OBS), as hiro_orig's does: it sees z .. ankle and the goal.
constexpr int kJointDims = 6;
constexpr float kJointBox[kJointDims] = {10.f, 10.f, 0.5f, 1.f, 0.5f, 0.3f};     // goal half-ranges
constexpr float kJointStep[kJointDims] = {1.f, 1.f, 0.05f, 0.1f, 0.05f, 0.03f};  // per step at |a| = 1
constexpr float kJointStart[kJointDims] = {5.f, 5.f, 0.2f, 0.5f, 0.3f, 0.2f};    // reset: U(+-this)
constexpr int kJointEpisode = 100;                                               // steps per episode
constexpr double kJointNoise = 0.3;  // exploration sigma in action units (range +-1)

class JointRig {
 public:
  explicit JointRig(HiroLearner& learner)
      : learner_(learner), c_(learner.options().meta_period), record_(hiro::transition_bytes(dims_)) {}

  static HiroOptions options() {
    HiroOptions o;
    o.goal_space.kind = hiro::GoalSpaceKind::kOrig;
    o.goal_space.dim = kJointDims;
    o.goal_space.mask_xy = true;
    for (int j = 0; j < kJointDims; ++j) {
      o.goal_space.low.push_back(-kJointBox[j]);
      o.goal_space.high.push_back(kJointBox[j]);
    }
    o.obs_dim = kJointDims;
    o.context_dim = 2;  // the high level is not trained here
    o.action_low.assign(kJointDims, -1.f);
    o.action_high.assign(kJointDims, 1.f);
    return o;
  }

  void reset(Rng& rng, float* s) const {
    for (int j = 0; j < kJointDims; ++j) s[j] = static_cast<float>(rng.uniform(-kJointStart[j], kJointStart[j]));
  }
  static void step(const float* s, const float* a, float* s1) {
    for (int j = 0; j < kJointDims; ++j) s1[j] = s[j] + kJointStep[j] * a[j];
  }
  static void draw_goal(Rng& rng, float* g) {
    for (int j = 0; j < kJointDims; ++j) g[j] = static_cast<float>(rng.uniform(-kJointBox[j], kJointBox[j]));
  }

  void act(const float* s, const float* g, double noise, Rng& rng, float* a) {
    auto x = torch::empty({1, 2 * kJointDims});
    std::copy(s, s + kJointDims, x.data_ptr<float>());
    std::copy(g, g + kJointDims, x.data_ptr<float>() + kJointDims);
    const auto out = learner_.low_agent().act(x).contiguous();
    for (int j = 0; j < kJointDims; ++j)
      a[j] = std::clamp(out.data_ptr<float>()[j] + static_cast<float>(noise * rng.normal()), -1.f, 1.f);
  }

  /// `steps` noisy steps into the low-level replay, a random goal every c steps and h in between;
  /// one update per step when `train`.
  void collect(int steps, bool train, Rng& rng) {
    float s1[kJointDims], g_next[kJointDims], a[kJointDims];
    for (int n = 0; n < steps; ++n) {
      if (t_ == 0) {
        reset(rng, s_);
        draw_goal(rng, g_);
      }
      act(s_, g_, kJointNoise, rng, a);
      step(s_, a, s1);
      if ((t_ + 1) % c_ == 0) {
        draw_goal(rng, g_next);
      } else {
        hiro::goal_transition(s_, g_, s1, kJointDims, g_next);
      }
      hiro::TransitionHeader h{};
      h.obs_dim = h.action_dim = h.goal_dim = static_cast<std::uint16_t>(kJointDims);
      h.t = static_cast<std::uint32_t>(t_);
      hiro::encode_transition(record_.data(), h, {s_, a, s1, g_, g_next, 0.f, 1.f});
      std::string error;
      ASSERT_TRUE(learner_.add_transition(record_.data(), static_cast<std::uint32_t>(record_.size()), &error)) << error;
      if (train) learner_.update_low(/*read_losses=*/false);
      std::copy(s1, s1 + kJointDims, s_);
      std::copy(g_next, g_next + kJointDims, g_);
      t_ = t_ + 1 == kJointEpisode ? 0 : t_ + 1;
    }
  }

  /// Mean final in-segment distance over noise-free segments from seeded starts and goals:
  /// over all dims, and over the small dims (z .. ankle) alone. Greedy: the full-speed
  /// straight command a_j = clip(g_j / step_j), which reaches every goal.
  std::pair<double, double> mean_segment_distance(int segments, std::uint64_t seed, bool greedy = false) {
    Rng rng(seed);
    double all = 0, small = 0;
    float s[kJointDims], s1[kJointDims], g[kJointDims], g0[kJointDims], start[kJointDims], a[kJointDims];
    for (int i = 0; i < segments; ++i) {
      reset(rng, s);
      draw_goal(rng, g0);
      std::copy(g0, g0 + kJointDims, g);
      std::copy(s, s + kJointDims, start);
      for (int t = 0; t < c_; ++t) {
        if (greedy) {
          for (int j = 0; j < kJointDims; ++j) a[j] = std::clamp(g[j] / kJointStep[j], -1.f, 1.f);
        } else {
          act(s, g, /*noise=*/0.0, rng, a);
        }
        step(s, a, s1);
        hiro::goal_transition(s, g, s1, kJointDims, g);
        std::copy(s1, s1 + kJointDims, s);
      }
      double d2_all = 0, d2_small = 0;
      for (int j = 0; j < kJointDims; ++j) {
        const double d = static_cast<double>(start[j]) + g0[j] - s[j];
        d2_all += d * d;
        if (j >= hiro::kMaskedInputDims) d2_small += d * d;
      }
      all += std::sqrt(d2_all);
      small += std::sqrt(d2_small);
    }
    return {all / segments, small / segments};
  }

 private:
  HiroLearner& learner_;
  int c_;
  hiro::TransitionDims dims_{kJointDims, kJointDims, kJointDims};
  std::vector<std::byte> record_;
  float s_[kJointDims] = {}, g_[kJointDims] = {};
  int t_ = 0;
};

constexpr int kJointInitialSteps = 1000;
constexpr int kJointTrainSteps = 40000;
constexpr double kJointRequiredRatio = 0.15;      // trained distance < this x the untrained one
constexpr double kJointSmallRequiredRatio = 0.6;  // ... and on the small dims alone

// The low level learns hiro_orig-style goals: per-dimension boxes from +-10 to +-0.3, x,y
// masked from its networks, the unweighted intrinsic reward over every goal dim (§6.3). Its
// final in-segment distance falls well below the untrained policy's, over all dims and over
// the small dims alone (whose share of the reward is small).
TEST(HiroLearning, LowLevelReachesPerDimensionGoalsWithXyMasked) {
  const auto t0 = std::chrono::steady_clock::now();
  learner::set_torch_threads(1);
  HiroOptions o = JointRig::options();
  o.hidden = kHidden;
  o.batch_size = kBatch;
  o.replay_capacity = kReplay;
  o.device = "cpu";
  o.seed = kSeed;
  HiroLearner learner(o);
  ASSERT_EQ(learner.low_agent().options().shape.masked_inputs, hiro::kMaskedInputDims);
  JointRig rig(learner);

  const auto untrained = rig.mean_segment_distance(kEvalSegments, kEvalSeed);
  const auto greedy = rig.mean_segment_distance(kEvalSegments, kEvalSeed, /*greedy=*/true);
  Rng rng(kGoalSeed);
  rig.collect(kJointInitialSteps, /*train=*/false, rng);
  rig.collect(kJointTrainSteps, /*train=*/true, rng);
  const auto trained = rig.mean_segment_distance(kEvalSegments, kEvalSeed);

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "per-dimension goals, x,y masked: final in-segment distance, all dims / small dims: untrained %.3f / %.3f, "
      "after %d updates %.3f / %.3f (ratios %.3f / %.3f), greedy %.3f / %.3f; %.1f s\n",
      untrained.first, untrained.second, kJointTrainSteps, trained.first, trained.second,
      trained.first / untrained.first, trained.second / untrained.second, greedy.first, greedy.second, seconds);
  EXPECT_LT(trained.first, kJointRequiredRatio * untrained.first);
  EXPECT_LT(trained.second, kJointSmallRequiredRatio * untrained.second);
}

}  // namespace
}  // namespace ringrl::hiro
