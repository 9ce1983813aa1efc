// The PQT learner's checkpoint section ("pqt"): its version and tag, and the readers and
// writers of every part that is not the learner's own tensors and structures. The writers
// (learner/pqt/pqt_trainer.cc, pqt_update.cc) and every reader (their loads, Python's
// ringrl.checkpoint in python/src/checkpoint_py.cc) go through these, so the layout has one
// definition. Torch-free.
//
// The section: SectionHead (the trainer's counters and best program), then the learner:
// LearnerHead (tag, policy layout fingerprint, T, version), the parameters (u64 count, then
// one float block each, common/float_block.h, in the policy layout's order), the RMSProp
// accumulators (the same), the baselines, the sampling RNG, the top-k queue, the replay buffer.
#pragma once

#include <cstdint>
#include <string>

#include "common/byte_codec.h"

namespace ringrl::pqt_format {

/// Layout of the "pqt" section (the trainer's counters, best program, then the learner state).
inline constexpr std::uint32_t kStateVersion = 1;
/// Opens the learner state inside it (policy, optimizer, top-k, ...).
inline constexpr char kLearnerTag[8] = {'R', 'R', 'L', 'P', 'Q', 'T', 'S', '3'};
/// The longest program a reader takes.
inline constexpr std::uint64_t kMaxCodeBytes = std::uint64_t{1} << 20;

/// The trainer's part of the section, before the learner.
struct SectionHead {
  std::uint64_t npe = 0, batches = 0, dropped_stale = 0;
  double best_reward = 0;
  std::string best_code;
  bool solved = false;
  std::string solution;
};
void write_section_head(ByteWriter& w, const SectionHead& h);
SectionHead read_section_head(ByteReader& r);  // checks the version

/// The learner's head.
struct LearnerHead {
  std::uint64_t fingerprint = 0;  // of the policy layout (common/pqt/policy_layout.h)
  std::int32_t max_len = 0;       // T
  std::uint64_t version = 0;      // updates so far
};
void write_learner_head(ByteWriter& w, const LearnerHead& h);
LearnerHead read_learner_head(ByteReader& r);  // checks the tag

}  // namespace ringrl::pqt_format
