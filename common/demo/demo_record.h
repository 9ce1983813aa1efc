// The demo's record: the one thing its actors and its learner share (actors/demo,
// learner/demo). The demo is the smallest complete wing of ringrl, the one to read first: a
// learner holds a weight vector w; each actor reads the newest w from the weight channel and
// pushes noisy gradients g = (target - w) + noise for one chunk of w; the learner applies
// w += lr * g and publishes w again. The distance to the target shrinks to the noise's level.
//
// Record (type kRecordDemoGradient): DemoRecord, then `count` floats: g for the entries
// (chunk * count + k) % dim of w, k in [0, count).
#pragma once

#include <cmath>
#include <cstdint>

namespace ringrl::demo {

struct DemoRecord {
  std::uint64_t seq;    // the actor's record number
  std::uint32_t chunk;  // which `count` entries of w
  std::uint32_t count;  // floats that follow
};

/// Entry j of the target the learner's w moves to.
inline float demo_target(std::uint32_t j) { return std::sin(0.01f * static_cast<float>(j)); }

/// The launch parameter (ActorLaunch::params) that tells an actor how many floats a record holds.
inline constexpr const char* kRecordFloatsParam = "record_floats";

}  // namespace ringrl::demo
