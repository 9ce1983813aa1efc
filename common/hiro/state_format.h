// The HIRO learner's checkpoint section ("hiro") and the TD3 agents and FIFO replays inside
// it: the magic numbers and versions that their writers (learner/hiro/hiro_algorithm.cc,
// learner/hiro/hiro_learner.cc, learner/td3/td3.cc, learner/td3/fifo_replay.cc) put and every
// reader checks, among them the torch-free reader of Python's ringrl.checkpoint
// (python/src/checkpoint_py.cc).
#pragma once

#include <cstdint>

namespace ringrl::hiro_format {

/// Layout of the "hiro" section (2: with the collectors' stream positions; 1: without).
inline constexpr std::uint32_t kStateVersion = 2;
inline constexpr std::uint32_t kStateVersionNoStreams = 1;
/// The two-level learner inside it.
inline constexpr std::uint32_t kLearnerMagic = 0x4f524948;  // "HIRO"
inline constexpr std::uint32_t kLearnerVersion = 1;
/// Each level's TD3 agent.
inline constexpr std::uint32_t kTd3Magic = 0x33445431;  // "1TD3"
inline constexpr std::uint32_t kTd3Version = 1;
/// Each level's FIFO replay.
inline constexpr std::uint32_t kReplayMagic = 0x4f464946;  // "FIFO"
inline constexpr std::uint32_t kReplayVersion = 1;

}  // namespace ringrl::hiro_format
