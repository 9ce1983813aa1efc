// PointMaze on MuJoCo 2.2.2 (spec §10.5): model, observation, determinism, the manual
// centre-in-wall collision, and a scripted run to the evaluation target.
#include "envs/maze/point_env.h"

#include <mujoco/mujoco.h>

#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "envs/maze/factory.h"
#include "tests/envs/maze/mujoco_guard.h"

namespace ringrl::envs::maze {
namespace {

using testing::MujocoGuardedTest;

constexpr float kTurn = 0.25f;  // max turn per step (rad)

struct PointDriver {
  explicit PointDriver(std::uint64_t seed = 2) : obs(7), act(2, 0.0f) { env.reset(seed, obs); }
  void go(float forward, float turn, int steps) {
    for (int k = 0; k < steps; ++k) {
      act[0] = forward;
      act[1] = turn;
      last = env.step(act, obs);
      ASSERT_FALSE(env.layout().in_wall(obs[0], obs[1])) << "centre at (" << obs[0] << ", " << obs[1] << ")";
    }
  }
  // Turns by `angle` radians in steps of at most 0.25.
  void turn_by(double angle) {
    while (std::abs(angle) > 1e-12) {
      const double a = std::clamp(angle, -double{kTurn}, double{kTurn});
      go(0.0f, static_cast<float>(a), 1);
      angle -= static_cast<double>(static_cast<float>(a));
    }
  }
  PointMazeEnv env;
  std::vector<float> obs;
  std::vector<float> act;
  StepResult last;
};

class PointMaze : public MujocoGuardedTest {};

TEST_F(PointMaze, ModelAndSpec) {
  PointMazeEnv env;
  const mjModel& m = env.model();
  EXPECT_EQ(m.nq, 3);
  EXPECT_EQ(m.nv, 3);
  EXPECT_EQ(m.opt.timestep, 0.02);
  EXPECT_EQ(m.opt.integrator, mjINT_RK4);
  for (int j = 0; j < m.njnt; ++j) EXPECT_EQ(m.jnt_limited[j], 0);
  const int body = mj_name2id(&m, mjOBJ_GEOM, "point_body");
  EXPECT_DOUBLE_EQ(m.geom_size[3 * body], 0.5);
  EXPECT_DOUBLE_EQ(m.geom_pos[3 * body + 2], 0.5);
  // Walls: 4 x 4 x 2 blocks at the PointMaze scale.
  const int wall = mj_name2id(&m, mjOBJ_GEOM, "wall_0_0");
  ASSERT_GE(wall, 0);
  EXPECT_DOUBLE_EQ(m.geom_size[3 * wall], 2.0);
  EXPECT_DOUBLE_EQ(m.geom_size[3 * wall + 2], 1.0);
  EXPECT_EQ(env.spec().obs_dim, 7);
  EXPECT_EQ(env.spec().action_dim, 2);
  EXPECT_EQ(env.spec().action.high, (std::vector<float>{1.0f, 0.25f}));
  EXPECT_EQ(env.spec().frame_skip, 1);
  EXPECT_EQ(env.spec().task.primary_target(), (std::vector<float>{0, 8}));
}

TEST_F(PointMaze, KinematicStepObservationAndTime) {
  PointDriver d;
  const mjData& s = d.env.data();
  EXPECT_EQ(d.obs[6], 0.0f);
  const double theta0 = s.qpos[2];
  const double x0 = s.qpos[0];
  const double y0 = s.qpos[1];
  d.go(1.0f, 0.1f, 1);
  // One physics step of 0.02 s also carries the (reset-noise) velocity along.
  EXPECT_NEAR(s.qpos[2], theta0 + 0.1, 0.01);
  EXPECT_NEAR(s.qpos[0], x0 + 0.2 * std::cos(theta0 + 0.1), 0.01);
  EXPECT_NEAR(s.qpos[1], y0 + 0.2 * std::sin(theta0 + 0.1), 0.01);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(d.obs[i], static_cast<float>(s.qpos[i]));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(d.obs[3 + i], static_cast<float>(s.qvel[i]));
  EXPECT_FLOAT_EQ(d.obs[6], 0.001f);
  d.go(0, 0, 499);
  EXPECT_TRUE(d.last.truncated);
  EXPECT_FLOAT_EQ(d.obs[6], 0.5f);
  // Actions are clipped to the box: a0 = 5 moves like a0 = 1.
  d.env.reset(9, d.obs);
  const double xa = s.qpos[0];
  d.go(5.0f, 0.0f, 1);
  EXPECT_NEAR(s.qpos[0] - xa, 0.2 * std::cos(s.qpos[2]), 0.01);
  EXPECT_EQ(d.env.physics_warnings(), 0);
}

TEST_F(PointMaze, RolloutsAreBitIdenticalPerSeed) {
  const auto run = [](std::uint64_t seed) {
    PointMazeEnv env;
    std::vector<float> obs(7), act(2), trace;
    Rng policy(seed + 5);
    env.reset(seed, obs);
    for (int k = 0; k < 1000; ++k) {
      act[0] = static_cast<float>(policy.uniform(-1, 1));
      act[1] = static_cast<float>(policy.uniform(-0.25, 0.25));
      env.step(act, obs);
      trace.insert(trace.end(), obs.begin(), obs.end());
    }
    return trace;
  };
  const std::vector<float> a = run(4);
  const std::vector<float> b = run(4);
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  EXPECT_NE(run(5), a);
}

TEST_F(PointMaze, CentreNeverEntersAWall) {
  // Straight along +x: (4, 0) and (8, 0) are free, the wall cell (12, 0) starts at x = 10.
  PointDriver d;
  d.turn_by(-d.env.data().qpos[2]);  // face +x exactly
  d.go(1.0f, 0.0f, 80);
  EXPECT_LT(d.obs[0], 10.0f);
  EXPECT_GT(d.obs[0], 9.7f);  // it got there and was held back
  // Random driving for a while: the centre stays out of every wall square.
  Rng policy(3);
  for (int k = 0; k < 3000; ++k)
    d.go(static_cast<float>(policy.uniform(-1, 1)), static_cast<float>(policy.uniform(-0.25, 0.25)), 1);
  EXPECT_EQ(d.env.physics_warnings(), 0);
}

TEST_F(PointMaze, ScriptedRunReachesTheEvaluationTarget) {
  PointDriver d;
  const std::vector<float> target = d.env.spec().task.primary_target();  // (0, 8)
  d.env.set_context(target);
  const double half_pi = 1.5707963267948966;
  d.turn_by(-d.env.data().qpos[2]);  // heading 0
  d.go(1.0f, 0.0f, 40);              // to x ~ 8
  d.turn_by(half_pi);
  d.go(1.0f, 0.0f, 40);  // up to y ~ 8
  d.turn_by(half_pi);
  d.go(1.0f, 0.0f, 40);  // left to x ~ 0
  EXPECT_TRUE(d.last.info.success) << "distance " << d.last.info.distance;
  EXPECT_LT(d.last.info.distance, 2.0f);
  d.go(0.0f, 0.0f, 500 - d.last.info.t);
  EXPECT_TRUE(d.last.truncated);
  EXPECT_TRUE(d.env.spec().task.success(d.obs, target));
}

TEST_F(PointMaze, FactoryName) {
  std::unique_ptr<Env> env = make_maze_env("point-maze");
  EXPECT_EQ(env->spec().name, "point-maze");
  EXPECT_NE(dynamic_cast<PointMazeEnv*>(env.get()), nullptr);
}

}  // namespace
}  // namespace ringrl::envs::maze
