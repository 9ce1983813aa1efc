// The maze env factory: names, descriptions and construction of every maze env.
//
//   ant-maze, ant-push, ant-fall   MuJoCo ant (§10.1-§10.4), obs 30, action 8
//   point-maze                     MuJoCo point (§10.5), obs 7, action 2
//   kinematic-maze, -push, -fall   kinematic stand-in (§13), ant-shaped: obs 30, action 8
//
// Thread-safe: any thread may call these; each call returns a new, independent instance
// that shares its kind's immutable model with the others.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "envs/env.h"
#include "envs/maze/kinematic_env.h"
#include "envs/maze/layout.h"
#include "envs/maze/tasks.h"

namespace ringrl::envs::maze {

/// Choices that apply to several env kinds.
struct MazeEnvOptions {
  TaskMode task_mode = TaskMode::kSingle;      // Push/Fall: fixed (paper) or uniform targets
  bool compact = false;                        // kinematic: compact obs and 2-D action
  bool observe_block = false;                  // kinematic Push/Fall: block centre in the obs
  double max_step = kDefaultKinematicMaxStep;  // kinematic: displacement per step at full
                                               // command (world units, > 0)
};

/// What a name stands for, without building the env (no MuJoCo model is compiled).
struct MazeEnvInfo {
  std::string name;
  std::string description;
  bool mujoco = false;  // needs MuJoCo physics
  MazeKind maze = MazeKind::kMaze;
  double scale = kAntScale;
};

/// Every env name, in a fixed order.
const std::vector<MazeEnvInfo>& maze_env_catalog();

/// The catalogue entry of `name`. Throws UsageError listing the valid names.
const MazeEnvInfo& maze_env_info(const std::string& name);

/// The layout of `name` (as the env builds it).
Layout maze_env_layout(const std::string& name);

/// The spec of `name` with `options`, without building the env.
EnvSpec maze_env_spec(const std::string& name, const MazeEnvOptions& options = {});

/// Length of the full-state goal space: the ant's qpos, obs[0:15] (spec §6.1).
inline constexpr int kFullStateGoalDim = 15;

/// The full-state goal box of `name` (spec §6.1, the hiro_orig box): per-dimension bounds on
/// obs[0:15] = (x, y, z, quaternion w x y z, hip/ankle angles) for envs whose observation
/// starts with the ant's qpos: the ant envs and the ant-shaped kinematic envs. An empty Box
/// (dim() == 0) for point-maze and the compact kinematic envs, which only have the x,y goal
/// space. Throws UsageError like maze_env_spec().
Box maze_subgoal_box(const std::string& name, const MazeEnvOptions& options = {});

/// A new env. Throws UsageError for an unknown name or options that do not apply, and
/// MujocoError when a model fails to compile (or MuJoCo is not built in).
std::unique_ptr<Env> make_maze_env(const std::string& name, const MazeEnvOptions& options = {});

/// True when this build has the MuJoCo envs.
bool have_mujoco() noexcept;

}  // namespace ringrl::envs::maze
