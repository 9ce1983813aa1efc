// AntMaze, AntPush and AntFall (spec hiro.md §10.1-§10.4, §10.6) on MuJoCo 2.2.2.
//
// Observation (30 floats): torso x, y, z; quaternion w, x, y, z; 8 hinge angles in qpos order
// (hip_1, ankle_1, ..., hip_4, ankle_4); torso linear velocity (world) and angular velocity
// (body); 8 hinge velocities; time feature t * 0.001. Action: 8 motor torques in [-30, 30],
// actuator order hip_4, ankle_4, hip_1, ankle_1, hip_2, ankle_2, hip_3, ankle_3.
// Step = 5 x mj_step of 0.02 s (RK4). Reset noise: U(-0.1, 0.1) on the ant's qpos,
// N(0, 0.1^2) on its qvel; the block is restored. Never terminates; 500-step episodes.
//
// Thread rules and lifetime: see mujoco_env.h (one mjData per instance, shared model).
#pragma once

#include <array>

#include "envs/maze/mujoco_env.h"
#include "envs/maze/tasks.h"

namespace ringrl::envs::maze {

inline constexpr int kAntObsDim = 30;

class AntMazeEnv final : public MujocoMazeEnv {
 public:
  /// `kind` selects Maze, Push or Fall; `mode` the Push/Fall training target.
  explicit AntMazeEnv(MazeKind kind, TaskMode mode = TaskMode::kSingle);

  /// Block centre (x, y, z) in world coordinates; only for Push and Fall.
  std::array<double, 3> block_position() const noexcept;
  /// True for Push and Fall (their block moves).
  bool has_block() const noexcept { return block_x_adr_ >= 0 || block_y_adr_ >= 0 || block_z_adr_ >= 0; }

  /// The static spec of a kind without building a model.
  static EnvSpec make_spec(MazeKind kind, TaskMode mode);

 private:
  void do_reset(Rng& rng, Span<float> obs) override;
  void do_step(Span<const float> action, Span<float> obs) noexcept override;
  void write_obs(Span<float> obs) const noexcept;

  // qpos addresses of the block slides (-1 when absent).
  int block_x_adr_ = -1;
  int block_y_adr_ = -1;
  int block_z_adr_ = -1;
  std::array<double, 3> block_origin_{};  // block body position in qpos0
};

}  // namespace ringrl::envs::maze
