#include "envs/maze/ant_env.h"

#include <algorithm>
#include <string>

#include <mujoco/mujoco.h>

#include "common/errors.h"
#include "envs/maze/mjcf.h"

namespace ringrl::envs::maze {
namespace {

constexpr double kAntControlDt = kAntTimestep * kAntFrameSkip;  // 0.1 s per env step
constexpr int kQposEnd = kAntNq;                                // obs[0:15] = qpos[0:15]
constexpr int kQvelBegin = kAntNq;                              // obs[15:29] = qvel[0:14]

std::string kind_name(MazeKind kind) {
  switch (kind) {
    case MazeKind::kMaze:
      return "ant-maze";
    case MazeKind::kPush:
      return "ant-push";
    case MazeKind::kFall:
      return "ant-fall";
  }
  throw UsageError("unknown ant maze kind");
}

// qpos address of the named joint, or -1 when the model has no such joint.
int qpos_adr(const mjModel& m, const char* joint) {
  const int id = mj_name2id(&m, mjOBJ_JOINT, joint);
  return id < 0 ? -1 : m.jnt_qposadr[id];
}

}  // namespace

EnvSpec AntMazeEnv::make_spec(MazeKind kind, TaskMode mode) {
  EnvSpec s;
  s.name = kind_name(kind);
  s.obs_dim = kAntObsDim;
  s.action_dim = kAntNu;
  s.action.low.assign(kAntNu, static_cast<float>(-kAntCtrlLimit));
  s.action.high.assign(kAntNu, static_cast<float>(kAntCtrlLimit));
  s.episode_length = kEpisodeLength;
  s.frame_skip = kAntFrameSkip;
  s.control_dt = kAntControlDt;
  s.time_feature_scale = kTimeFeatureScale;
  s.task = task_for(kind, kAntScale, mode);
  return s;
}

AntMazeEnv::AntMazeEnv(MazeKind kind, TaskMode mode)
    : MujocoMazeEnv(make_spec(kind, mode), make_layout(kind, kAntScale),
                    shared_model(kind_name(kind), [kind] { return ant_maze_mjcf(make_layout(kind, kAntScale)); })) {
  const mjModel& m = model();
  if (m.nu != kAntNu || m.nq < kAntNq || m.nv < kAntNv)
    throw MujocoError("ant model has nq " + std::to_string(m.nq) + ", nv " + std::to_string(m.nv) + ", nu " +
                      std::to_string(m.nu) + "; expected at least 15 / 14 and exactly 8");
  block_x_adr_ = qpos_adr(m, "block_x");
  block_y_adr_ = qpos_adr(m, "block_y");
  block_z_adr_ = qpos_adr(m, "block_z");
  const int block = mj_name2id(&m, mjOBJ_BODY, "block");
  if (block >= 0)
    for (int k = 0; k < 3; ++k) block_origin_[static_cast<size_t>(k)] = m.body_pos[3 * block + k];
}

std::array<double, 3> AntMazeEnv::block_position() const noexcept {
  std::array<double, 3> p = block_origin_;
  const mjData& d = data();
  if (block_x_adr_ >= 0) p[0] += d.qpos[block_x_adr_];
  if (block_y_adr_ >= 0) p[1] += d.qpos[block_y_adr_];
  if (block_z_adr_ >= 0) p[2] += d.qpos[block_z_adr_];
  return p;
}

void AntMazeEnv::do_reset(Rng& rng, Span<float> obs) {
  const mjModel& m = model();
  mjData& d = data();
  // Back to qpos0 (the block included), zero velocities, clear warnings and time.
  mj_resetData(&m, &d);
  // Noise on the ant's own coordinates only (quaternion not renormalised).
  for (int i = 0; i < kAntNq; ++i) d.qpos[i] = m.qpos0[i] + rng.uniform(-kResetPosNoise, kResetPosNoise);
  for (int i = 0; i < kAntNv; ++i) d.qvel[i] = kResetVelNoise * rng.normal();
  mj_forward(&m, &d);
  write_obs(obs);
}

void AntMazeEnv::do_step(Span<const float> action, Span<float> obs) noexcept {
  const mjModel& m = model();
  mjData& d = data();
  for (int i = 0; i < kAntNu; ++i)
    d.ctrl[i] = std::clamp<double>(action[static_cast<size_t>(i)], -kAntCtrlLimit, kAntCtrlLimit);
  for (int k = 0; k < kAntFrameSkip; ++k) mj_step(&m, &d);
  write_obs(obs);
}

void AntMazeEnv::write_obs(Span<float> obs) const noexcept {
  const mjData& d = data();
  for (int i = 0; i < kQposEnd; ++i) obs[static_cast<size_t>(i)] = static_cast<float>(d.qpos[i]);
  for (int i = 0; i < kAntNv; ++i) obs[static_cast<size_t>(kQvelBegin + i)] = static_cast<float>(d.qvel[i]);
  obs[static_cast<size_t>(kAntObsDim - 1)] = static_cast<float>(t() * kTimeFeatureScale);
}

}  // namespace ringrl::envs::maze
