// The env side of HIRO's goal spaces: each env's full-state goal box (spec hiro.md §6.1) and
// the stand-in's step size through the factory (§13).
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "common/errors.h"
#include "common/hiro/goal_space.h"
#include "envs/maze/factory.h"

namespace ringrl::hiro {
namespace {

using envs::maze::MazeEnvOptions;

TEST(SubgoalBox, AntShapedEnvsHaveTheFifteenDimBox) {
  const std::vector<float> high = {10, 10, 0.5f, 1, 1, 1, 1, 0.5f, 0.3f, 0.5f, 0.3f, 0.5f, 0.3f, 0.5f, 0.3f};
  for (const char* name : {"ant-maze", "ant-push", "ant-fall", "kinematic-maze", "kinematic-push", "kinematic-fall"}) {
    const envs::Box box = envs::maze::maze_subgoal_box(name);
    ASSERT_EQ(box.dim(), 15) << name;
    for (int j = 0; j < 15; ++j) {
      EXPECT_EQ(box.high[j], high[j]) << name << " " << j;
      EXPECT_EQ(box.low[j], -high[j]) << name << " " << j;
    }
  }
}

TEST(SubgoalBox, PointAndCompactEnvsHaveNone) {
  EXPECT_EQ(envs::maze::maze_subgoal_box("point-maze").dim(), 0);
  MazeEnvOptions compact;
  compact.compact = true;
  EXPECT_EQ(envs::maze::maze_subgoal_box("kinematic-maze", compact).dim(), 0);
  const envs::Box none = envs::maze::maze_subgoal_box("point-maze");
  EXPECT_THROW(make_goal_space(GoalSpaceKind::kOrig, 7, none.low, none.high, "point-maze"), UsageError);
  EXPECT_THROW(envs::maze::maze_subgoal_box("no-such-env"), UsageError);
}

TEST(KinematicMaxStep, ReachesTheEnvThroughTheFactory) {
  MazeEnvOptions options;
  options.max_step = 1.25;
  auto env = envs::maze::make_maze_env("kinematic-maze", options);
  std::vector<float> obs(static_cast<std::size_t>(env->spec().obs_dim));
  std::vector<float> act(static_cast<std::size_t>(env->spec().action_dim), 0.0f);
  env->reset(/*seed=*/3, obs);
  const float x0 = obs[0];
  act[0] = 30.0f;  // full command along +x (the start cell is open to the right)
  env->step(act, obs);
  EXPECT_NEAR(obs[0] - x0, 1.25, 1e-5);

  MazeEnvOptions bad;
  bad.max_step = 0.0;
  EXPECT_THROW(envs::maze::make_maze_env("kinematic-maze", bad), UsageError);
  MazeEnvOptions on_mujoco;
  on_mujoco.max_step = 2.0;
  EXPECT_THROW(envs::maze::maze_env_spec("ant-maze", on_mujoco), UsageError);
}

TEST(KinematicMaxStep, DefaultStaysHalfAUnit) {
  EXPECT_EQ(MazeEnvOptions{}.max_step, 0.5);
  auto env = envs::maze::make_maze_env("kinematic-maze");
  std::vector<float> obs(static_cast<std::size_t>(env->spec().obs_dim));
  std::vector<float> act(static_cast<std::size_t>(env->spec().action_dim), 0.0f);
  env->reset(/*seed=*/3, obs);
  const float x0 = obs[0];
  act[0] = 30.0f;
  env->step(act, obs);
  EXPECT_NEAR(obs[0] - x0, 0.5, 1e-5);
}

}  // namespace
}  // namespace ringrl::hiro
