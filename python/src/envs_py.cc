// The maze envs for Python (ringrl._ringrl): one env (`Env`), N envs stepped together on a
// oneTBB arena with the GIL released (`VecEnv`), the env catalogue and specs, the top-down
// picture, and the HIRO goal spaces. python/ringrl/envs.py and hiro.py wrap these in
// Gymnasium's API; docs/python.md describes the behaviour.
//
// Thread rules: every method runs with the GIL held except VecEnv::step/reset's env work,
// which runs on the arena after the GIL is released; a VecEnv must not be used from two Python
// threads at once (a lock-free `busy` flag refuses the second caller with RuntimeError).
// Buffers handed to Python are NumPy arrays owned by capsules, so they stay valid after
// close(); close() frees the envs and the arena.
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include "common/errors.h"
#include "common/hiro/goal_space.h"
#include "envs/env.h"
#include "envs/maze/factory.h"
#include "envs/maze/render.h"
#include "envs/vector_env.h"
#include "python/src/module.h"

namespace ringrl::python {
namespace {

namespace nb = nanobind;
namespace maze = envs::maze;
using namespace nb::literals;


maze::MazeEnvOptions make_options(const std::string& task, bool compact, bool observe_block, double max_step) {
  maze::MazeEnvOptions o;
  o.task_mode = maze::parse_task_mode(task, "task");
  o.compact = compact;
  o.observe_block = observe_block;
  o.max_step = max_step;
  return o;
}

// A NumPy array of `shape` (zero-filled) whose memory a capsule owns; *data points into it.
template <class T>
nb::object owned_array(std::initializer_list<std::size_t> shape, T** data) {
  std::size_t n = 1;
  for (std::size_t s : shape) n *= s;
  T* p = new T[n == 0 ? 1 : n]();
  nb::capsule owner(p, [](void* q) noexcept { delete[] static_cast<T*>(q); });
  *data = p;
  return nb::cast(nb::ndarray<nb::numpy, T>(p, shape.size(), shape.begin(), owner));
}

std::string shape_text(const nb::ndarray<nb::ro, nb::device::cpu>& a) {
  std::string s = "(";
  for (std::size_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.shape(d));
  return s + (a.ndim() == 1 ? ",)" : ")");
}

std::string dtype_text(const nb::dlpack::dtype& t) {
  const char* kind = t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float)  ? "float"
                     : t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int)  ? "int"
                     : t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt) ? "uint"
                     : t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bool) ? "bool"
                     : t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Complex) ? "complex"
                                                                                         : "other";
  if (t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bool)) return kind;
  return kind + std::to_string(t.bits);
}

// Element k (row-major over the logical shape) of a 1-D or 2-D array of any real dtype, as float.
template <class T>
void convert_rows(const nb::ndarray<nb::ro, nb::device::cpu>& a, std::size_t rows, std::size_t cols, float* out) {
  const auto* base = static_cast<const T*>(a.data());
  const std::int64_t s0 = a.stride(0);
  const std::int64_t s1 = a.ndim() == 2 ? a.stride(1) : 0;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      const std::int64_t at = a.ndim() == 2 ? static_cast<std::int64_t>(i) * s0 + static_cast<std::int64_t>(j) * s1
                                            : static_cast<std::int64_t>(j) * s0;
      out[i * cols + j] = static_cast<float>(base[at]);
    }
}

