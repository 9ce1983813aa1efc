// AntMaze / AntPush / AntFall on MuJoCo 2.2.2 (spec §10.1-§10.4, §10.6, §14): the model
// facts, observation and time feature, determinism, walls, the block, the chasm, success at
// the evaluation target, and MuJoCo warning/error reporting. Any MuJoCo warning fails a test
// (MujocoGuardedTest), and every rollout also checks the per-mjData warning counters.
#include "envs/maze/ant_env.h"

#include <mujoco/mujoco.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/errors.h"
#include "envs/maze/factory.h"
#include "envs/maze/mjcf.h"
#include "tests/envs/maze/mujoco_guard.h"

namespace ringrl::envs::maze {
namespace {

using testing::MujocoGuardedTest;

constexpr double kDegree = 3.14159265358979323846 / 180.0;
constexpr int kTorsoBody = 1;
constexpr double kShove = 20.0;  // N, horizontal force on the torso for scripted shoves
// Random shoves change direction every 20 steps. Held against a wall for seconds together
// with random torques, 20 N (2.2 x the ant's weight) can press the torso sphere through
// its whole radius into the soft contact (solimp 0.8); 12 N moves the ant briskly and
// penetrates at most a few centimetres.
constexpr double kRandomShove = 12.0;

const MazeKind kKinds[] = {MazeKind::kMaze, MazeKind::kPush, MazeKind::kFall};

std::string name_of(MazeKind k) { return k == MazeKind::kMaze ? "maze" : k == MazeKind::kPush ? "push" : "fall"; }

// Steps an env; the ant's torso position is read from the observation.
struct AntDriver {
  explicit AntDriver(MazeKind kind, std::uint64_t seed = 3) : env(kind), obs(30), act(8, 0.0f) { env.reset(seed, obs); }
  void step(int n = 1) {
    for (int k = 0; k < n; ++k) last = env.step(act, obs);
  }
  void shove(double fx, double fy) {
    env.data().xfrc_applied[6 * kTorsoBody + 0] = fx;
    env.data().xfrc_applied[6 * kTorsoBody + 1] = fy;
  }
  // Puts the ant upright and at rest with its torso at (x, y, z).
  void place(double x, double y, double z) {
    mjData& d = env.data();
    for (int i = 0; i < kAntNq; ++i) d.qpos[i] = 0.0;
    d.qpos[0] = x;
    d.qpos[1] = y;
    d.qpos[2] = z;
    d.qpos[3] = 1.0;
    for (int i = 0; i < kAntNv; ++i) d.qvel[i] = 0.0;
    mj_forward(&env.model(), &d);
  }
  bool torso_in_wall() const { return env.layout().in_wall(obs[0], obs[1]); }
  AntMazeEnv env;
  std::vector<float> obs;
  std::vector<float> act;
  StepResult last;
};

// Distance from (x, y) to the nearest wall square.
double wall_distance(const Layout& l, double x, double y) {
  double best = 1e9;
  for (const Rect& w : l.wall_rects()) {
    const double dx = std::max({w.x0 - x, 0.0, x - w.x1});
    const double dy = std::max({w.y0 - y, 0.0, y - w.y1});
    best = std::min(best, std::hypot(dx, dy));
  }
  return best;
}

int count_geoms_with_prefix(const mjModel& m, const std::string& prefix) {
  int n = 0;
  for (int g = 0; g < m.ngeom; ++g)
    if (std::string(mj_id2name(&m, mjOBJ_GEOM, g)).rfind(prefix, 0) == 0) ++n;
  return n;
}

class AntModel : public MujocoGuardedTest {};
class AntEnv : public MujocoGuardedTest {};

TEST_F(AntModel, LoadsForEveryLayoutWithTheSpecFacts) {
  for (MazeKind kind : kKinds) {
    SCOPED_TRACE(name_of(kind));
    AntMazeEnv env(kind);
    const mjModel& m = env.model();
    const bool block = kind != MazeKind::kMaze;
    EXPECT_EQ(m.nq, block ? 17 : 15);
    EXPECT_EQ(m.nv, block ? 16 : 14);
    EXPECT_EQ(m.nu, 8);
    EXPECT_EQ(m.opt.timestep, 0.02);
    EXPECT_EQ(m.opt.integrator, mjINT_RK4);
    EXPECT_EQ(env.spec().frame_skip, 5);
    EXPECT_DOUBLE_EQ(env.spec().control_dt, 0.1);
    // Masses: ant total ~0.911, torso sphere ~0.327 (§10.3).
    double ant_mass = 0.0;
    const int block_body = mj_name2id(&m, mjOBJ_BODY, "block");
    for (int b = 1; b < m.nbody; ++b)
      if (b != block_body) ant_mass += m.body_mass[b];
    EXPECT_NEAR(ant_mass, 0.911, 0.0015);
    EXPECT_NEAR(m.body_mass[kTorsoBody], 0.327, 0.0005);
    // Torso start height: 0.75 above the walking surface.
    EXPECT_DOUBLE_EQ(m.qpos0[2], kind == MazeKind::kFall ? 4.75 : 0.75);
    EXPECT_DOUBLE_EQ(m.qpos0[3], 1.0);
    // Joints in qpos order; ranges in radians after the degree compiler setting.
    const char* joints[] = {"hip_1", "ankle_1", "hip_2", "ankle_2", "hip_3", "ankle_3", "hip_4", "ankle_4"};
    const double ankle_lo[] = {30, -70, -70, 30};
    for (int k = 0; k < 8; ++k) {
      const int j = mj_name2id(&m, mjOBJ_JOINT, joints[k]);
      ASSERT_GE(j, 0) << joints[k];
      EXPECT_EQ(m.jnt_qposadr[j], 7 + k);
      EXPECT_EQ(m.jnt_limited[j], 1);
      const int dof = m.jnt_dofadr[j];
      EXPECT_EQ(m.dof_armature[dof], 1.0);
      EXPECT_EQ(m.dof_damping[dof], 1.0);
      const double lo = k % 2 == 0 ? -30 : ankle_lo[k / 2];
      EXPECT_NEAR(m.jnt_range[2 * j], lo * kDegree, 1e-12) << joints[k];
      EXPECT_NEAR(m.jnt_range[2 * j + 1], (lo + (k % 2 == 0 ? 60 : 40)) * kDegree, 1e-12);
    }
    const int root = mj_name2id(&m, mjOBJ_JOINT, "root");
    EXPECT_EQ(m.jnt_type[root], mjJNT_FREE);
    EXPECT_EQ(m.dof_armature[m.jnt_dofadr[root]], 0.0);
    EXPECT_EQ(m.dof_damping[m.jnt_dofadr[root]], 0.0);
    // Actuators: hip_4 first; motors with gear 1 and ctrlrange [-30, 30].
    const char* order[] = {"hip_4", "ankle_4", "hip_1", "ankle_1", "hip_2", "ankle_2", "hip_3", "ankle_3"};
    for (int a = 0; a < 8; ++a) {
      EXPECT_EQ(std::string(mj_id2name(&m, mjOBJ_JOINT, m.actuator_trnid[2 * a])), order[a]);
      EXPECT_EQ(m.actuator_gear[6 * a], 1.0);
      EXPECT_EQ(m.actuator_ctrllimited[a], 1);
      EXPECT_EQ(m.actuator_ctrlrange[2 * a], -30.0);
      EXPECT_EQ(m.actuator_ctrlrange[2 * a + 1], 30.0);
    }
    // Geoms: the ant never collides with itself; contact parameters of §10.3 / §10.1.
    const int torso_geom = mj_name2id(&m, mjOBJ_GEOM, "torso_geom");
    EXPECT_EQ(m.geom_conaffinity[torso_geom], 0);
    EXPECT_EQ(m.geom_contype[torso_geom], 1);
    EXPECT_DOUBLE_EQ(m.geom_size[3 * torso_geom], 0.25);
    EXPECT_DOUBLE_EQ(m.geom_margin[torso_geom], 0.01);
    EXPECT_DOUBLE_EQ(m.geom_friction[3 * torso_geom], 1.0);
    EXPECT_DOUBLE_EQ(m.geom_solimp[mjNIMP * torso_geom], block ? 0.995 : 0.8);
    const int floor = mj_name2id(&m, mjOBJ_GEOM, "floor");
    EXPECT_EQ(m.geom_type[floor], mjGEOM_PLANE);
    EXPECT_DOUBLE_EQ(m.geom_size[3 * floor], 160.0);
    // Maze geometry: one 8 x 8 x 4 wall box per wall cell, platforms when elevated.
    const Layout& l = env.layout();
    EXPECT_EQ(count_geoms_with_prefix(m, "wall_"), static_cast<int>(l.wall_rects().size()));
    const int platforms = kind == MazeKind::kFall ? l.rows() * l.cols() - 2 : 0;
    EXPECT_EQ(count_geoms_with_prefix(m, "platform_"), platforms);
    for (const auto& [i, j] : l.cells_of(Cell::kWall)) {
      const std::string name = "wall_" + std::to_string(i) + "_" + std::to_string(j);
      const int g = mj_name2id(&m, mjOBJ_GEOM, name.c_str());
      ASSERT_GE(g, 0) << name;
      EXPECT_DOUBLE_EQ(m.geom_pos[3 * g], l.cell_x(j));
      EXPECT_DOUBLE_EQ(m.geom_pos[3 * g + 1], l.cell_y(i));
      EXPECT_DOUBLE_EQ(m.geom_pos[3 * g + 2], l.floor_height() + 2.0);
      EXPECT_DOUBLE_EQ(m.geom_size[3 * g], 4.0);
      EXPECT_DOUBLE_EQ(m.geom_size[3 * g + 2], 2.0);
      EXPECT_EQ(m.geom_conaffinity[g], 1);
    }
    // The block (§10.1).
    if (block) {
      ASSERT_GE(block_body, 0);
      const bool falls = kind == MazeKind::kFall;
      EXPECT_DOUBLE_EQ(m.body_mass[block_body], falls ? 0.001 : 0.0002);
      const int bg = mj_name2id(&m, mjOBJ_GEOM, "block_geom");
      EXPECT_NEAR(m.geom_size[3 * bg], falls ? 3.96 : 4.0, 1e-12);
      EXPECT_DOUBLE_EQ(m.geom_size[3 * bg + 2], 2.0);
      EXPECT_DOUBLE_EQ(m.body_pos[3 * block_body + 2], falls ? 6.0 : 2.0);
      const int by = mj_name2id(&m, mjOBJ_JOINT, "block_y");
      ASSERT_GE(by, 0);
      EXPECT_EQ(m.jnt_type[by], mjJNT_SLIDE);
      EXPECT_EQ(m.jnt_limited[by], falls ? 1 : 0);
      EXPECT_EQ(m.jnt_qposadr[by], falls ? 15 : 16);
      EXPECT_EQ(mj_name2id(&m, mjOBJ_JOINT, "block_x") >= 0, !falls);
      const int bz = mj_name2id(&m, mjOBJ_JOINT, "block_z");
      EXPECT_EQ(bz >= 0, falls);
      if (falls) {
        EXPECT_EQ(m.jnt_limited[bz], 1);
        EXPECT_DOUBLE_EQ(m.jnt_range[2 * bz], -4.0);
        EXPECT_DOUBLE_EQ(m.jnt_range[2 * bz + 1], 0.0);
        EXPECT_DOUBLE_EQ(m.jnt_range[2 * by + 1], 8.0);
      }
      EXPECT_EQ(m.dof_armature[m.jnt_dofadr[by]], 0.0);
      EXPECT_EQ(m.dof_damping[m.jnt_dofadr[by]], 0.0);
    }
  }
}

TEST_F(AntModel, OneSharedModelPerKind) {
  AntMazeEnv a(MazeKind::kMaze);
  AntMazeEnv b(MazeKind::kMaze);
  AntMazeEnv c(MazeKind::kPush);
  EXPECT_EQ(&a.model(), &b.model());
  EXPECT_NE(&a.model(), &c.model());
  EXPECT_NE(&a.data(), &b.data());
}

TEST_F(AntEnv, ObservationIsQposQvelAndTime) {
  AntDriver d(MazeKind::kPush);
  const mjData& s = d.env.data();
  const mjModel& m = d.env.model();
  ASSERT_EQ(d.env.spec().obs_dim, 30);
  // Reset noise: |qpos - qpos0| <= 0.1 on the ant, block exactly at qpos0.
  for (int i = 0; i < kAntNq; ++i) EXPECT_LE(std::abs(s.qpos[i] - m.qpos0[i]), 0.1) << i;
  EXPECT_EQ(s.qpos[15], 0.0);
  EXPECT_EQ(s.qpos[16], 0.0);
  EXPECT_EQ(d.obs[29], 0.0f);
  Rng policy(5);
  for (int t = 1; t <= 500; ++t) {
    for (float& a : d.act) a = static_cast<float>(policy.uniform(-30, 30));
    d.step();
    for (int i = 0; i < 15; ++i) ASSERT_EQ(d.obs[i], static_cast<float>(s.qpos[i])) << i;
    for (int i = 0; i < 14; ++i) ASSERT_EQ(d.obs[15 + i], static_cast<float>(s.qvel[i])) << i;
    ASSERT_FLOAT_EQ(d.obs[29], static_cast<float>(0.001 * t));
    ASSERT_EQ(d.last.truncated, t == 500);
    ASSERT_FALSE(d.last.terminated);
    ASSERT_NEAR(s.time, 0.1 * t, 1e-9);  // 5 x 0.02 s per env step
  }
  EXPECT_FLOAT_EQ(d.obs[29], 0.5f);
  // Control was applied in actuator order and clipped to the box.
  d.act.assign(8, 100.0f);
  d.act[2] = -7.0f;
  d.step();
  EXPECT_EQ(s.ctrl[0], 30.0);
  EXPECT_EQ(s.ctrl[2], -7.0);
  EXPECT_EQ(d.env.physics_warnings(), 0);
}

TEST_F(AntEnv, RolloutsAreBitIdenticalPerSeedAndAcrossThreads) {
  const auto run = [](MazeKind kind, std::uint64_t seed) {
    AntMazeEnv env(kind);
    std::vector<float> obs(30), act(8), trace;
    Rng policy(seed * 31 + 1);
    env.reset(seed, obs);
    trace.insert(trace.end(), obs.begin(), obs.end());
    for (int k = 0; k < 150; ++k) {
      for (float& a : act) a = static_cast<float>(policy.uniform(-30, 30));
      env.step(act, obs);
      trace.insert(trace.end(), obs.begin(), obs.end());
    }
    return trace;
  };
  for (MazeKind kind : kKinds) {
    SCOPED_TRACE(name_of(kind));
    const std::vector<float> a = run(kind, 11);
    const std::vector<float> b = run(kind, 11);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
    EXPECT_NE(run(kind, 12), a);
    // Two threads on the shared model give the serial result.
    std::vector<float> t1, t2;
    std::thread th1([&] { t1 = run(kind, 11); });
    std::thread th2([&] { t2 = run(kind, 12); });
    th1.join();
    th2.join();
    EXPECT_EQ(t1, a);
    EXPECT_EQ(t2, run(kind, 12));
  }
}

TEST_F(AntEnv, ResetRestoresTheBlock) {
  AntDriver d(MazeKind::kPush);
  d.shove(0, kShove);
  d.step(40);
  EXPECT_GT(d.env.block_position()[1], 9.0);
  d.shove(0, 0);
  d.env.reset(3, d.obs);
  EXPECT_EQ(d.env.block_position()[0], 0.0);
  EXPECT_EQ(d.env.block_position()[1], 8.0);
  EXPECT_EQ(d.env.data().qvel[15], 0.0);
  EXPECT_EQ(d.env.t(), 0);
}

TEST_F(AntEnv, ScriptedShovesNeverPutTheTorsoInAWall) {
  struct Shove {
    MazeKind kind;
    double fx, fy;
    int axis;     // coordinate that ends at the wall face
    double stop;  // expected torso coordinate: wall face -+ torso radius 0.25
  };
  const Shove shoves[] = {
      {MazeKind::kMaze, -kShove, 0, 0, -3.75},  {MazeKind::kMaze, 0, -kShove, 1, -3.75},
      {MazeKind::kMaze, 0, kShove, 1, 3.75},    {MazeKind::kMaze, kShove, 0, 0, 19.75},
      {MazeKind::kPush, -kShove, 0, 0, -11.75}, {MazeKind::kPush, kShove, 0, 0, 3.75},
      {MazeKind::kPush, 0, -kShove, 1, -3.75},  {MazeKind::kFall, -kShove, 0, 0, -3.75},
      {MazeKind::kFall, kShove, 0, 0, 11.75},   {MazeKind::kFall, 0, -kShove, 1, -3.75},
  };
  for (const Shove& s : shoves) {
    SCOPED_TRACE(name_of(s.kind) + " shove (" + std::to_string(s.fx) + ", " + std::to_string(s.fy) + ")");
    AntDriver d(s.kind);
    d.shove(s.fx, s.fy);
    for (int k = 0; k < 60; ++k) {
      d.step();
      ASSERT_FALSE(d.torso_in_wall()) << "torso at (" << d.obs[0] << ", " << d.obs[1] << ")";
    }
    // It really was pressed against the wall (a leg may stand between torso and wall).
    EXPECT_NEAR(d.obs[s.axis], s.stop, 0.35);
    EXPECT_EQ(d.env.physics_warnings(), 0);
  }
}

TEST_F(AntEnv, RandomRolloutsNeverPutTheTorsoInAWall) {
  for (MazeKind kind : kKinds) {
    SCOPED_TRACE(name_of(kind));
    // Random torques alone (the ant mostly stays near the start).
    AntDriver d(kind, 21);
    Rng policy(8);
    for (int k = 0; k < 300; ++k) {
      for (float& a : d.act) a = static_cast<float>(policy.uniform(-30, 30));
      d.step();
      ASSERT_FALSE(d.torso_in_wall());
    }
    // Random torques plus a random horizontal shove every 20 steps, to reach the walls.
    double closest = 1e9;
    for (int k = 0; k < 400; ++k) {
      if (k % 20 == 0) {
        const double angle = policy.uniform(0, 6.283185307179586);
        d.shove(kRandomShove * std::cos(angle), kRandomShove * std::sin(angle));
      }
      for (float& a : d.act) a = static_cast<float>(policy.uniform(-30, 30));
      d.step();
      ASSERT_FALSE(d.torso_in_wall()) << "torso at (" << d.obs[0] << ", " << d.obs[1] << ")";
      closest = std::min(closest, wall_distance(d.env.layout(), d.obs[0], d.obs[1]));
    }
    EXPECT_LT(closest, 0.5);  // the walls were actually tested
    EXPECT_EQ(d.env.physics_warnings(), 0);
  }
}

TEST_F(AntEnv, PushBlockMovesWhenPushedAndOnlyThen) {
  AntDriver idle(MazeKind::kPush);
  idle.step(50);
  // Untouched, it only settles by the contact margin (0.01) off the wall corners it touches.
  EXPECT_NEAR(idle.env.block_position()[0], 0.0, 0.02);
  EXPECT_NEAR(idle.env.block_position()[1], 8.0, 0.02);

  AntDriver d(MazeKind::kPush);
  d.shove(0, kShove);  // up into the block's bottom face at y = 4
  d.step(30);
  EXPECT_GT(d.env.block_position()[1], 11.0);
  EXPECT_NEAR(d.env.block_position()[0], 0.0, 0.2);
  EXPECT_EQ(d.env.physics_warnings(), 0);
}

TEST_F(AntEnv, FallAntOverTheChasmDropsToTheFloor) {
  AntDriver d(MazeKind::kFall);
  d.place(0, 16, 4.75);
  d.step(30);
  EXPECT_LT(d.obs[2], 1.0);  // torso on the chasm floor (z = 0), ~4 below the platform
  // On the platform it stays up.
  AntDriver up(MazeKind::kFall);
  up.step(30);
  EXPECT_GT(up.obs[2], 4.2);
  EXPECT_EQ(d.env.physics_warnings(), 0);
}

TEST_F(AntEnv, FallBlockInTheChasmBecomesABridge) {
  AntDriver d(MazeKind::kFall);
  // The block's y slide at its limit +8 puts it over the chasm cell (8, 16).
  d.env.data().qpos[15] = 8.0;
  mj_forward(&d.env.model(), &d.env.data());
  d.step(20);
  const auto b = d.env.block_position();
  EXPECT_NEAR(b[2], 2.0, 0.05);  // dropped by 4: top at z = 4, level with the platform
  EXPECT_NEAR(b[2] + 2.0, 4.0, 0.05);
  // An ant placed on the bridge stays at platform height.
  d.place(8, 16, 4.75);
  d.step(30);
  EXPECT_GT(d.obs[2], 4.2);
  EXPECT_EQ(d.env.physics_warnings(), 0);
}

TEST_F(AntEnv, FallAntCanPushTheBlockTowardTheChasm) {
  AntDriver d(MazeKind::kFall);
  d.place(8, 0, 4.75);
  d.shove(0, 10.0);
  d.step(20);
  EXPECT_GT(d.env.block_position()[1], 11.0);
  EXPECT_NEAR(d.env.block_position()[0], 8.0, 1e-12);  // no x slide
  EXPECT_EQ(d.env.physics_warnings(), 0);
}

TEST_F(AntEnv, SuccessFiresAtTheEvaluationTarget) {
  for (MazeKind kind : kKinds) {
    SCOPED_TRACE(name_of(kind));
    AntDriver d(kind);
    const TaskSpec& task = d.env.spec().task;
    const std::vector<float> target = task.primary_target();
    d.env.set_context(target);
    d.step();
    EXPECT_FALSE(d.last.info.success);
    EXPECT_GT(d.last.info.distance, 10.0f);
    d.place(target[0], target[1], d.env.layout().floor_height() + 0.75);
    d.step(5);
    EXPECT_TRUE(d.last.info.success) << "distance " << d.last.info.distance;
    EXPECT_TRUE(task.success(d.obs, target));
    EXPECT_FLOAT_EQ(d.last.reward, -task.distance(d.obs, target));
    // Just outside the 5-unit radius the test fails.
    d.place(target[0] + 5.5, target[1], d.env.layout().floor_height() + 0.75);
    if (!d.env.layout().in_wall(target[0] + 5.5, target[1])) {
      d.step();
      EXPECT_FALSE(d.last.info.success);
    }
  }
}

TEST_F(AntEnv, FactoryBuildsTheAntEnvs) {
  for (const char* name : {"ant-maze", "ant-push", "ant-fall"}) {
    std::unique_ptr<Env> env = make_maze_env(name);
    EXPECT_EQ(env->spec().name, name);
    EXPECT_NE(dynamic_cast<AntMazeEnv*>(env.get()), nullptr);
  }
  MazeEnvOptions multi;
  multi.task_mode = TaskMode::kMulti;
  EXPECT_EQ(make_maze_env("ant-fall", multi)->spec().task.name, "ant_fall_multi");
  MazeEnvOptions compact;
  compact.compact = true;
  EXPECT_THROW(make_maze_env("ant-maze", compact), UsageError);
}

// Reporting: these provoke MuJoCo on purpose, so they are plain TESTs.
TEST(MujocoReporting, BadStateWarningIsReportedAndCounted) {
  install_mujoco_handlers();
  const std::int64_t before = mujoco_warning_count();
  AntDriver d(MazeKind::kMaze);
  d.env.data().qpos[0] = std::nan("");
  d.step();
  EXPECT_GT(d.env.physics_warnings(), 0);
  EXPECT_GT(mujoco_warning_count(), before);
  EXPECT_NE(last_mujoco_message().find("QPOS"), std::string::npos) << last_mujoco_message();
  // A reset clears the per-mjData counters.
  d.env.reset(1, d.obs);
  EXPECT_EQ(d.env.physics_warnings(), 0);
}

TEST(MujocoReporting, EngineErrorsThrow) {
  install_mujoco_handlers();
  EXPECT_THROW(mju_error("provoked by a test"), MujocoError);
  EXPECT_NE(last_mujoco_message().find("provoked"), std::string::npos);
}

TEST(MujocoReporting, CompileErrorsThrowWithTheMessage) {
  try {
    compile_mjcf("<mujoco><worldbody><geom bogus_attribute=\"1\"/></worldbody></mujoco>", "bad.xml");
    FAIL() << "expected a MujocoError";
  } catch (const MujocoError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.xml"), std::string::npos) << e.what();
  }
  EXPECT_THROW(compile_mjcf("<mujoco><nonsense/>", "broken.xml"), MujocoError);
}

}  // namespace
}  // namespace ringrl::envs::maze
