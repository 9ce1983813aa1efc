// Rng: the one small deterministic random stream of the project (envs, actors, the TD3 and
// HIRO learners: replay indices, target-smoothing noise, relabelling candidates).
//
// Contract: splitmix64 bits with explicit uniform and normal transforms, so a seed gives the
// same numbers with any standard library and on any device (draws happen on the host). The
// whole state is one u64: state()/set_state() save and restore it exactly (checkpoints,
// bit-identical resumes). Not thread-safe: one thread uses an instance.
#pragma once

#include <cmath>
#include <cstdint>

namespace ringrl {

class Rng {
 public:
  explicit Rng(std::uint64_t seed = 0) noexcept : state_(seed) {}

  /// Next 64 random bits.
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += kGolden);
    z = (z ^ (z >> 30)) * kMix1;
    z = (z ^ (z >> 27)) * kMix2;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform01() noexcept { return static_cast<double>(next() >> kDropBits) * kUnit53; }
  /// Uniform in [lo, hi).
  double uniform(double lo, double hi) noexcept { return lo + (hi - lo) * uniform01(); }
  /// Uniform integer in [0, n), n >= 1 (multiply-shift; bias below 2^-44 for n < 2^20).
  std::uint64_t below(std::uint64_t n) noexcept {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  /// Standard normal N(0, 1) (Box-Muller, one value per two uniforms: no cached state).
  double normal() noexcept {
    const double u1 = 1.0 - uniform01();  // (0, 1]: the log is finite
    const double u2 = uniform01();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
  }

  std::uint64_t state() const noexcept { return state_; }
  void set_state(std::uint64_t s) noexcept { state_ = s; }

 private:
  static constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;  // splitmix64 increment
  static constexpr std::uint64_t kMix1 = 0xBF58476D1CE4E5B9ULL;    // splitmix64 finaliser
  static constexpr std::uint64_t kMix2 = 0x94D049BB133111EBULL;
  static constexpr int kDropBits = 11;                         // 64 - 53
  static constexpr double kUnit53 = 1.0 / 9007199254740992.0;  // 2^-53
  static constexpr double kTwoPi = 6.283185307179586;
  std::uint64_t state_;
};

}  // namespace ringrl
