// The program-synthesis actor process: samples programs from the newest policy weights,
// scores them on the task, and pushes one ProgramEpisode record per program into its ring.
//
// One call of run_pqt_actor() is the whole life of an actor process (single-threaded).
// Per batch: claim a unit of the run's work gate (common/work_gate.h: the learner bounds the
// policy lag there); pick up new weights if the version moved; sample B programs (LstmSampler, with
// their behaviour log-probs); score each with envs/bf; push the records, waiting while the
// ring is full (back-pressure; never dropping); flush; heartbeat. It stops when the learner
// sets the run's stop flag or the process gets SIGINT/SIGTERM.
#pragma once

#include <cstdint>
#include <string>

#include "common/pqt/policy_layout.h"
#include "envs/bf/scorer.h"

namespace ringrl::actors {

struct PqtActorOptions {
  std::string segment;     // run segment name
  std::uint32_t slot = 0;  // this actor's slot
  std::uint64_t seed = 1;  // sampling seed (batch k uses a seed derived from it and k)
  std::string task = "reverse";
  bf::ScoreOptions score{};  // scoring settings (max_code_length = T)
  PolicyShape shape{};
  int batch_size = 64;  // programs per sampled batch
  bool eos_token = false;
  float softmax_tr = 1.0f;
  bool require_parent_creator = true;  // refuse a segment not made by the parent process
};

/// Runs until stopped; returns the process exit status (0 on a requested stop).
int run_pqt_actor(const PqtActorOptions& options);

/// The actor's work without a segment: sample and score for `seconds` with the policy blob
/// `weights` (layout of `options.shape`) and return programs per second. This is the
/// actor-only ceiling of `ringrl bench npe` (no learner, no transport).
double actor_only_programs_per_s(const PqtActorOptions& options, const float* weights, double seconds);

}  // namespace ringrl::actors
