// VectorEnv: N envs of one kind stepped together, on a oneTBB arena, with NEXT_STEP autoreset.
// The core of Python's ringrl.envs.VecMazeEnv (the binding only wraps it) and usable from C++.
//
// Contract:
// * Construction makes N envs with `make` and validates num_envs (1..kMaxEnvs) and threads
//   (0 = one per core, at most N; else 1..kMaxThreads, capped at N): UsageError otherwise.
// * Each env has an episode-seed sequence: reset with a seed s starts episode 0 from s; a
//   reset without one (and every autoreset) starts episode k from episode_seed(s, k), so a
//   seed reproduces every later episode. The first reset of each env needs a seed.
// * step(actions) takes N x action_dim finite floats (the caller checks them) and writes the
//   outputs below in place. NEXT_STEP autoreset: the step after an episode ended resets that
//   env instead, ignoring its action, with reward 0 and neither terminated nor truncated.
//   After a reset, distance and success are those of the first observation.
// * Outputs are arrays owned by the VectorEnv, rows in env order; they stay valid (and keep
//   their last values) after close(), for the life of the object.
// * One caller at a time: a second concurrent reset/step/set_target/close throws
//   std::runtime_error instead of racing. Any call but the accessors on a closed VectorEnv
//   throws std::runtime_error.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "envs/env.h"

namespace ringrl::envs {

/// Seed of episode k (k >= 1) after a reset seeded with `base`: splitmix64 of base + k * golden,
/// so that the episodes of env i and env i + 1 (bases s + i, s + i + 1) never share a seed.
std::uint64_t episode_seed(std::uint64_t base, std::uint64_t k) noexcept;

/// One env's episode-seed sequence (see VectorEnv's contract): a reset with a seed s starts
/// episode 0 from s; a reset without one starts episode k from episode_seed(s, k).
class EpisodeSeeds {
 public:
  /// The seed of the next episode; a `seed` restarts the sequence. Call seeded() first: the
  /// first reset needs a seed.
  std::uint64_t next(std::optional<std::uint64_t> seed) noexcept {
    if (seed) {
      base_ = *seed;
      episode_ = 0;
    }
    return episode_++ == 0 ? base_ : episode_seed(base_, episode_ - 1);
  }
  /// True once a seeded reset happened.
  bool seeded() const noexcept { return episode_ > 0; }

 private:
  std::uint64_t base_ = 0;     // seed of the last seeded reset
  std::uint64_t episode_ = 0;  // episodes begun since then
};

class VectorEnv {
 public:
  static constexpr int kMaxEnvs = 1 << 16;
  static constexpr int kMaxThreads = 1024;
  using Factory = std::function<std::unique_ptr<Env>()>;

  VectorEnv(const Factory& make, int num_envs, int threads);
  ~VectorEnv();
  VectorEnv(const VectorEnv&) = delete;
  VectorEnv& operator=(const VectorEnv&) = delete;

  /// seeds has num_envs() entries; nullopt = the next seed of that env's sequence.
  void reset(const std::vector<std::optional<std::uint64_t>>& seeds);
  /// actions: num_envs() rows of action_dim() floats, row-major.
  void step(const float* actions);
  /// Replaces env i's context G (evaluation targets).
  void set_target(std::size_t i, Span<const float> target);
  /// Drops the envs; the outputs stay.
  void close();

  bool closed() const noexcept { return slots_.empty(); }
  std::size_t num_envs() const noexcept { return n_; }
  int threads() const noexcept { return threads_; }
  std::size_t obs_dim() const noexcept { return obs_dim_; }
  std::size_t action_dim() const noexcept { return act_dim_; }
  std::size_t target_dim() const noexcept { return ctx_dim_; }
  /// True once env i has had a seeded reset.
  bool seeded(std::size_t i) const { return slots_.at(i).seeds.seeded(); }

  // Outputs (see the contract).
  float* obs() noexcept { return obs_.data(); }                // [N, obs_dim]
  double* reward() noexcept { return reward_.data(); }         // [N]
  bool* terminated() noexcept { return terminated_.get(); }    // [N]
  bool* truncated() noexcept { return truncated_.get(); }      // [N]
  std::int32_t* t() noexcept { return t_.data(); }             // [N] steps since the env's reset
  float* distance() noexcept { return distance_.data(); }      // [N] task distance to its target
  bool* success() noexcept { return success_.get(); }          // [N] distance < the task's threshold
  float* target() noexcept { return target_.data(); }          // [N, target_dim] each env's G

 private:
  struct Slot {
    std::unique_ptr<Env> env;
    EpisodeSeeds seeds;
    bool needs_reset = true;  // the last step ended the episode
  };
  class Busy;

  void check_open(const char* what) const;
  void reset_slot(std::size_t i, std::optional<std::uint64_t> seed);
  void copy_target(std::size_t i);
  template <class F>
  void run_all(const F& f);

  std::size_t n_ = 0, obs_dim_ = 0, act_dim_ = 0, ctx_dim_ = 0;
  int threads_ = 1;
  std::vector<Slot> slots_;
  std::unique_ptr<tbb::task_arena> arena_;
  std::atomic<bool> busy_{false};
  std::vector<float> obs_;
  std::vector<double> reward_;
  std::unique_ptr<bool[]> terminated_, truncated_, success_;
  std::vector<std::int32_t> t_;
  std::vector<float> distance_;
  std::vector<float> target_;
};

}  // namespace ringrl::envs
