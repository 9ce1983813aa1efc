// HIRO as an Algorithm of the run driver (learner/run_driver.h): `ringrl train hiro`.
//
// Contract:
// * Records: Transition (one env step; the budget unit), MetaTransition and the evaluator's
//   HiroEval record. A malformed record throws std::runtime_error naming the actor.
// * Rate limiter (spec hiro.md §3, §7.3): the first initial_steps env steps go straight into
//   the low-level replay with no update. After that, every step() admits exactly one queued
//   env step and takes one low-level update, and one high-level update each time the low
//   update count reaches a multiple of high_every, so low updates = env steps - initial and
//   high updates = floor(low / high_every) at every moment the driver looks. Records that
//   arrive ahead of the learner wait in a FIFO (never dropped, checkpointed with the state);
//   actors that run ahead wait on it and on their rings; they never change the ratio. Meta
//   transitions and eval records are taken on arrival.
// * Publishing: the actor-nets blob (HiroLearner::write_blob) after every publish_every low
//   updates, when either level's acting network has changed since the last publication
//   (step() returns false otherwise): an actor step comes every update_period-th update (2),
//   so half the publications would repeat the weights the actors hold. The learner version
//   is the low update count; a record's lag counts the updates since the publication its
//   collector acted with, which may hold the current weights.
// * Evaluation: the last actor slot is the evaluator (kind "hiro-eval") when eval is on; its
//   records give the metrics' eval columns and the result's best and final success. solved()
//   is best eval success >= success_threshold; the driver stops on it only with
//   stop_on_success (off by default for HIRO).
// * Collector streams: each collector's launch carries step_base, the env steps its slot
//   pushed before this learner process (actors/hiro/hiro_actor.h keys its episodes from it);
//   checkpoints keep, per slot, that base plus the transitions received from it since, so a
//   resumed run's collectors continue their streams instead of repeating them.
// * Other nodes (one run across nodes, learner/actor_source.h): each runs `actors` more
//   collectors (the evaluator stays here), numbered after the local ones (actors, actors + 1,
//   ...) in the per-collector counts, streams and env_steps_per_actor; every collector's
//   launch counts them all in train_actors (the fair-share pace). The ratio holds over the whole job, since
//   the rate limiter admits steps from one FIFO whatever node they come from.
// * State: HiroLearner (both agents, both replays, its stream) + counters + the queue + the
//   collectors' stream positions (section layout 2; a layout-1 checkpoint loads, its positions
//   taken from the steps each collector sent).
// * Threads: learner_threads (0 = auto, learner::resolve_learner_threads()) is what the HiroLearner's
//   arena runs on (HiroOptions::threads, set by the wing for each repetition); torch's
//   intra-op threads in the learner process (the run driver's learner_threads) are
//   hiro_torch_threads(): 1 under the fused kernel, learner_threads under the eager one.
// * One thread (the driver's) uses an instance. Options are validated once (UsageError).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "learner/hiro/hiro_learner.h"
#include "learner/run_driver.h"

namespace ringrl::hiro {

inline constexpr std::uint64_t kDefaultInitialSteps = 2500;  // §3: 5 episodes x 500
inline constexpr std::uint32_t kDefaultHighEvery = 10;       // §3: 1 high update per 10 env steps
inline constexpr std::uint64_t kDefaultEvalEvery = 50000;    // §10.6
inline constexpr std::uint32_t kDefaultEvalEpisodes = 50;    // §10.6

struct HiroTrainOptions : learner::RunSettings {
  HiroTrainOptions() { stop_on_success = false; }  // HIRO runs its budget unless asked

  HiroOptions learner;       // dims, boxes, TD3 hyperparameters, seed, device
  std::string env;           // identity: env name
  std::string targets;       // identity: single | multi
  std::uint32_t actors = 1;  // collector processes
  std::uint64_t initial_steps = kDefaultInitialSteps;
  std::uint32_t high_every = kDefaultHighEvery;
  std::uint32_t publish_every = 1;    // low updates between weight publications
  std::uint32_t throttle_slack = 20;  // env steps an actor may run ahead of its share (ring sizing)
  bool eval = true;                   // run the evaluator actor
  std::uint64_t eval_every = kDefaultEvalEvery;
  std::uint32_t eval_episodes = kDefaultEvalEpisodes;
  double success_threshold = 1.0;     // solved() when best eval success >= this
  std::uint64_t max_env_steps = 0;    // per repetition; 0 = unlimited
  std::uint32_t learner_threads = 0;  // the learner's threads; 0 = auto (learner::resolve_learner_threads)

  /// Throws UsageError naming the first bad value.
  void validate() const;
};


/// The wing itself (what run_hiro_training drives; tests drive it by hand). It keeps a
/// reference to `options`, which must outlive it.
std::unique_ptr<learner::Algorithm> make_hiro_algorithm(const HiroTrainOptions& options);

/// Runs the training through the run driver; returns the driver's summary.
learner::DriverSummary run_hiro_training(const HiroTrainOptions& options);

}  // namespace ringrl::hiro