// An action batch of shape (rows, cols) (or (cols,) when rows is 0) and any real dtype (float,
// int, uint; any strides), converted to float32 in `out`; every entry must be finite. Throws
// UsageError naming what is wrong. Returns out.data().
const float* actions_as_float(const nb::ndarray<nb::ro, nb::device::cpu>& a, std::size_t rows, std::size_t cols,
                              const char* what, std::vector<float>& out) {
  const bool single = rows == 0;
  const std::string expected = single ? fmt::format("({},)", cols) : fmt::format("({}, {})", rows, cols);
  const bool shape_ok = single ? (a.ndim() == 1 && a.shape(0) == cols)
                               : (a.ndim() == 2 && a.shape(0) == rows && a.shape(1) == cols);
  if (!shape_ok) throw UsageError(fmt::format("{} of shape {}: expected {}", what, shape_text(a), expected));
  const std::size_t n_rows = single ? 1 : rows;
  out.resize(n_rows * cols);
  using Code = nb::dlpack::dtype_code;
  const nb::dlpack::dtype t = a.dtype();
  const auto code = static_cast<Code>(t.code);
  const auto is = [&](Code c, int bits) { return code == c && t.bits == bits && t.lanes == 1; };
  if (is(Code::Float, 32)) convert_rows<float>(a, n_rows, cols, out.data());
  else if (is(Code::Float, 64)) convert_rows<double>(a, n_rows, cols, out.data());
  else if (is(Code::Int, 8)) convert_rows<std::int8_t>(a, n_rows, cols, out.data());
  else if (is(Code::Int, 16)) convert_rows<std::int16_t>(a, n_rows, cols, out.data());
  else if (is(Code::Int, 32)) convert_rows<std::int32_t>(a, n_rows, cols, out.data());
  else if (is(Code::Int, 64)) convert_rows<std::int64_t>(a, n_rows, cols, out.data());
  else if (is(Code::UInt, 8)) convert_rows<std::uint8_t>(a, n_rows, cols, out.data());
  else if (is(Code::UInt, 16)) convert_rows<std::uint16_t>(a, n_rows, cols, out.data());
  else if (is(Code::UInt, 32)) convert_rows<std::uint32_t>(a, n_rows, cols, out.data());
  else if (is(Code::UInt, 64)) convert_rows<std::uint64_t>(a, n_rows, cols, out.data());
  else
    throw UsageError(fmt::format("{} of dtype {}: expected real numbers (float32, float64 or an integer type) of shape {}",
                                 what, dtype_text(t), expected));
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (!std::isfinite(out[k])) {
      const std::string where = single ? fmt::format("[{}]", k) : fmt::format("[{}, {}]", k / cols, k % cols);
      throw UsageError(fmt::format("{}{} is {}: expected a finite number", what, where, out[k]));
    }
  }
  return out.data();
}

nb::dict spec_dict(const envs::EnvSpec& s) {
  nb::dict d;
  d["name"] = s.name;
  d["obs_dim"] = s.obs_dim;
  d["action_dim"] = s.action_dim;
  d["action_low"] = s.action.low;
  d["action_high"] = s.action.high;
  d["episode_length"] = s.episode_length;
  d["frame_skip"] = s.frame_skip;
  d["control_dt"] = s.control_dt;
  d["time_feature_scale"] = s.time_feature_scale;
  d["task"] = s.task.name;
  d["goal_indices"] = s.task.goal_indices;
  d["context_dim"] = s.task.context_dim();
  d["train_low"] = s.task.train_sampler.low;
  d["train_high"] = s.task.train_sampler.high;
  d["eval_targets"] = s.task.eval_targets;
  d["primary_eval"] = s.task.primary_eval;
  d["success_threshold"] = s.task.success_threshold;
  return d;
}


// One env for ringrl.envs.MazeEnv.
class PyEnv {
 public:
  PyEnv(const std::string& name, const maze::MazeEnvOptions& options) {
    env_ = maze::make_maze_env(name, options);
    const envs::EnvSpec& s = env_->spec();
    obs_dim_ = static_cast<std::size_t>(s.obs_dim);
    act_dim_ = static_cast<std::size_t>(s.action_dim);
  }

  // reset(seed) -> obs (a new array). seed None: the next seed of the sequence.
  nb::object reset(std::optional<std::uint64_t> seed) {
    float* obs = nullptr;
    nb::object out = owned_array<float>({obs_dim_}, &obs);
    if (!seed && !seeds_.seeded()) throw UsageError("reset: the first reset needs a seed");
    env().reset(seeds_.next(seed), envs::Span<float>(obs, obs_dim_));
    last_obs_.assign(obs, obs + obs_dim_);
    return out;
  }

  // step(action) -> (obs, reward, terminated, truncated, t, distance, success).
  nb::tuple step(const nb::ndarray<nb::ro, nb::device::cpu>& action) {
    if (!env_) throw std::runtime_error("step: the env is closed");
    if (!seeds_.seeded()) throw UsageError("step: reset() the env before the first step");
    const float* a = actions_as_float(action, 0, act_dim_, "action", scratch_);
    float* obs = nullptr;
    nb::object out = owned_array<float>({obs_dim_}, &obs);
    const envs::StepResult r = env_->step(envs::Span<const float>(a, act_dim_), envs::Span<float>(obs, obs_dim_));
    last_obs_.assign(obs, obs + obs_dim_);
    return nb::make_tuple(out, static_cast<double>(r.reward), r.terminated, r.truncated, r.info.t,
                          static_cast<double>(r.info.distance), r.info.success);
  }

