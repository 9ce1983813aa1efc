// The GA evaluator actor (spec brain_coder §6.5): scores the genomes the GA learner requests.
//
// One call of run_ga_actor() is the whole life of an actor process (single-threaded). Loop:
// take the newest request blob (common/ga/request_layout.h; one whose fingerprint is not this
// actor's population x genome length is refused with one log line and exit status
// kExitActorRefused); score the rows j with j % actors == its place (slot, or run_slot) on the task (envs/bf, paper
// variant, max_code_length = genome length); push one GaFitness record per row, waiting while
// the ring is full (back-pressure, never dropping); flush; then wait, with heartbeats, for
// the next request. It stops when the learner sets the run's stop flag or the process gets
// SIGINT/SIGTERM. With the learner as evaluator every request is empty and the actor idles.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/exit_status.h"
#include "common/ga/fitness_record.h"
#include "envs/bf/scorer.h"

namespace ringrl::actors {

/// Exit status of an actor handed a request blob of another layout.

struct GaActorOptions {
  std::string segment;       // run segment name
  std::uint32_t slot = 0;    // this actor's slot (its ring)
  std::uint32_t actors = 1;  // evaluators in the run: this one takes rows j % actors == its place
  /// Its place among the run's evaluators when that is not its ring slot (an actor node of a
  /// run across nodes, mpi/node_bridge.h: rings are numbered per node); -1 = slot.
  std::int64_t run_slot = -1;
  std::string task = "reverse";
  std::uint32_t population = 100;
  int genome_length = 100;
  bool require_parent_creator = true;  // refuse a segment not made by the parent process

  /// Throws UsageError naming the first bad value.
  void validate() const;
};

/// The record answering request row `row` (genome `genome`) scored by `scorer`.
GaFitnessRecord score_ga_row(bf::Scorer& scorer, std::uint32_t row, const std::string& genome);

/// Runs until stopped; returns the process exit status (0 on a requested stop).
int run_ga_actor(const GaActorOptions& options);

}  // namespace ringrl::actors
