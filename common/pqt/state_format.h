// The PQT learner's checkpoint section ("pqt"): the version and tag that its writer
// (learner/pqt/pqt_trainer.cc, learner/pqt/pqt_update.cc) puts and every reader checks,
// among them the torch-free reader of Python's ringrl.checkpoint (python/src/checkpoint_py.cc).
#pragma once

#include <cstdint>

namespace ringrl::pqt_format {

/// Layout of the "pqt" section (the trainer's counters, best program, then the learner state).
inline constexpr std::uint32_t kStateVersion = 1;
/// Opens the learner state inside it (policy, optimizer, top-k, ...).
inline constexpr char kLearnerTag[8] = {'R', 'R', 'L', 'P', 'Q', 'T', 'S', '3'};

}  // namespace ringrl::pqt_format
