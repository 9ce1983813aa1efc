// Measurement helpers of the program-synthesis benchmarks (`ringrl bench npe`,
// `ringrl profile learner`): realistic batches for the learner alone, and the actors' ceiling.
#pragma once

#include <cstdint>
#include <vector>

#include "actors/pqt/pqt_actor.h"
#include "learner/pqt/episode_batch.h"
#include "learner/pqt/pqt_update.h"

namespace ringrl::bench {

/// `count` batches sampled from `learner`'s current policy and scored on the task of `ao`:
/// realistic data for the learner alone.
std::vector<learner::EpisodeBatch> synthetic_batches(const learner::PqtLearner& learner,
                                                     const actors::PqtActorOptions& ao, int count);

/// Actor-only ceiling: `n` forked processes sampling and scoring with fixed `weights` at once
/// for `seconds`; their summed programs per second. No learner, no transport.
double actor_only_ceiling(const actors::PqtActorOptions& ao, const std::vector<float>& weights, std::uint32_t n,
                          double seconds);

}  // namespace ringrl::bench
