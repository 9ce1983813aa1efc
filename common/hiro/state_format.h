// The HIRO learner's checkpoint section ("hiro"): its versions and magic numbers, and the
// readers and writers of its parts that are not TD3's (common/td3_state_format.h). The writers
// (learner/hiro/hiro_algorithm.cc, hiro_learner.cc) and every reader (their loads, Python's
// ringrl.checkpoint in python/src/checkpoint_py.cc) go through these, so the layout has one
// definition. Torch-free.
//
// The section: SectionHead (the trainer's counters, the collectors' stream positions, the
// steps queued for the learner), then the learner: its head (magic, version, RNG state), the
// low and the high TD3 agent, then the low and the high FIFO replay (td3_state_format.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/byte_codec.h"
#include "common/hiro/eval_record.h"
#include "common/td3_state_format.h"

namespace ringrl::hiro_format {

/// Layout of the "hiro" section (2: with the collectors' stream positions; 1: without).
inline constexpr std::uint32_t kStateVersion = 2;
inline constexpr std::uint32_t kStateVersionNoStreams = 1;
/// The two-level learner inside it.
inline constexpr std::uint32_t kLearnerMagic = 0x4f524948;  // "HIRO"
inline constexpr std::uint32_t kLearnerVersion = 1;

/// Bounds a reader holds the section to.
inline constexpr std::uint64_t kMaxCollectors = 4096;
inline constexpr std::uint64_t kMaxQueuedSteps = std::uint64_t{1} << 16;  // the arrival queue's hard cap
inline constexpr std::uint64_t kMaxQueuedRecordBytes = std::uint64_t{1} << 20;

/// The trainer's part of the section, before the learner.
struct SectionHead {
  std::uint32_t version = kStateVersion;  // what read_section_head() found; the writer writes kStateVersion
  std::uint64_t env_steps = 0, low_updates = 0, high_updates = 0, evaluations = 0;
  hiro::HiroEvalRecord last_eval{};
  double best_success = 0, intrinsic_reward = 0;
  std::vector<std::uint64_t> per_collector;  // env steps each collector sent
  std::vector<std::uint64_t> positions;      // each collector's stream position (empty in version 1)
  struct Queued {
    std::uint32_t actor = 0;
    std::vector<std::byte> bytes;  // one transition record, not yet decoded
  };
  std::vector<Queued> queue;  // steps that arrived and were not yet handed to the learner
};
void write_section_head(ByteWriter& w, const SectionHead& h);
SectionHead read_section_head(ByteReader& r);

/// The learner's head: magic, version, then its RNG state (returned).
void write_learner_head(ByteWriter& w, std::uint64_t rng_state);
std::uint64_t read_learner_head(ByteReader& r);

}  // namespace ringrl::hiro_format
