// Exit statuses: the one list of what a ringrl process's exit status means. Parents (the
// supervisor, the repetition spread, tuning, the cluster jobs) read these; nothing else
// spells a status as a number.
#pragma once

namespace ringrl {

inline constexpr int kExitOk = 0;
/// A runtime failure: a damaged file, an OS error, a dead actor that cannot be replaced.
inline constexpr int kExitFailure = 1;
/// Bad command line or configuration (UsageError); the process said why in one line.
inline constexpr int kExitUsage = 2;
/// An actor refused what the learner sent it (a weight blob or request of the wrong shape or
/// layout version), after one log line saying what did not fit.
inline constexpr int kExitActorRefused = 4;
/// exec of a child process failed (the shell's convention).
inline constexpr int kExitExecFailed = 127;
/// A run ended by SIGINT or SIGTERM after writing its checkpoint (128 + SIGINT).
inline constexpr int kExitInterrupted = 130;

}  // namespace ringrl
