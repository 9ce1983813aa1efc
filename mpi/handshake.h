// The one handshake every command over an MPI job starts with (one run across nodes,
// mpi/node_bridge.h; tune and the repetition spread, sweeps/cluster_jobs.h): each rank other
// than 0 sends rank 0 its Hello (build, fingerprint of the settings every rank must share,
// host, run slots); rank 0 checks every Hello against its own (mpi::refusal), runs its own last
// check, and answers every rank with a Welcome that carries the refusal, if any.
//
// Contract:
// * wait_for() returns the next message with `tag` (from any rank), progressing the
//   communicator while it waits; nothing when `timeout` passes or a signal asks this process
//   to stop (common/signals.h).
// * welcome_ranks() (rank 0) returns every rank's Hello, indexed by rank (its own first). A
//   rank that says nothing within `hello_wait`, a Hello that does not decode or does not match,
//   a rank that says hello twice, a Hello that carries the rank's own error (a check of its
//   own that failed: every rank still takes part in the handshake, so none is left waiting in a
//   collective), or a UsageError from `check` refuses the job: every rank is told why, the sends are
//   flushed (bounded), and welcome_ranks() throws UsageError with that one line.
// * greet_rank0() (every other rank) sends `mine` and waits for rank 0's answer: the Welcome
//   (its error empty when accepted), or nothing when a signal came first.
// * One thread (the command's main thread) calls them, once per job.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <vector>

#include "mpi/comm.h"
#include "mpi/job_messages.h"

namespace ringrl::mpi {

/// How long rank 0 waits for every other rank's Hello.
inline constexpr std::chrono::minutes kHelloWait{5};

std::optional<Message> wait_for(Comm& comm, int tag, std::chrono::steady_clock::duration timeout);

/// Rank 0's own error (mine.error) refuses the job too, after every rank was heard.
std::vector<Hello> welcome_ranks(Comm& comm, const Hello& mine, const std::function<void()>& check = {},
                                 std::chrono::steady_clock::duration hello_wait = kHelloWait);

std::optional<Welcome> greet_rank0(Comm& comm, const Hello& mine);

}  // namespace ringrl::mpi
