#include "envs/maze/point_env.h"

#include <algorithm>
#include <cmath>

#include <mujoco/mujoco.h>

#include "envs/maze/mjcf.h"
#include "envs/maze/tasks.h"

namespace ringrl::envs::maze {
namespace {

constexpr double kForwardLimit = 1.0;   // |a0|
constexpr double kTurnLimit = 0.25;     // |a1| (radians per step)
constexpr double kForwardGain = 0.2;    // displacement per step at a0 = 1
constexpr double kPositionLimit = 100;  // x, y clipped to +-this
constexpr int kX = 0;
constexpr int kY = 1;
constexpr int kRot = 2;

}  // namespace

EnvSpec PointMazeEnv::make_spec() {
  EnvSpec s;
  s.name = "point-maze";
  s.obs_dim = kPointObsDim;
  s.action_dim = kPointActionDim;
  s.action.low = {static_cast<float>(-kForwardLimit), static_cast<float>(-kTurnLimit)};
  s.action.high = {static_cast<float>(kForwardLimit), static_cast<float>(kTurnLimit)};
  s.episode_length = kEpisodeLength;
  s.frame_skip = kPointFrameSkip;
  s.control_dt = kPointTimestep * kPointFrameSkip;
  s.time_feature_scale = kTimeFeatureScale;
  s.task = point_maze_task();
  return s;
}

PointMazeEnv::PointMazeEnv()
    : MujocoMazeEnv(make_spec(), make_layout(MazeKind::kMaze, kPointScale), shared_model("point-maze", [] {
                      return point_maze_mjcf(make_layout(MazeKind::kMaze, kPointScale));
                    })) {
  const mjModel& m = model();
  if (m.nq != kPointNq || m.nv != kPointNv)
    throw MujocoError("point model has nq " + std::to_string(m.nq) + ", nv " + std::to_string(m.nv) +
                      "; expected 3 / 3");
}

void PointMazeEnv::do_reset(Rng& rng, Span<float> obs) {
  const mjModel& m = model();
  mjData& d = data();
  mj_resetData(&m, &d);
  for (int i = 0; i < kPointNq; ++i) d.qpos[i] = m.qpos0[i] + rng.uniform(-kResetPosNoise, kResetPosNoise);
  for (int i = 0; i < kPointNv; ++i) d.qvel[i] = kResetVelNoise * rng.normal();
  mj_forward(&m, &d);
  write_obs(obs);
}

void PointMazeEnv::do_step(Span<const float> action, Span<float> obs) noexcept {
  const mjModel& m = model();
  mjData& d = data();
  const double forward = std::clamp<double>(action[0], -kForwardLimit, kForwardLimit);
  const double turn = std::clamp<double>(action[1], -kTurnLimit, kTurnLimit);
  // Kinematic move: turn, then advance along the new heading.
  const double old_x = d.qpos[kX];
  const double old_y = d.qpos[kY];
  d.qpos[kRot] += turn;
  const double heading = d.qpos[kRot];
  d.qpos[kX] = std::clamp(old_x + kForwardGain * forward * std::cos(heading), -kPositionLimit, kPositionLimit);
  d.qpos[kY] = std::clamp(old_y + kForwardGain * forward * std::sin(heading), -kPositionLimit, kPositionLimit);
  for (int k = 0; k < kPointFrameSkip; ++k) mj_step(&m, &d);
  // Manual collision: a centre inside a wall cell puts the point back where it was.
  if (layout().in_wall(d.qpos[kX], d.qpos[kY])) {
    d.qpos[kX] = old_x;
    d.qpos[kY] = old_y;
  }
  write_obs(obs);
}

void PointMazeEnv::write_obs(Span<float> obs) const noexcept {
  const mjData& d = data();
  for (int i = 0; i < kPointNq; ++i) obs[static_cast<size_t>(i)] = static_cast<float>(d.qpos[i]);
  for (int i = 0; i < kPointNv; ++i) obs[static_cast<size_t>(kPointNq + i)] = static_cast<float>(d.qvel[i]);
  obs[static_cast<size_t>(kPointObsDim - 1)] = static_cast<float>(t() * kTimeFeatureScale);
}

}  // namespace ringrl::envs::maze
