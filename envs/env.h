// The environment interface that HIRO actors step (spec hiro.md §6.4, §10, §13).
//
// An Env is one episode-running instance. Each env kind has one immutable model (MJCF model,
// layout, task) that all instances of that kind share read-only; each instance owns its
// mutable state (for MuJoCo: one mjData). Instances are not thread-safe: one thread (or
// process) drives an instance, many instances may run on many threads at once.
//
// Protocol per episode (reset() must come before the first step()):
//   reset(seed, obs)      -> new episode, t = 0, context G drawn from the training sampler
//   set_context(G)        -> optional: replace G (evaluation targets, fixed-target configs)
//   step(action, obs) x N -> obs written in place, reward = task reward against G
// The episode never terminates (`terminated` is always false for the maze envs); after
// spec().episode_length steps `truncated` turns true and the caller resets. Rewards and
// successes are against the context in force; the agent may also recompute them from
// observations with spec().task (the HIRO high level does).
//
// Determinism: with the same seed and actions, observations are bit-identical across runs
// and instances. Lifetime: an Env keeps its shared model alive; spans passed in are borrowed
// only for the duration of the call. Hot paths (step) do not allocate and do not throw;
// sizes are checked with asserts, options are validated once at construction.
#pragma once

#include <array>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/rng.h"

namespace ringrl::envs {

/// Non-owning view of `size` contiguous elements (C++17 has no std::span).
template <class T>
class Span {
 public:
  constexpr Span() noexcept = default;
  constexpr Span(T* data, std::size_t size) noexcept : data_(data), size_(size) {}
  template <class Container>
  constexpr Span(Container& c) noexcept : data_(c.data()), size_(c.size()) {}  // NOLINT