  std::vector<float> context() const {
    const auto c = env().context();
    return std::vector<float>(c.begin(), c.end());
  }
  void set_context(const std::vector<float>& c) {
    if (c.size() != env().context().size())
      throw UsageError(fmt::format("target of {} values: expected {}", c.size(), env().context().size()));
    env().set_context(envs::Span<const float>(c.data(), c.size()));
  }
  int t() const { return env().t(); }
  // (distance, success) of the last observation against the context in force now (after a
  // reset with an evaluation target, the target's).
  nb::tuple status() const {
    const envs::EnvSpec& s = env().spec();
    const float d = s.task.distance(envs::Span<const float>(last_obs_.data(), last_obs_.size()), env().context());
    return nb::make_tuple(static_cast<double>(d), d < s.task.success_threshold);
  }
  void close() { env_.reset(); }
  bool closed() const { return !env_; }

 private:
  envs::Env& env() const {
    if (!env_) throw std::runtime_error("the env is closed");
    return *env_;
  }
  std::unique_ptr<envs::Env> env_;
  envs::EpisodeSeeds seeds_;
  std::size_t obs_dim_ = 0, act_dim_ = 0;
  std::vector<float> scratch_;   // the action as float32
  std::vector<float> last_obs_;  // for status()
};

// A NumPy view of `n` values at `p` (shape `shape`) that keeps `owner` alive.
template <class T>
nb::object view_array(T* p, std::initializer_list<std::size_t> shape, const std::shared_ptr<envs::VectorEnv>& owner) {
  auto* keep = new std::shared_ptr<envs::VectorEnv>(owner);
  nb::capsule cap(keep, [](void* q) noexcept { delete static_cast<std::shared_ptr<envs::VectorEnv>*>(q); });
  return nb::cast(nb::ndarray<nb::numpy, T>(p, shape.size(), shape.begin(), cap));
}

// ringrl.envs.VecMazeEnv's core: envs::VectorEnv (stepping, autoreset, seeds) with NumPy views
// of its outputs (which outlive close(), as the VectorEnv's contract says) and the GIL released
// while it steps.
class PyVecEnv {
 public:
  PyVecEnv(const std::string& name, int num_envs, int threads, const maze::MazeEnvOptions& options)
      : v_(std::make_shared<envs::VectorEnv>([&] { return maze::make_maze_env(name, options); }, num_envs, threads)) {
    const std::size_t n = v_->num_envs();
    obs_obj_ = view_array(v_->obs(), {n, v_->obs_dim()}, v_);
    reward_obj_ = view_array(v_->reward(), {n}, v_);
    terminated_obj_ = view_array(v_->terminated(), {n}, v_);
    truncated_obj_ = view_array(v_->truncated(), {n}, v_);
    t_obj_ = view_array(v_->t(), {n}, v_);
    distance_obj_ = view_array(v_->distance(), {n}, v_);
    success_obj_ = view_array(v_->success(), {n}, v_);
    target_obj_ = view_array(v_->target(), {n, v_->target_dim()}, v_);
  }

  void reset(const std::vector<std::optional<std::uint64_t>>& seeds) {
    nb::gil_scoped_release nogil;
    v_->reset(seeds);
  }
  void step(const nb::ndarray<nb::ro, nb::device::cpu>& actions) {
    if (v_->closed()) throw std::runtime_error("step: the env is closed");
    const float* a = actions_as_float(actions, v_->num_envs(), v_->action_dim(), "actions", scratch_);
    nb::gil_scoped_release nogil;
    v_->step(a);
  }
  void set_target(std::size_t i, const std::vector<float>& c) {
    v_->set_target(i, envs::Span<const float>(c.data(), c.size()));
  }
  void close() {
    try {
      v_->close();
    } catch (const std::runtime_error&) {
      throw std::runtime_error("close: the env is stepping in another thread");
    }
  }
  bool closed() const { return v_->closed(); }
  int threads() const { return v_->threads(); }
  std::size_t num_envs() const { return v_->num_envs(); }

  nb::object obs_obj_, reward_obj_, terminated_obj_, truncated_obj_, t_obj_, distance_obj_, success_obj_, target_obj_;

