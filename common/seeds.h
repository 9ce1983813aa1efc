// Named seed derivations: how one run seed becomes the seeds of its repetitions and actors.
//
// A run has one base seed S. Repetition r trains a fresh model from S + r. The actor in slot i
// samples from actor_seed(S, i): an affine map with prime strides, so different (S, i) pairs of
// a realistic range give different seeds, and the generators hash their seeds (mix_seed, and
// common/rng.h's Rng), so nearby seeds still give unrelated streams.
// The numbers are part of a run's identity: changing them changes every run's trajectories.
#pragma once

#include <cstdint>

namespace ringrl {

/// Multiplier of the base seed in an actor seed (a prime, so nearby base seeds spread apart).
inline constexpr std::uint64_t kActorSeedBaseStride = 1000003ULL;
/// Multiplier of the slot index in an actor seed (a prime).
inline constexpr std::uint64_t kActorSeedSlotStride = 7919ULL;
/// Offset, so that base seed 0 and slot 0 do not give seed 0.
inline constexpr std::uint64_t kActorSeedOffset = 17ULL;

/// The seed of the actor in `slot` for a run with base seed `base`.
constexpr std::uint64_t actor_seed(std::uint64_t base, std::uint32_t slot) noexcept {
  return base * kActorSeedBaseStride + std::uint64_t{slot} * kActorSeedSlotStride + kActorSeedOffset;
}

/// The model seed of repetition `rep` for a run with base seed `base`.
constexpr std::uint64_t repetition_seed(std::uint64_t base, std::uint32_t rep) noexcept { return base + rep; }

/// SplitMix64 finaliser: a well-mixed 64-bit value from `seed` and a stream index `k`, for
/// per-batch or per-episode seeds inside one actor.
constexpr std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t k) noexcept {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (k + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace ringrl
