// Bare physics stepping for benchmarks: a second mjData on a MuJoCo env's shared model,
// advanced by nothing but mj_step, so that env overhead can be measured against it.
//
// One instance per thread (the thread that drives its env); it shares the env's immutable
// model and owns its own mjData. Lifetime: must not outlive the env it was made from
// (reset() reads that env's state).
#pragma once

#include <memory>

#include "envs/env.h"

namespace ringrl::envs::maze {

class BarePhysics {
 public:
  BarePhysics() = default;
  BarePhysics(const BarePhysics&) = delete;
  BarePhysics& operator=(const BarePhysics&) = delete;
  virtual ~BarePhysics() = default;

  /// Copies the env's current state (qpos, qvel, act, ctrl, time), then mj_forward: call it
  /// right after env.reset(seed) to step the same episode start as the env.
  virtual void reset() noexcept = 0;
  /// Copies min(nu, ctrl.size()) controls into mjData::ctrl.
  virtual void set_ctrl(Span<const float> ctrl) noexcept = 0;
  /// One mj_step.
  virtual void step() noexcept = 0;
};

/// Bare physics on the model of `env`, or nullptr when `env` has no MuJoCo physics (the
/// kinematic stand-in, or a build without MuJoCo).
std::unique_ptr<BarePhysics> make_bare_physics(const Env& env);

}  // namespace ringrl::envs::maze