 private:
  std::shared_ptr<envs::VectorEnv> v_;
  std::vector<float> scratch_;  // the actions as float32
};

nb::list catalog() {
  nb::list out;
  for (const maze::MazeEnvInfo& info : maze::maze_env_catalog()) {
    nb::dict d;
    d["name"] = info.name;
    d["description"] = info.description;
    d["mujoco"] = info.mujoco;
    d["available"] = !info.mujoco || maze::have_mujoco();
    out.append(d);
  }
  return out;
}

// The picture of env `name` with the trajectory xy ([M, 2] float64, one episode) drawn on it.
nb::object render_rgb(const std::string& name, const std::string& task,
                      const nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>& xy,
                      int pixels_per_cell) {
  const maze::MazeEnvInfo& info = maze::maze_env_info(name);
  const maze::Layout layout = maze::maze_env_layout(name);
  const envs::TaskSpec spec = maze::task_for(info.maze, info.scale, make_options(task, false, false, maze::kDefaultKinematicMaxStep).task_mode);
  if (xy.shape(1) != 2) throw UsageError(fmt::format("trajectory of {} columns: expected 2 (x, y)", xy.shape(1)));
  std::vector<maze::TrajectoryRow> rows(xy.shape(0));
  for (std::size_t k = 0; k < rows.size(); ++k) {
    rows[k].t = static_cast<int>(k);
    rows[k].x = xy(k, 0);
    rows[k].y = xy(k, 1);
  }
  maze::RenderOptions options;
  options.pixels_per_cell = pixels_per_cell;
  maze::RgbImage picture = maze::render_maze_rgb(layout, spec, rows, options);
  std::uint8_t* data = nullptr;
  nb::object out = owned_array<std::uint8_t>(
      {static_cast<std::size_t>(picture.height), static_cast<std::size_t>(picture.width), 3}, &data);
  std::memcpy(data, picture.pixels.data(), picture.pixels.size());
  return out;
}

nb::dict goal_space(const std::string& kind, const std::string& env, const maze::MazeEnvOptions& options) {
  const envs::EnvSpec spec = maze::maze_env_spec(env, options);
  const envs::Box box = maze::maze_subgoal_box(env, options);
  const hiro::GoalSpace gs = hiro::make_goal_space(hiro::parse_goal_space(kind), spec.obs_dim, box.low, box.high, env);
  nb::dict d;
  d["kind"] = std::string(hiro::goal_space_name(gs.kind));
  d["dim"] = gs.dim;
  d["low"] = gs.low;
  d["high"] = gs.high;
  d["mask_xy"] = gs.mask_xy;
  return d;
}

using F32Rows = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;

// The shapes of B transitions s, g, s_next: [B, obs], [B, k], [B, obs], or 1-D for one
// (single); UsageError naming `name` otherwise.
struct TransitionRows {
  bool single;
  std::size_t rows, obs, k;
};
TransitionRows transition_rows(const char* name, const F32Rows& s, const F32Rows& g, const F32Rows& s_next) {
  const bool single = s.ndim() == 1;
  const std::size_t rows = single ? 1 : s.shape(0);
  const std::size_t obs = s.shape(s.ndim() - 1);
  const std::size_t k = g.shape(g.ndim() - 1);
  if (s.ndim() > 2 || g.ndim() != s.ndim() || s_next.ndim() != s.ndim() || s_next.shape(s.ndim() - 1) != obs ||
      (!single && (g.shape(0) != rows || s_next.shape(0) != rows)))
    throw UsageError(fmt::format("{}: s, g and s_next must be [B, obs], [B, k], [B, obs] (or 1-D for one)", name));
  if (k > obs) throw UsageError(fmt::format("{}: goal of {} values for observations of {}", name, k, obs));
  return {single, rows, obs, k};
}

// Intrinsic rewards (spec §6.3) of B transitions: s, g, s_next of shape [B, *] (or 1-D for one).
nb::object intrinsic_rewards(const F32Rows& s, const F32Rows& g, const F32Rows& s_next) {
  const TransitionRows t = transition_rows("intrinsic_reward", s, g, s_next);
  const std::size_t rows = t.rows, obs = t.obs, k = t.k;
  float* out = nullptr;
  nb::object arr = owned_array<float>({rows}, &out);
  for (std::size_t b = 0; b < rows; ++b)
    out[b] = hiro::intrinsic_reward(s.data() + b * obs, g.data() + b * k, s_next.data() + b * obs, static_cast<int>(k));
  return arr;
}

