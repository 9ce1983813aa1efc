// envs/vector_env.h on the kinematic maze: NEXT_STEP autoreset, the episode-seed sequence, the
// same outputs on one thread and on an arena, outputs that outlive close(), one-line refusals.
#include "envs/vector_env.h"

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

#include "common/errors.h"
#include "envs/maze/factory.h"

namespace ringrl::envs {
namespace {

constexpr int kEnvs = 3;
constexpr std::uint64_t kSeed = 17;

VectorEnv make(int threads, int envs = kEnvs) {
  return VectorEnv([] { return maze::make_maze_env("kinematic-maze"); }, envs, threads);
}

std::vector<std::optional<std::uint64_t>> seeds(std::uint64_t base, int n = kEnvs) {
  std::vector<std::optional<std::uint64_t>> s;
  for (int i = 0; i < n; ++i) s.emplace_back(base + static_cast<std::uint64_t>(i));
  return s;
}

std::vector<float> actions(const VectorEnv& v, int step) {
  std::vector<float> a(v.num_envs() * v.action_dim());
  for (std::size_t k = 0; k < a.size(); ++k) a[k] = static_cast<float>(((step * 7 + static_cast<int>(k)) % 11) - 5) / 5.0f;
  return a;
}

TEST(VectorEnv, StepsLikeSingleEnvsAndAutoresetsOnTheNextStep) {
  VectorEnv v = make(1);
  v.reset(seeds(kSeed));
  std::vector<std::unique_ptr<Env>> ref;
  std::vector<std::vector<float>> obs(kEnvs, std::vector<float>(v.obs_dim()));
  for (int i = 0; i < kEnvs; ++i) {
    ref.push_back(maze::make_maze_env("kinematic-maze"));
    ref[i]->reset(kSeed + i, Span<float>(obs[i]));
    EXPECT_EQ(std::memcmp(obs[i].data(), v.obs() + i * v.obs_dim(), v.obs_dim() * sizeof(float)), 0);
  }
  const int length = ref[0]->spec().episode_length;
  for (int step = 0; step < length; ++step) {
    const std::vector<float> a = actions(v, step);
    v.step(a.data());
    for (int i = 0; i < kEnvs; ++i) {
      const StepResult r = ref[i]->step(Span<const float>(a.data() + i * v.action_dim(), v.action_dim()), Span<float>(obs[i]));
      ASSERT_EQ(std::memcmp(obs[i].data(), v.obs() + i * v.obs_dim(), v.obs_dim() * sizeof(float)), 0) << step;
      EXPECT_EQ(v.reward()[i], static_cast<double>(r.reward));
      EXPECT_EQ(v.truncated()[i], r.truncated);
      EXPECT_EQ(v.t()[i], r.info.t);
    }
  }
  for (int i = 0; i < kEnvs; ++i) EXPECT_TRUE(v.truncated()[i]);
  // NEXT_STEP: this step resets (episode 1 of each env's sequence) and ignores the actions.
  const std::vector<float> a = actions(v, 0);
  v.step(a.data());
  for (int i = 0; i < kEnvs; ++i) {
    ref[i]->reset(episode_seed(kSeed + i, 1), Span<float>(obs[i]));
    EXPECT_EQ(std::memcmp(obs[i].data(), v.obs() + i * v.obs_dim(), v.obs_dim() * sizeof(float)), 0);
    EXPECT_EQ(v.reward()[i], 0.0);
    EXPECT_FALSE(v.truncated()[i]);
    EXPECT_FALSE(v.terminated()[i]);
    EXPECT_EQ(v.t()[i], 0);
  }
}

TEST(VectorEnv, OneThreadAndAnArenaGiveTheSameOutputs) {
  VectorEnv one = make(1), two = make(2);
  EXPECT_EQ(two.threads(), 2);
  one.reset(seeds(kSeed));
  two.reset(seeds(kSeed));
  for (int step = 0; step < 40; ++step) {
    const std::vector<float> a = actions(one, step);
    one.step(a.data());
    two.step(a.data());
    ASSERT_EQ(std::memcmp(one.obs(), two.obs(), kEnvs * one.obs_dim() * sizeof(float)), 0) << step;
    ASSERT_EQ(std::memcmp(one.distance(), two.distance(), kEnvs * sizeof(float)), 0) << step;
  }
}

TEST(VectorEnv, ResetWithoutASeedContinuesTheSequenceAndTargetsAreSet) {
  VectorEnv v = make(1, 1);
  EXPECT_THROW(v.reset({std::nullopt}), UsageError);  // never seeded
  v.reset(seeds(kSeed, 1));
  v.reset({std::nullopt});
  std::vector<float> want(v.obs_dim());
  maze::make_maze_env("kinematic-maze")->reset(episode_seed(kSeed, 1), Span<float>(want));
  EXPECT_EQ(std::memcmp(want.data(), v.obs(), v.obs_dim() * sizeof(float)), 0);
  const std::vector<float> target(v.target_dim(), 3.0f);
  v.set_target(0, Span<const float>(target));
  EXPECT_EQ(v.target()[0], 3.0f);
  EXPECT_THROW(v.set_target(1, Span<const float>(target)), UsageError);
  EXPECT_THROW(v.set_target(0, Span<const float>(target.data(), 1)), UsageError);
}

TEST(VectorEnv, OutputsOutliveCloseAndCallsAfterCloseAreRefused) {
  VectorEnv v = make(1);
  v.reset(seeds(kSeed));
  const float first = v.obs()[0];
  v.close();
  EXPECT_TRUE(v.closed());
  EXPECT_EQ(v.obs()[0], first);
  const std::vector<float> a = actions(v, 0);
  EXPECT_THROW(v.step(a.data()), std::runtime_error);
  EXPECT_THROW(v.reset(seeds(kSeed)), std::runtime_error);
}

TEST(VectorEnv, SizesAreValidated) {
  EXPECT_THROW(make(1, 0), UsageError);
  EXPECT_THROW(make(1, VectorEnv::kMaxEnvs + 1), UsageError);
  EXPECT_THROW(make(-1), UsageError);
  EXPECT_EQ(make(8, 2).threads(), 2);  // capped at num_envs
  VectorEnv v = make(1);
  EXPECT_THROW(v.reset(seeds(kSeed, 2)), UsageError);
}

}  // namespace
}  // namespace ringrl::envs
