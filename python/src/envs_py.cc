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
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include "common/errors.h"
#include "common/hiro/goal_space.h"
#include "envs/env.h"
#include "envs/maze/factory.h"
#include "envs/maze/render.h"
#include "python/src/module.h"

namespace ringrl::python {
namespace {

namespace nb = nanobind;
namespace maze = envs::maze;
using namespace nb::literals;

constexpr std::uint64_t kEpisodeSeedMix = 0x9E3779B97F4A7C15ULL;  // golden-ratio increment
constexpr int kMaxVecEnvs = 1 << 16;                              // num_envs upper bound
constexpr int kMaxThreads = 1024;

maze::MazeEnvOptions make_options(const std::string& task, bool compact, bool observe_block, double max_step) {
  maze::MazeEnvOptions o;
  if (task == "single")
    o.task_mode = maze::TaskMode::kSingle;
  else if (task == "multi")
    o.task_mode = maze::TaskMode::kMulti;
  else
    throw UsageError("task " + task + ": expected single or multi");
  o.compact = compact;
  o.observe_block = observe_block;
  o.max_step = max_step;
  return o;
}

// Seed of episode k (k >= 1) after a reset seeded with `base`: splitmix64 of base + k * golden,
// so that the episodes of env i and env i + 1 (bases s + i, s + i + 1) never share a seed.
std::uint64_t episode_seed(std::uint64_t base, std::uint64_t k) noexcept {
  std::uint64_t z = base + k * kEpisodeSeedMix;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
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
                                                                                         : "other";
  if (t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bool)) return kind;
  return kind + std::to_string(t.bits);
}

// Checks an action batch: float32, C-contiguous, shape (rows, cols) (or (cols,) when rows is
// 0), every entry finite. Throws UsageError naming what is wrong.
const float* checked_actions(const nb::ndarray<nb::ro, nb::device::cpu>& a, std::size_t rows, std::size_t cols,
                             const char* what) {
  const bool single = rows == 0;
  const std::string expected = single ? fmt::format("({},)", cols) : fmt::format("({}, {})", rows, cols);
  if (a.dtype() != nb::dtype<float>())
    throw UsageError(fmt::format("{} of dtype {}: expected float32 of shape {}", what, dtype_text(a.dtype()),
                                 expected));
  const bool shape_ok = single ? (a.ndim() == 1 && a.shape(0) == cols)
                               : (a.ndim() == 2 && a.shape(0) == rows && a.shape(1) == cols);
  if (!shape_ok) throw UsageError(fmt::format("{} of shape {}: expected {}", what, shape_text(a), expected));
  const bool contiguous = single ? (a.stride(0) == 1 || cols <= 1)
                                 : ((a.stride(1) == 1 || cols <= 1) && (a.stride(0) == static_cast<std::int64_t>(cols) || rows <= 1));
  if (!contiguous) throw UsageError(fmt::format("{} is not C-contiguous: expected a contiguous float32 array", what));
  const float* p = static_cast<const float*>(a.data());
  const std::size_t n = single ? cols : rows * cols;
  for (std::size_t k = 0; k < n; ++k) {
    if (!std::isfinite(p[k])) {
      const std::string where = single ? fmt::format("[{}]", k) : fmt::format("[{}, {}]", k / cols, k % cols);
      throw UsageError(fmt::format("{}{} is {}: expected a finite number", what, where, p[k]));
    }
  }
  return p;
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

// One env and its episode-seed sequence.
struct Slot {
  std::unique_ptr<envs::Env> env;
  std::uint64_t base = 0;     // seed of the last seeded reset
  std::uint64_t episode = 0;  // episodes begun since then
  bool needs_reset = true;    // the last step ended the episode (or no reset yet)

  void reset(std::optional<std::uint64_t> seed, envs::Span<float> obs) {
    if (seed) {
      base = *seed;
      episode = 0;
    }
    env->reset(episode == 0 ? base : episode_seed(base, episode), obs);
    ++episode;
    needs_reset = false;
  }
};

// One env for ringrl.envs.MazeEnv.
class PyEnv {
 public:
  PyEnv(const std::string& name, const maze::MazeEnvOptions& options) {
    slot_.env = maze::make_maze_env(name, options);
    const envs::EnvSpec& s = slot_.env->spec();
    obs_dim_ = static_cast<std::size_t>(s.obs_dim);
    act_dim_ = static_cast<std::size_t>(s.action_dim);
  }

  // reset(seed) -> obs (a new array). seed None: the next seed of the sequence.
  nb::object reset(std::optional<std::uint64_t> seed) {
    float* obs = nullptr;
    nb::object out = owned_array<float>({obs_dim_}, &obs);
    if (!seed && slot_.episode == 0) throw UsageError("reset: the first reset needs a seed");
    slot_.reset(seed, envs::Span<float>(obs, obs_dim_));
    return out;
  }

  // step(action) -> (obs, reward, terminated, truncated, t, distance, success).
  nb::tuple step(const nb::ndarray<nb::ro, nb::device::cpu>& action) {
    if (!slot_.env) throw std::runtime_error("step: the env is closed");
    if (slot_.episode == 0) throw UsageError("step: reset() the env before the first step");
    const float* a = checked_actions(action, 0, act_dim_, "action");
    float* obs = nullptr;
    nb::object out = owned_array<float>({obs_dim_}, &obs);
    const envs::StepResult r = slot_.env->step(envs::Span<const float>(a, act_dim_), envs::Span<float>(obs, obs_dim_));
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
  void close() { slot_.env.reset(); }
  bool closed() const { return !slot_.env; }

 private:
  envs::Env& env() const {
    if (!slot_.env) throw std::runtime_error("the env is closed");
    return *slot_.env;
  }
  Slot slot_;
  std::size_t obs_dim_ = 0, act_dim_ = 0;
};

// N envs for ringrl.envs.VecMazeEnv (autoreset NEXT_STEP, see docs/python.md).
class PyVecEnv {
 public:
  PyVecEnv(const std::string& name, int num_envs, int threads, const maze::MazeEnvOptions& options) {
    if (num_envs < 1 || num_envs > kMaxVecEnvs)
      throw UsageError(fmt::format("num_envs {}: expected 1 to {}", num_envs, kMaxVecEnvs));
    if (threads < 0 || threads > kMaxThreads)
      throw UsageError(fmt::format("threads {}: expected 0 (one per core, at most num_envs) to {}", threads,
                                   kMaxThreads));
    n_ = static_cast<std::size_t>(num_envs);
    slots_.resize(n_);
    for (Slot& s : slots_) s.env = maze::make_maze_env(name, options);
    const envs::EnvSpec& spec = slots_[0].env->spec();
    obs_dim_ = static_cast<std::size_t>(spec.obs_dim);
    act_dim_ = static_cast<std::size_t>(spec.action_dim);
    ctx_dim_ = static_cast<std::size_t>(spec.task.context_dim());
    obs_obj_ = owned_array<float>({n_, obs_dim_}, &obs_);
    reward_obj_ = owned_array<double>({n_}, &reward_);
    terminated_obj_ = owned_array<bool>({n_}, &terminated_);
    truncated_obj_ = owned_array<bool>({n_}, &truncated_);
    t_obj_ = owned_array<std::int32_t>({n_}, &t_);
    distance_obj_ = owned_array<float>({n_}, &distance_);
    success_obj_ = owned_array<bool>({n_}, &success_);
    target_obj_ = owned_array<float>({n_, ctx_dim_}, &target_);
    if (threads == 0) threads = std::min<int>(num_envs, tbb::this_task_arena::max_concurrency());
    threads_ = std::min(threads, num_envs);
    if (threads_ > 1) arena_ = std::make_unique<tbb::task_arena>(threads_);
  }

  // reset(seeds): seeds has N entries (None = the next seed of that env's sequence).
  void reset(const std::vector<std::optional<std::uint64_t>>& seeds) {
    check_open("reset");
    if (seeds.size() != n_) throw UsageError(fmt::format("reset: {} seeds for {} envs", seeds.size(), n_));
    for (std::size_t i = 0; i < n_; ++i)
      if (!seeds[i] && slots_[i].episode == 0)
        throw UsageError(fmt::format("reset: env {} has never been seeded: the first reset needs a seed", i));
    Busy busy(this);
    {
      nb::gil_scoped_release nogil;
      run_all([&](std::size_t i) {
        slots_[i].reset(seeds[i], obs_row(i));
        after_reset(i);
      });
    }
  }

  // step(actions [N, action_dim] float32): NEXT_STEP autoreset (the step after an episode's
  // end resets that env, ignores its action and reports reward 0, not terminated, not truncated).
  void step(const nb::ndarray<nb::ro, nb::device::cpu>& actions) {
    check_open("step");
    for (std::size_t i = 0; i < n_; ++i)
      if (slots_[i].episode == 0) throw UsageError("step: reset() the envs before the first step");
    const float* a = checked_actions(actions, n_, act_dim_, "actions");
    Busy busy(this);
    {
      nb::gil_scoped_release nogil;
      run_all([&](std::size_t i) {
        Slot& s = slots_[i];
        if (s.needs_reset) {
          s.reset(std::nullopt, obs_row(i));
          after_reset(i);
          return;
        }
        const envs::StepResult r = s.env->step(envs::Span<const float>(a + i * act_dim_, act_dim_), obs_row(i));
        reward_[i] = static_cast<double>(r.reward);
        terminated_[i] = r.terminated;
        truncated_[i] = r.truncated;
        t_[i] = r.info.t;
        distance_[i] = r.info.distance;
        success_[i] = r.info.success;
        copy_target(i);
        s.needs_reset = r.done();
      });
    }
  }

  void set_target(std::size_t i, const std::vector<float>& c) {
    check_open("set_target");
    if (i >= n_) throw UsageError(fmt::format("set_target: env {} of {}", i, n_));
    if (c.size() != ctx_dim_) throw UsageError(fmt::format("target of {} values: expected {}", c.size(), ctx_dim_));
    Busy busy(this);
    slots_[i].env->set_context(envs::Span<const float>(c.data(), c.size()));
    copy_target(i);
  }

  void close() {
    if (busy_.load(std::memory_order_acquire)) throw std::runtime_error("close: the env is stepping in another thread");
    slots_.clear();
    arena_.reset();
  }
  bool closed() const { return slots_.empty(); }
  int threads() const { return threads_; }
  std::size_t num_envs() const { return n_; }

  nb::object obs_obj_, reward_obj_, terminated_obj_, truncated_obj_, t_obj_, distance_obj_, success_obj_, target_obj_;

 private:
  // Refuses a second caller while one is stepping (the slots are not thread-safe).
  struct Busy {
    explicit Busy(PyVecEnv* e) : e_(e) {
      if (e_->busy_.exchange(true, std::memory_order_acq_rel))
        throw std::runtime_error("the vector env is already stepping in another thread");
    }
    ~Busy() { e_->busy_.store(false, std::memory_order_release); }
    PyVecEnv* e_;
  };

  void check_open(const char* what) const {
    if (slots_.empty()) throw std::runtime_error(std::string(what) + ": the env is closed");
  }
  envs::Span<float> obs_row(std::size_t i) const { return envs::Span<float>(obs_ + i * obs_dim_, obs_dim_); }
  void copy_target(std::size_t i) {
    const auto c = slots_[i].env->context();
    std::memcpy(target_ + i * ctx_dim_, c.data(), ctx_dim_ * sizeof(float));
  }
  void after_reset(std::size_t i) {
    reward_[i] = 0.0;
    terminated_[i] = false;
    truncated_[i] = false;
    t_[i] = 0;
    const envs::Env& e = *slots_[i].env;
    distance_[i] = e.spec().task.distance(envs::Span<const float>(obs_ + i * obs_dim_, obs_dim_), e.context());
    success_[i] = distance_[i] < e.spec().task.success_threshold;
    copy_target(i);
  }
  // Runs f(i) for every env: inline on one thread, else on the arena (one env per task).
  template <class F>
  void run_all(const F& f) {
    if (!arena_) {
      for (std::size_t i = 0; i < n_; ++i) f(i);
      return;
    }
    arena_->execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n_), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t i = r.begin(); i != r.end(); ++i) f(i);
      });
    });
  }

  std::size_t n_ = 0, obs_dim_ = 0, act_dim_ = 0, ctx_dim_ = 0;
  int threads_ = 1;
  std::vector<Slot> slots_;
  std::unique_ptr<tbb::task_arena> arena_;
  std::atomic<bool> busy_{false};
  float* obs_ = nullptr;
  double* reward_ = nullptr;
  bool* terminated_ = nullptr;
  bool* truncated_ = nullptr;
  std::int32_t* t_ = nullptr;
  float* distance_ = nullptr;
  bool* success_ = nullptr;
  float* target_ = nullptr;
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
  m.def("episode_seed", &episode_seed, "base"_a, "k"_a, "Seed of episode k >= 1 after a reset seeded with base.");

  nb::class_<PyEnv>(m, "Env")
      .def(nb::init<const std::string&, const maze::MazeEnvOptions&>(), "name"_a, "options"_a)
      .def("reset", &PyEnv::reset, "seed"_a.none())
      .def("step", &PyEnv::step, "action"_a)
      .def_prop_rw("context", &PyEnv::context, &PyEnv::set_context)
      .def_prop_ro("t", &PyEnv::t)
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
