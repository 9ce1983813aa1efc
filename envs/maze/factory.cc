#include "envs/maze/factory.h"

#include "common/errors.h"
#include "envs/maze/bare_physics.h"
#include "envs/maze/kinematic_env.h"

#ifdef RINGRL_HAVE_MUJOCO
#include "envs/maze/ant_env.h"
#include "envs/maze/mujoco_env.h"
#include "envs/maze/point_env.h"
#endif

namespace ringrl::envs::maze {

namespace {

KinematicOptions kinematic_options(const MazeEnvInfo& info, const MazeEnvOptions& options) {
  return KinematicOptions()
      .maze(info.maze)
      .scale(info.scale)
      .ant_shaped(!options.compact)
      .observe_block(options.observe_block)
      .task_mode(options.task_mode)
      .max_step(options.max_step);
}

void check_mujoco_options(const MazeEnvInfo& info, const MazeEnvOptions& options) {
  if (options.compact || options.observe_block)
    throw UsageError("env " + info.name + ": compact and observe_block apply to the kinematic envs only");
  if (options.max_step != kDefaultKinematicMaxStep)
    throw UsageError("env " + info.name + ": max_step applies to the kinematic envs only, got " +
                     std::to_string(options.max_step));
}

// Half-ranges of the §6.1 full-state goal box, per block of obs[0:15].
constexpr float kGoalRangeXy = 10.0f;    // dims 0, 1: dx, dy
constexpr float kGoalRangeZ = 0.5f;      // dim 2: dz
constexpr float kGoalRangeQuat = 1.0f;   // dims 3-6: quaternion w, x, y, z
constexpr float kGoalRangeHip = 0.5f;    // dims 7, 9, 11, 13: hip angles (rad)
constexpr float kGoalRangeAnkle = 0.3f;  // dims 8, 10, 12, 14: ankle angles (rad)
constexpr int kFirstJointDim = 7;        // obs index of hip_1

}  // namespace

const std::vector<MazeEnvInfo>& maze_env_catalog() {
  static const std::vector<MazeEnvInfo> catalog = {
      {"ant-maze", "MuJoCo ant, U-shaped corridor, S=8; eval target (0,16)", true, MazeKind::kMaze, kAntScale},
      {"ant-push", "MuJoCo ant, push the block aside, S=8; eval target (0,19)", true, MazeKind::kPush, kAntScale},
      {"ant-fall", "MuJoCo ant, push the block into the chasm, S=8; eval target (0,27,4.5)", true, MazeKind::kFall,
       kAntScale},
      {"point-maze", "MuJoCo point, U-shaped corridor, S=4; eval target (0,8)", true, MazeKind::kMaze, kPointScale},
      {"kinematic-maze", "kinematic stand-in of ant-maze (no physics), ant-shaped obs/action", false, MazeKind::kMaze,
       kAntScale},
      {"kinematic-push", "kinematic stand-in of ant-push (no physics), ant-shaped obs/action", false, MazeKind::kPush,
       kAntScale},
      {"kinematic-fall", "kinematic stand-in of ant-fall (no physics), ant-shaped obs/action", false, MazeKind::kFall,
       kAntScale},
  };
  return catalog;
}

const MazeEnvInfo& maze_env_info(const std::string& name) {
  std::string names;
  for (const MazeEnvInfo& info : maze_env_catalog()) {
    if (info.name == name) return info;
    names += (names.empty() ? "" : ", ") + info.name;
  }
  throw UsageError("unknown env '" + name + "' (expected one of: " + names + ")");
}

Layout maze_env_layout(const std::string& name) {
  const MazeEnvInfo& info = maze_env_info(name);
  return make_layout(info.maze, info.scale);
}

EnvSpec maze_env_spec(const std::string& name, const MazeEnvOptions& options) {
  const MazeEnvInfo& info = maze_env_info(name);
  if (!info.mujoco) return KinematicMazeEnv::make_spec(kinematic_options(info, options), name);
  check_mujoco_options(info, options);
#ifdef RINGRL_HAVE_MUJOCO
  if (info.scale == kPointScale) return PointMazeEnv::make_spec();
  return AntMazeEnv::make_spec(info.maze, options.task_mode);
#else
  throw UsageError("env " + name + " needs MuJoCo, and this build has none");
#endif
}

Box maze_subgoal_box(const std::string& name, const MazeEnvOptions& options) {
  const MazeEnvInfo& info = maze_env_info(name);
  const bool ant_shaped = info.mujoco ? info.scale == kAntScale : !options.compact;
  if (info.mujoco)
    check_mujoco_options(info, options);
  else
    kinematic_options(info, options).validate();
  Box box;
  if (!ant_shaped) return box;
  box.high.resize(kFullStateGoalDim);
  for (int j = 0; j < kFullStateGoalDim; ++j) {
    float r = kGoalRangeQuat;
    if (j < 2)
      r = kGoalRangeXy;
    else if (j == 2)
      r = kGoalRangeZ;
    else if (j >= kFirstJointDim)
      r = (j - kFirstJointDim) % 2 == 0 ? kGoalRangeHip : kGoalRangeAnkle;
    box.high[static_cast<std::size_t>(j)] = r;
  }
  box.low.resize(box.high.size());
  for (std::size_t j = 0; j < box.high.size(); ++j) box.low[j] = -box.high[j];
  return box;
}

std::unique_ptr<Env> make_maze_env(const std::string& name, const MazeEnvOptions& options) {
  const MazeEnvInfo& info = maze_env_info(name);
  if (!info.mujoco) return std::make_unique<KinematicMazeEnv>(kinematic_options(info, options), name);
  check_mujoco_options(info, options);
#ifdef RINGRL_HAVE_MUJOCO
  if (info.scale == kPointScale) return std::make_unique<PointMazeEnv>();
  return std::make_unique<AntMazeEnv>(info.maze, options.task_mode);
#else
  throw UsageError("env " + name + " needs MuJoCo, and this build has none");
#endif
}

std::unique_ptr<BarePhysics> make_bare_physics(const Env& env) {
#ifdef RINGRL_HAVE_MUJOCO
  return make_mujoco_bare_physics(env);
#else
  (void)env;
  return nullptr;
#endif
}

bool have_mujoco() noexcept {
#ifdef RINGRL_HAVE_MUJOCO
  return true;
#else
  return false;
#endif
}

}  // namespace ringrl::envs::maze