  constexpr T* data() const noexcept { return data_; }
  constexpr std::size_t size() const noexcept { return size_; }
  constexpr T& operator[](std::size_t i) const noexcept {
    assert(i < size_);
    return data_[i];
  }
  constexpr T* begin() const noexcept { return data_; }
  constexpr T* end() const noexcept { return data_ + size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Axis-aligned box [low[i], high[i]] per dimension. low == high means a constant.
struct Box {
  std::vector<float> low;
  std::vector<float> high;

  int dim() const noexcept { return static_cast<int>(low.size()); }
  bool contains(Span<const float> x) const noexcept {
    if (x.size() != low.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!(x[i] >= low[i] && x[i] <= high[i])) return false;
    return true;
  }
};

/// The navigation task (spec §2 table, §6.4, §10.6): which observation entries are compared
/// with the context G, how G is drawn for training, the evaluation targets and the success
/// test. Pure value; shared read-only.
struct TaskSpec {
  std::string name;                              // "ant_maze", "ant_push_single", ...
  std::vector<int> goal_indices;                 // obs indices compared with G: {0,1} or {0,1,2}
  Box train_sampler;                             // G ~ uniform over this box (low == high: fixed)
  std::vector<std::vector<float>> eval_targets;  // reference order
  int primary_eval = 0;                          // index of the paper's metric target
  float success_threshold = 5.0f;                // success iff distance at the final step < this

  int context_dim() const noexcept { return static_cast<int>(goal_indices.size()); }
  const std::vector<float>& primary_target() const { return eval_targets.at(primary_eval); }

  /// Euclidean distance between obs[goal_indices] and G (2-D, or 3-D for AntFall).
  float distance(Span<const float> obs, Span<const float> context) const noexcept {
    assert(context.size() == goal_indices.size());
    float sum = 0.0f;
    for (std::size_t i = 0; i < goal_indices.size(); ++i) {
      const float d = obs[static_cast<std::size_t>(goal_indices[i])] - context[i];
      sum += d * d;
    }
    return std::sqrt(sum);
  }
  /// r_task = -||s'[idx] - G|| (no offset, no shaping, no bonus).
  float reward(Span<const float> obs, Span<const float> context) const noexcept { return -distance(obs, context); }
  /// The §10.6 test, to be applied to the final observation of an evaluation episode.
  bool success(Span<const float> obs, Span<const float> context) const noexcept {
    return distance(obs, context) < success_threshold;
  }
  /// Draws a training context into `out` (context_dim() floats).
  void sample(Rng& rng, Span<float> out) const noexcept {
    assert(out.size() == goal_indices.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      const float lo = train_sampler.low[i];
      const float hi = train_sampler.high[i];
      out[i] = lo == hi ? lo : static_cast<float>(rng.uniform(lo, hi));
    }
  }
};

/// Static description of an env kind.
struct EnvSpec {
  std::string name;  // factory name, e.g. "ant-maze"
  int obs_dim = 0;   // observation length; the last entry is the time feature
  int action_dim = 0;
  Box action;                       // action bounds; out-of-range actions are clipped
  int episode_length = 0;           // steps per episode (500); then truncated
  int frame_skip = 1;               // physics substeps per env step (1 where there is no physics)
  double control_dt = 0.0;          // simulated seconds per env step
  double time_feature_scale = 0.0;  // obs[obs_dim - 1] = t * this
  TaskSpec task;

  int time_feature_index() const noexcept { return obs_dim - 1; }
};

/// Per-step diagnostics, against the context in force.
struct StepInfo {
  int t = 0;              // steps since reset, after this step
  float distance = 0.0f;  // task distance of the new observation to G
  bool success = false;   // distance < threshold (the eval counts only the final step)
};

/// Outcome of one step; the observation is written into the caller's buffer.
struct StepResult {
  float reward = 0.0f;      // task reward against G
  bool terminated = false;  // true terminal state (never in the maze envs; bootstrap through)
  bool truncated = false;   // time limit reached (t == episode_length): reset now
  StepInfo info;

  bool done() const noexcept { return terminated || truncated; }
};

/// One environment instance (see the file comment for the protocol and thread rules).
class Env {
 public:
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
  virtual ~Env() = default;

  /// Static description of this env kind (shared, immutable).
  virtual const EnvSpec& spec() const noexcept = 0;

  /// Starts a new episode deterministically from `seed`: draws G from the training sampler,
  /// applies the reset noise, sets t = 0 and writes the first observation (obs_dim floats).
  void reset(std::uint64_t seed, Span<float> obs) {
    spec_ = &spec();
    assert(obs.size() == static_cast<std::size_t>(spec_->obs_dim));
    Rng rng(seed);
    const TaskSpec& task = spec_->task;
    assert(task.goal_indices.size() <= kMaxContextDim);
    context_.fill(0.0f);
    task.sample(rng, Span<float>(context_.data(), task.goal_indices.size()));
    t_ = 0;
    do_reset(rng, obs);
  }

  /// Replaces the context G for the rest of the episode (context_dim floats).
  void set_context(Span<const float> context) noexcept {
    assert(context.size() == spec().task.goal_indices.size());
    for (std::size_t i = 0; i < context.size(); ++i) context_[i] = context[i];
  }
  /// The context G in force.
  Span<const float> context() const noexcept {
    return Span<const float>(context_.data(), spec().task.goal_indices.size());
  }

  /// Applies `action` (action_dim floats, clipped to the box), advances one env step and
  /// writes the new observation (obs_dim floats). No allocation, no exceptions.
  StepResult step(Span<const float> action, Span<float> obs) noexcept {
    assert(spec_ != nullptr && "reset() before step()");
    assert(action.size() == static_cast<std::size_t>(spec_->action_dim));
    assert(obs.size() == static_cast<std::size_t>(spec_->obs_dim));
    ++t_;
    do_step(action, obs);
    const TaskSpec& task = spec_->task;
    StepResult r;
    r.info.t = t_;
    r.info.distance = task.distance(obs, Span<const float>(context_.data(), task.goal_indices.size()));
    r.info.success = r.info.distance < task.success_threshold;
    r.reward = -r.info.distance;
    r.truncated = t_ >= spec_->episode_length;
    return r;
  }

  /// Steps since reset.
  int t() const noexcept { return t_; }

  /// Largest context dimension an env may declare (AntFall: x, y, z).
  static constexpr std::size_t kMaxContextDim = 3;

 protected:
  Env() = default;

  /// Restores the initial state with reset noise drawn from `rng`, writes the observation.
  virtual void do_reset(Rng& rng, Span<float> obs) = 0;
  /// Advances one env step with `action`; writes the observation with time feature t().
  virtual void do_step(Span<const float> action, Span<float> obs) noexcept = 0;

 private:
  const EnvSpec* spec_ = nullptr;  // spec(), cached at reset (spec() is virtual)
  std::array<float, kMaxContextDim> context_{};
  int t_ = 0;
};

}  // namespace ringrl::envs
