// spawn_process: the one fork/exec path of the project (the supervisor's actors, the child runs
// of `train --repetitions` and `tune`).
//
// Contract: argv and the environment are built before fork, so the child makes only
// async-signal-safe calls until exec. The child gets the parent's death signal (prctl), an
// empty signal mask and default dispositions for SIGINT, SIGTERM, SIGHUP and SIGPIPE (a
// parent's ignored or blocked signals do not leak into it), optionally its own process group
// (terminal signals then reach only the parent, which forwards them) and optionally a log file
// for stdout and stderr with stdin on /dev/null. If the parent died before prctl took effect
// the child exits kExitFailure; if exec fails it exits kExitExecFailed. Throws
// std::system_error when fork fails. Thread-safe as fork is.
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
  std::string log;                         // non-empty: stdout and stderr append here, stdin is /dev/null
};

/// Starts the process; returns its pid.
pid_t spawn_process(const SpawnOptions& o);

}  // namespace ringrl
