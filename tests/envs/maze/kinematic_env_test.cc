// The kinematic stand-in (spec §13): shapes, time feature, determinism, walls, the push and
// fall rules, and the success test at the evaluation target.
#include "envs/maze/kinematic_env.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "common/errors.h"
#include "envs/maze/factory.h"

namespace ringrl::envs::maze {
namespace {

constexpr float kFull = 30.0f;  // full command in ant-shaped action units
constexpr double kTol = 1e-9;

// Drives an env with fixed ant-shaped commands; keeps the last observation and result.
struct Driver {
  explicit Driver(KinematicOptions o = KinematicOptions(), std::uint64_t seed = 0)
      : env(o), obs(static_cast<size_t>(env.spec().obs_dim)), act(static_cast<size_t>(env.spec().action_dim), 0.0f) {
    env.reset(seed, obs);
  }
  void go(float cx, float cy, int steps) {
    for (int k = 0; k < steps; ++k) {
      act[0] = cx;
      act[1] = cy;
      last = env.step(act, obs);
      check_no_overlap();
    }
  }
  // The footprint never overlaps a wall square (touching is fine).
  void check_no_overlap() const {
    const double r = env.options().radius();
    for (const Rect& w : env.layout().wall_rects()) {
      const bool overlap = env.x() - r < w.x1 - kTol && env.x() + r > w.x0 + kTol && env.y() - r < w.y1 - kTol &&
                           env.y() + r > w.y0 + kTol;
      ASSERT_FALSE(overlap) << "agent at (" << env.x() << ", " << env.y() << ") in wall (" << w.cx() << ", " << w.cy()
                            << ")";
    }
  }
  KinematicMazeEnv env;
  std::vector<float> obs;
  std::vector<float> act;
  StepResult last;
};

KinematicOptions push() { return KinematicOptions().maze(MazeKind::kPush); }
KinematicOptions fall() { return KinematicOptions().maze(MazeKind::kFall); }

TEST(KinematicMaze, ShapesOfEveryVariant) {
  EXPECT_EQ(KinematicMazeEnv::make_spec(KinematicOptions(), "k").obs_dim, 30);
  EXPECT_EQ(KinematicMazeEnv::make_spec(KinematicOptions(), "k").action_dim, 8);
  EXPECT_EQ(KinematicMazeEnv::make_spec(KinematicOptions().ant_shaped(false), "k").obs_dim, 5);
  EXPECT_EQ(KinematicMazeEnv::make_spec(KinematicOptions().ant_shaped(false), "k").action_dim, 2);
  EXPECT_EQ(KinematicMazeEnv::make_spec(fall().ant_shaped(false), "k").obs_dim, 7);
  EXPECT_EQ(KinematicMazeEnv::make_spec(push().observe_block(true), "k").obs_dim, 33);
  EXPECT_EQ(KinematicMazeEnv::make_spec(push().ant_shaped(false).observe_block(true), "k").obs_dim, 7);
  EXPECT_EQ(KinematicMazeEnv::make_spec(fall(), "k").task.context_dim(), 3);
  EXPECT_THROW(KinematicMazeEnv(KinematicOptions().observe_block(true)), UsageError);
  EXPECT_THROW(KinematicMazeEnv(push().scale(4)), UsageError);
  EXPECT_THROW(KinematicMazeEnv(KinematicOptions().radius(0)), UsageError);
  EXPECT_THROW(KinematicMazeEnv(KinematicOptions().max_step(-1)), UsageError);
}

TEST(KinematicMaze, ObservationLayoutAndTimeFeature) {
  Driver d;
  EXPECT_EQ(d.obs[29], 0.0f);
  EXPECT_EQ(d.obs[3], 1.0f);               // identity quaternion w
  EXPECT_NEAR(d.obs[0], 0.0, 0.1 + 1e-6);  // reset noise U(-0.1, 0.1)
  for (int t = 1; t <= 500; ++t) {
    d.go(kFull, 0, 1);
    ASSERT_FLOAT_EQ(d.obs[29], static_cast<float>(t * 0.001)) << t;
    ASSERT_EQ(d.last.info.t, t);
    ASSERT_EQ(d.last.truncated, t == 500) << t;
    ASSERT_FALSE(d.last.terminated);
  }
  EXPECT_FLOAT_EQ(d.obs[29], 0.5f);
  EXPECT_EQ(static_cast<float>(d.env.x()), d.obs[0]);
  EXPECT_EQ(static_cast<float>(d.env.y()), d.obs[1]);
  EXPECT_FLOAT_EQ(d.obs[2], 0.5f);

  // Velocity = displacement / 0.1 s; moving freely at full command: 0.5 / 0.1 = 5.
  Driver v;
  v.go(kFull, 0, 1);
  EXPECT_NEAR(v.obs[15], 5.0, 1e-5);
  EXPECT_NEAR(v.obs[16], 0.0, 1e-6);
  // Compact: x, y, x', y', t.
  Driver c(KinematicOptions().ant_shaped(false));
  c.go(1.0f, 0, 1);
  EXPECT_NEAR(c.obs[2], 5.0, 1e-5);
  EXPECT_FLOAT_EQ(c.obs[4], 0.001f);
}

TEST(KinematicMaze, RolloutsAreBitIdenticalPerSeed) {
  const auto run = [](std::uint64_t seed, KinematicOptions o) {
    KinematicMazeEnv env(o);
    std::vector<float> obs(static_cast<size_t>(env.spec().obs_dim));
    std::vector<float> act(static_cast<size_t>(env.spec().action_dim));
    std::vector<float> trace;
    Rng policy(seed + 99);
    env.reset(seed, obs);
    trace.insert(trace.end(), obs.begin(), obs.end());
    for (int k = 0; k < 2000; ++k) {
      for (float& a : act) a = static_cast<float>(policy.uniform(-30, 30));
      const StepResult r = env.step(act, obs);
      trace.insert(trace.end(), obs.begin(), obs.end());
      trace.push_back(r.reward);
      if (r.done()) env.reset(seed + 1000 + k, obs);
    }
    return trace;
  };
  for (const KinematicOptions& o : {KinematicOptions(), push(), fall()}) {
    const std::vector<float> a = run(7, o);
    const std::vector<float> b = run(7, o);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
    EXPECT_NE(run(8, o), a);
  }
}

TEST(KinematicMaze, ResetDrawsTheTrainingContext) {
  KinematicMazeEnv env;
  std::vector<float> obs(30);
  env.reset(1, obs);
  const std::vector<float> g1(env.context().begin(), env.context().end());
  env.reset(2, obs);
  const std::vector<float> g2(env.context().begin(), env.context().end());
  EXPECT_NE(g1, g2);
  EXPECT_TRUE(env.spec().task.train_sampler.contains(g1));
  env.reset(1, obs);
  EXPECT_EQ(std::vector<float>(env.context().begin(), env.context().end()), g1);
  const std::vector<float> target = env.spec().task.primary_target();
  env.set_context(target);
  EXPECT_EQ(std::vector<float>(env.context().begin(), env.context().end()), target);
}

TEST(KinematicMaze, WallsStopTheAgentExactly) {
  Driver d;
  d.go(-kFull, 0, 20);  // wall cell (-8, 0): face at x = -4
  EXPECT_NEAR(d.env.x(), -4 + 0.5, kTol);
  d.go(0, -kFull, 20);  // wall (0, -8): face at y = -4
  EXPECT_NEAR(d.env.y(), -4 + 0.5, kTol);
  d.go(0, kFull, 40);  // wall (0, 8): face at y = 4
  EXPECT_NEAR(d.env.y(), 4 - 0.5, kTol);
  // Sliding along a wall: x moves while y stays against it.
  d.go(kFull, kFull, 10);
  EXPECT_NEAR(d.env.y(), 3.5, kTol);
  EXPECT_NEAR(d.env.x(), -3.5 + 5.0, kTol);
}

TEST(KinematicMaze, NoTunnellingAtLargeSteps) {
  // A step of 20 units is longer than a cell (8): the sweep still stops at the first wall.
  Driver d(KinematicOptions().max_step(20.0));
  d.go(0, kFull, 1);
  EXPECT_NEAR(d.env.y(), 3.5, kTol);
  d.go(kFull, 0, 1);  // (8, 0), (16, 0) free; wall (24, 0) face at x = 20
  EXPECT_NEAR(d.env.x(), 19.5, kTol);
}

TEST(KinematicMaze, RandomRolloutsNeverEnterWalls) {
  for (const KinematicOptions& base : {KinematicOptions(), push(), fall()}) {
    for (double step : {0.5, 3.0, 11.0}) {
      KinematicOptions o = base;
      o.max_step(step);
      Driver d(o, 3);
      Rng policy(11);
      for (int k = 0; k < 5000; ++k) {
        d.go(static_cast<float>(policy.uniform(-30, 30)), static_cast<float>(policy.uniform(-30, 30)), 1);
        ASSERT_FALSE(d.env.layout().in_wall(d.env.x(), d.env.y()));
        if (d.env.layout().has_block()) {
          const auto b = d.env.block_position();
          // The block never overlaps a wall either.
          const double h = 0.5 * d.env.layout().scale();
          for (const Rect& w : d.env.layout().wall_rects())
            ASSERT_FALSE(b[0] - h < w.x1 - kTol && b[0] + h > w.x0 + kTol && b[1] - h < w.y1 - kTol &&
                         b[1] + h > w.y0 + kTol);
        }
        if (d.last.done()) d.env.reset(static_cast<std::uint64_t>(k), d.obs);
      }
    }
  }
}

TEST(KinematicMaze, ScriptedMazeSolutionSucceedsAtTheEvalTarget) {
  Driver d;
  const std::vector<float> target = d.env.spec().task.primary_target();  // (0, 16)
  d.env.set_context(target);
  EXPECT_FALSE(d.env.spec().task.success(d.obs, target));
  d.go(kFull, 0, 40);  // to the end of the lower corridor: x = 16 + 4 - 0.5
  EXPECT_NEAR(d.env.x(), 19.5, kTol);
  d.go(-kFull, 0, 7);  // back to x = 16
  d.go(0, kFull, 40);  // up the right arm to the top corridor: y = 20 - 0.5
  EXPECT_NEAR(d.env.y(), 19.5, kTol);
  d.go(-kFull, 0, 40);  // left along the top corridor: x = -4 + 0.5
  EXPECT_NEAR(d.env.x(), -3.5, kTol);
  d.go(0, -kFull, 7);
  EXPECT_TRUE(d.last.info.success);
  EXPECT_LT(d.last.info.distance, 5.0f);
  EXPECT_FLOAT_EQ(d.last.reward, -d.last.info.distance);
  // Hold still to the end of the episode: success is judged on the final step.
  d.go(0, 0, 500 - d.last.info.t);
  EXPECT_TRUE(d.last.truncated);
  EXPECT_TRUE(d.env.spec().task.success(d.obs, target));
}

TEST(KinematicMaze, PushMovesTheBlockBySameDisplacement) {
  Driver d(push());
  // Agent top face reaches the block's bottom face (y = 4) at y = 3.5; every further step
  // moves agent and block by the same 0.5.
  d.go(0, kFull, 6);
  EXPECT_NEAR(d.env.block_position()[1], 8.0, kTol);  // not touched yet
  const double y0 = d.env.y();
  for (int k = 0; k < 10; ++k) {
    d.go(0, kFull, 1);
    ASSERT_NEAR(d.env.block_position()[1] - 8.0, std::max(0.0, d.env.y() - 3.5), kTol);
  }
  EXPECT_NEAR(d.env.y(), y0 + 5.0, kTol);  // the block did not slow the agent
  // Until the block meets the wall at (0, 24): block top at 20, block y = 16; agent 11.5.
  d.go(0, kFull, 30);
  EXPECT_NEAR(d.env.block_position()[1], 16.0, kTol);
  EXPECT_NEAR(d.env.y(), 11.5, kTol);
  EXPECT_NEAR(d.env.block_position()[0], 0.0, kTol);
}

TEST(KinematicMaze, ScriptedPushSolutionSucceeds) {
  Driver d(push());
  const std::vector<float> target = d.env.spec().task.primary_target();  // (0, 19)
  d.env.set_context(target);
  d.go(-kFull, 0, 16);  // left 8 units to (-8, 0)
  d.go(0, kFull, 30);   // up into (-8, 8), against the wall (-8, 16) whose face is y = 12
  EXPECT_NEAR(d.env.y(), 11.5, kTol);
  d.go(0, -kFull, 7);  // down to y = 8
  // Push the block right into (8, 8) until it meets the wall (16, 8): block x = 8.
  d.go(kFull, 0, 40);
  EXPECT_NEAR(d.env.block_position()[0], 8.0, kTol);
  EXPECT_NEAR(d.env.block_position()[1], 8.0, kTol);
  EXPECT_NEAR(d.env.x(), 3.5, kTol);  // stopped: the block is against the wall
  d.go(kFull, 0, 5);
  EXPECT_NEAR(d.env.x(), 3.5, kTol);
  d.go(0, kFull, 30);  // up into (0, 16): wall above at y = 20
  EXPECT_NEAR(d.env.y(), 19.5, kTol);
  d.go(-kFull, 0, 7);
  EXPECT_TRUE(d.last.info.success);
  EXPECT_LT(d.last.info.distance, 1.0f);
}

TEST(KinematicMaze, ObservedBlockFollowsThePush) {
  Driver d(push().observe_block(true));
  ASSERT_EQ(d.obs.size(), 33u);
  EXPECT_FLOAT_EQ(d.obs[29], 0.0f);  // block x
  EXPECT_FLOAT_EQ(d.obs[30], 8.0f);  // block y
  EXPECT_FLOAT_EQ(d.obs[31], 2.0f);  // block centre z
  d.go(0, kFull, 17);
  EXPECT_FLOAT_EQ(d.obs[30], static_cast<float>(d.env.block_position()[1]));
  EXPECT_GT(d.obs[30], 12.0f);
  EXPECT_FLOAT_EQ(d.obs[32], 0.017f);  // time feature stays last
}

TEST(KinematicMaze, FallAgentDropsIntoChasmAndStaysThere) {
  Driver d(fall());
  EXPECT_FLOAT_EQ(d.obs[2], 4.5f);
  d.go(0, kFull, 23);  // (0, 8) is free, (0, 16) is chasm starting at y = 12
  EXPECT_FALSE(d.env.fallen());
  EXPECT_FLOAT_EQ(d.obs[2], 4.5f);
  d.go(0, kFull, 7);
  EXPECT_TRUE(d.env.fallen());
  EXPECT_FLOAT_EQ(d.obs[2], 0.5f);
  EXPECT_GE(d.env.y(), 12.5 - kTol);
  // It cannot climb back out, in any direction.
  d.go(0, -kFull, 30);
  EXPECT_NEAR(d.env.y(), 12.5, kTol);
  d.go(-kFull, 0, 30);
  EXPECT_NEAR(d.env.x(), -3.5, kTol);
  d.go(0, kFull, 30);
  EXPECT_NEAR(d.env.y(), 19.5, kTol);
  d.go(kFull, 0, 40);  // the second chasm cell is open pit too: x up to 12 - 0.5
  EXPECT_NEAR(d.env.x(), 11.5, kTol);
  EXPECT_FLOAT_EQ(d.obs[2], 0.5f);
  // 3-D task distance: below the target by 4.
  const std::vector<float> target = d.env.spec().task.primary_target();
  EXPECT_FALSE(d.env.spec().task.success(d.obs, target));
}

TEST(KinematicMaze, FallBlockPushedIntoChasmBecomesABridge) {
  Driver d(fall());
  const std::vector<float> target = d.env.spec().task.primary_target();  // (0, 27, 4.5)
  d.env.set_context(target);
  d.go(kFull, 0, 16);  // right 8 units to (8, 0)
  // The block slides only in y: pushing it sideways from (0, 8) would not move it; here we
  // push it up from below. It drops once its centre reaches the chasm cell centre (8, 16).
  d.go(0, kFull, 8);
  EXPECT_FALSE(d.env.block_dropped());
  d.go(0, kFull, 16);
  ASSERT_TRUE(d.env.block_dropped());
  EXPECT_NEAR(d.env.block_position()[1], 16.0, kTol);
  EXPECT_NEAR(d.env.block_position()[2], 2.0, kTol);  // top at z = 4, level with the platform
  EXPECT_FALSE(d.env.fallen());
  // Across the bridge to the top row, then left to the target.
  d.go(0, kFull, 40);
  EXPECT_FALSE(d.env.fallen());
  EXPECT_NEAR(d.env.y(), 27.5, kTol);  // wall row at y = 28
  EXPECT_FLOAT_EQ(d.obs[2], 4.5f);
  d.go(-kFull, 0, 16);
  EXPECT_TRUE(d.last.info.success);
  EXPECT_LT(d.last.info.distance, 1.0f);
}

TEST(KinematicMaze, FallBlockDoesNotSlideSideways) {
  Driver d(fall());
  d.go(0, kFull, 16);  // up 8 units into (0, 8), short of the chasm edge at y = 12
  const double y = d.env.y();
  ASSERT_GT(y, 4.5);
  ASSERT_LT(y, 11.5);
  d.go(kFull, 0, 20);  // block left face at x = 4
  EXPECT_NEAR(d.env.x(), 3.5, kTol);
  EXPECT_NEAR(d.env.block_position()[0], 8.0, kTol);
  EXPECT_NEAR(d.env.block_position()[1], 8.0, kTol);
}

TEST(KinematicMaze, FactoryNamesBuildTheStandIns) {
  for (const char* name : {"kinematic-maze", "kinematic-push", "kinematic-fall"}) {
    std::unique_ptr<Env> env = make_maze_env(name);
    EXPECT_EQ(env->spec().name, name);
    EXPECT_EQ(env->spec().obs_dim, 30);
    EXPECT_EQ(env->spec().action_dim, 8);
    EXPECT_EQ(env->spec().episode_length, 500);
  }
  MazeEnvOptions compact;
  compact.compact = true;
  EXPECT_EQ(make_maze_env("kinematic-maze", compact)->spec().obs_dim, 5);
  EXPECT_THROW(make_maze_env("kinematic-nope"), UsageError);
}

}  // namespace
}  // namespace ringrl::envs::maze
