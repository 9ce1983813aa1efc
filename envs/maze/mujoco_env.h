// Common base of the MuJoCo maze envs (AntMaze/Push/Fall, PointMaze): owns one mjData on the
// kind's shared, immutable mjModel, plus the layout and spec of the kind.
//
// Thread rules: one thread drives an instance; the model is shared read-only with every
// other instance of the kind (see mujoco_model.h). Lifetime: holds the model alive.
// data() is exposed for tests and benchmarks: mutate it only between steps (e.g. apply
// xfrc_applied, or place a body), never concurrently with step().
#pragma once

#include <memory>
#include <string>

#include "envs/env.h"
#include "envs/maze/bare_physics.h"
#include "envs/maze/layout.h"
#include "envs/maze/mujoco_model.h"

namespace ringrl::envs::maze {

/// Reset noise of the MuJoCo envs (§10.4, §10.5).
inline constexpr double kResetPosNoise = 0.1;  // half-width of the uniform qpos noise
inline constexpr double kResetVelNoise = 0.1;  // std of the normal qvel noise

class MujocoMazeEnv : public Env {
 public:
  const EnvSpec& spec() const noexcept override { return spec_; }
  const Layout& layout() const noexcept { return layout_; }

  /// The shared model of this kind.
  const mjModel& model() const noexcept { return *model_; }
  const SharedModel& shared_model_ptr() const noexcept { return model_; }
  /// This instance's physics state (tests and benchmarks; see the file comment).
  mjData& data() noexcept { return *data_; }
  const mjData& data() const noexcept { return *data_; }

  /// Engine warning conditions hit since the last reset (0 in a healthy run).
  int physics_warnings() const noexcept { return data_warnings(*data_); }

 protected:
  MujocoMazeEnv(EnvSpec spec, Layout layout, SharedModel model);

 private:
  EnvSpec spec_;
  Layout layout_;
  SharedModel model_;
  DataPtr data_;
};

/// Bare physics on the model of `env` when it is a MujocoMazeEnv, else nullptr
/// (make_bare_physics() in bare_physics.h is the public entry point).
std::unique_ptr<BarePhysics> make_mujoco_bare_physics(const Env& env);

}  // namespace ringrl::envs::maze
