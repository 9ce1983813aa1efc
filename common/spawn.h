// spawn_process: the one path that starts a process in the project (the supervisor's actors,
// the child runs of `train --repetitions` and `tune`).
//
// Contract: the child is cloned with CLONE_VM | CLONE_VFORK (as posix_spawn does), not forked:
// no page of the parent is copied or write-protected, so it is safe after MPI_Init over
// transports that register memory (InfiniBand verbs), and it costs the same at any heap size.
// The parent blocks every signal around the clone; the child resets every handled signal to
// its default before it opens its mask, so no handler of the parent's runs in it. argv and
// the environment are built before the clone, and the child makes only system calls until
// exec. The child gets the parent's death signal (prctl), an empty signal mask and default
// dispositions (a parent's ignored, handled or blocked signals do not leak into it),
// optionally its own process group (terminal signals then reach only the parent, which
// forwards them), optionally a lower scheduling priority (`nice` added to the parent's) and
// optionally a log file for stdout and stderr with stdin on /dev/null. If
// the parent died before prctl took effect the child exits kExitFailure; if exec fails it
// exits kExitExecFailed. Returns once the child has exec'd or exited. Throws std::system_error
// when the clone fails. Thread-safe.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace ringrl {

struct SpawnOptions {
  std::string executable;                  // path to exec
  std::vector<std::string> args;           // argv[1..]; argv[0] is `executable`
  bool inherit_environment = true;         // false: exactly `environment`
  std::vector<std::string> environment;    // "NAME=value" entries when not inherited
  int death_signal = SIGKILL;              // sent to the child when the parent dies
  bool own_process_group = false;
  int nice = 0;                            // added to the child's nice value (0 to 19; 0: the parent's)
  std::string log;                         // non-empty: stdout and stderr append here, stdin is /dev/null
};

/// Starts the process; returns its pid.
pid_t spawn_process(const SpawnOptions& o);

}  // namespace ringrl