// Goal transition h (spec §6.2): g_next = s[:k] + g - s_next[:k], row by row.
nb::object goal_transitions(const F32Rows& s, const F32Rows& g, const F32Rows& s_next) {
  const TransitionRows t = transition_rows("goal_transition", s, g, s_next);
  const bool single = t.single;
  const std::size_t rows = t.rows, obs = t.obs, k = t.k;
  float* out = nullptr;
  nb::object arr = single ? owned_array<float>({k}, &out) : owned_array<float>({rows, k}, &out);
  for (std::size_t b = 0; b < rows; ++b)
    hiro::goal_transition(s.data() + b * obs, g.data() + b * k, s_next.data() + b * obs, static_cast<int>(k),
                          out + b * k);
  return arr;
}

}  // namespace

void bind_envs(nb::module_& m) {
  nb::class_<maze::MazeEnvOptions>(m, "MazeEnvOptions")
      .def(
          "__init__",
          [](maze::MazeEnvOptions* self, const std::string& task, bool compact, bool observe_block, double max_step) {
            new (self) maze::MazeEnvOptions(make_options(task, compact, observe_block, max_step));
          },
          "task"_a = "single", "compact"_a = false, "observe_block"_a = false,
          "max_step"_a = maze::kDefaultKinematicMaxStep);

  m.def("env_catalog", &catalog, "Every maze env: name, description, mujoco, available.");
  m.def(
      "env_spec", [](const std::string& name, const maze::MazeEnvOptions& o) { return spec_dict(maze::maze_env_spec(name, o)); },
      "name"_a, "options"_a, "The static description of env `name` (obs_dim, action box, task, ...).");
  m.def("render_rgb", &render_rgb, "name"_a, "task"_a, "xy"_a, "pixels_per_cell"_a,
        "Top-down picture [H, W, 3] uint8 with one trajectory drawn on it.");
  m.def("goal_space", &goal_space, "kind"_a, "env"_a, "options"_a, "A HIRO goal space: kind, dim, low, high, mask_xy.");
  m.def("intrinsic_reward", &intrinsic_rewards, "s"_a, "g"_a, "s_next"_a);
  m.def("goal_transition", &goal_transitions, "s"_a, "g"_a, "s_next"_a);
  m.def("episode_seed", &envs::episode_seed, "base"_a, "k"_a, "Seed of episode k >= 1 after a reset seeded with base.");

  nb::class_<PyEnv>(m, "Env")
      .def(nb::init<const std::string&, const maze::MazeEnvOptions&>(), "name"_a, "options"_a)
      .def("reset", &PyEnv::reset, "seed"_a.none())
      .def("step", &PyEnv::step, "action"_a)
      .def_prop_rw("context", &PyEnv::context, &PyEnv::set_context)
      .def_prop_ro("t", &PyEnv::t)
      .def("status", &PyEnv::status)
      .def_prop_ro("closed", &PyEnv::closed)
      .def("close", &PyEnv::close);

  nb::class_<PyVecEnv>(m, "VecEnv")
      .def(nb::init<const std::string&, int, int, const maze::MazeEnvOptions&>(), "name"_a, "num_envs"_a,
           "threads"_a, "options"_a)
      .def("reset", &PyVecEnv::reset, "seeds"_a)
      .def("step", &PyVecEnv::step, "actions"_a)
      .def("set_target", &PyVecEnv::set_target, "index"_a, "target"_a)
      .def("close", &PyVecEnv::close)
      .def_prop_ro("closed", &PyVecEnv::closed)
      .def_prop_ro("threads", &PyVecEnv::threads)
      .def_prop_ro("num_envs", &PyVecEnv::num_envs)
      .def_ro("obs", &PyVecEnv::obs_obj_)
      .def_ro("reward", &PyVecEnv::reward_obj_)
      .def_ro("terminated", &PyVecEnv::terminated_obj_)
      .def_ro("truncated", &PyVecEnv::truncated_obj_)
      .def_ro("t", &PyVecEnv::t_obj_)
      .def_ro("distance", &PyVecEnv::distance_obj_)
      .def_ro("success", &PyVecEnv::success_obj_)
      .def_ro("target", &PyVecEnv::target_obj_);
}

}  // namespace ringrl::python
