#include "envs/maze/mujoco_env.h"

#include <algorithm>

#include <mujoco/mujoco.h>

#include "envs/maze/bare_physics.h"

namespace ringrl::envs::maze {
namespace {

class MujocoBarePhysics final : public BarePhysics {
 public:
  explicit MujocoBarePhysics(const MujocoMazeEnv& env)
      : env_(env), model_(env.shared_model_ptr()), data_(make_data(*model_)) {
    reset();
  }
  void reset() noexcept override {
    const mjModel& m = *model_;
    const mjData& src = env_.data();
    mjData& d = *data_;
    mj_resetData(&m, &d);
    std::copy(src.qpos, src.qpos + m.nq, d.qpos);
    std::copy(src.qvel, src.qvel + m.nv, d.qvel);
    std::copy(src.act, src.act + m.na, d.act);
    std::copy(src.ctrl, src.ctrl + m.nu, d.ctrl);
    d.time = src.time;
    mj_forward(&m, &d);
  }
  void set_ctrl(Span<const float> ctrl) noexcept override {
    const int n = std::min<int>(model_->nu, static_cast<int>(ctrl.size()));
    for (int i = 0; i < n; ++i) data_->ctrl[i] = ctrl[static_cast<size_t>(i)];
  }
  void step() noexcept override { mj_step(model_.get(), data_.get()); }

 private:
  const MujocoMazeEnv& env_;
  SharedModel model_;
  DataPtr data_;
};

}  // namespace

MujocoMazeEnv::MujocoMazeEnv(EnvSpec spec, Layout layout, SharedModel model)
    : spec_(std::move(spec)), layout_(std::move(layout)), model_(std::move(model)), data_(make_data(*model_)) {}

std::unique_ptr<BarePhysics> make_mujoco_bare_physics(const Env& env) {
  const auto* mj = dynamic_cast<const MujocoMazeEnv*>(&env);
  if (!mj) return nullptr;
  return std::make_unique<MujocoBarePhysics>(*mj);
}

}  // namespace ringrl::envs::maze
