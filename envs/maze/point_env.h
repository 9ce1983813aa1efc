// PointMaze (spec hiro.md §10.5) on MuJoCo 2.2.2: the AntMaze grid at S = 4 with a point
// robot whose motion is kinematic (the physics step only carries its velocity along).
//
// Step: theta += a1; (x, y) += 0.2 * a0 * (cos theta, sin theta), clipped to +-100; one
// mj_step; if the new centre lies in a wall cell square, the old (x, y) is restored.
// Action (2): a0 in [-1, 1] forward, a1 in [-0.25, 0.25] turn (clipped). Observation (7):
// x, y, theta, x', y', theta', t * 0.001. Reset noise as the ant: U(-0.1, 0.1) on qpos,
// N(0, 0.1^2) on qvel.
//
// Thread rules and lifetime: see mujoco_env.h.
#pragma once

#include "envs/maze/mujoco_env.h"

namespace ringrl::envs::maze {

inline constexpr int kPointObsDim = 7;
inline constexpr int kPointActionDim = 2;

class PointMazeEnv final : public MujocoMazeEnv {
 public:
  PointMazeEnv();

  /// The static spec without building a model.
  static EnvSpec make_spec();

 private:
  void do_reset(Rng& rng, Span<float> obs) override;
  void do_step(Span<const float> action, Span<float> obs) noexcept override;
  void write_obs(Span<float> obs) const noexcept;
};

}  // namespace ringrl::envs::maze
