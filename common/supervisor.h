// Starts, watches, restarts and stops the actor processes of one run.
//
// The supervisor lives in the learner process (one thread calls every method). start() forks
// and execs one actor per slot (`<executable> <args(slot)...>`); each child asks the kernel
// for SIGKILL when its parent dies (PR_SET_PDEATHSIG), so no actor outlives the learner.
// poll() reaps exited actors and restarts them with exponential backoff, at most
// max_restarts times per slot; restarts are counted in the slot and logged. An actor whose
// heartbeat is older than heartbeat_timeout is killed and treated as dead. stop() sets the
// run's stop flag, waits up to stop_grace for the actors to exit, then sends SIGTERM and
// finally SIGKILL, and reaps every child. The destructor calls stop().
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/run_segment.h"

namespace ringrl {

struct SupervisorOptions {
  std::string executable;  // binary to exec; empty = this process's own binary
  std::function<std::vector<std::string>(std::uint32_t slot)> args;  // argv[1..] for a slot
  std::uint32_t max_restarts = 5;                                    // per slot
  std::chrono::milliseconds restart_backoff{100};                    // first delay; doubles per restart
  std::chrono::milliseconds max_restart_backoff{5000};
  std::chrono::milliseconds heartbeat_timeout{0};  // 0 = no hang detection
  std::chrono::milliseconds stop_grace{5000};      // before SIGTERM; as long again before SIGKILL
  std::function<int(std::uint32_t slot)> nice;  // added to a slot's nice value (spawn.h), 0 to 19; null = 0
};

class Supervisor {
 public:
  Supervisor(RunSegment& segment, SupervisorOptions options);
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  /// Starts every actor. Throws std::system_error when fork fails.
  void start();
  /// Reaps and restarts; call often (every few ms) from the learner loop. Returns the number
  /// of actors currently running.
  std::uint32_t poll();
  /// Stops every actor (see above). Idempotent.
  void stop();

  std::uint32_t restarts(std::uint32_t slot) const;
  std::uint32_t total_restarts() const;
  /// True when the slot exhausted its restarts.
  bool failed(std::uint32_t slot) const;
  bool all_failed() const;
  pid_t pid(std::uint32_t slot) const;

 private:
  struct Child {
    pid_t pid = 0;
    std::uint32_t restarts = 0;
    bool failed = false;
    std::chrono::steady_clock::time_point restart_at{};
    std::chrono::steady_clock::time_point started_at{};
  };
  void spawn(std::uint32_t slot);
  void on_exit(std::uint32_t slot, int status);

  RunSegment& segment_;
  SupervisorOptions options_;
  std::vector<Child> children_;
  bool stopped_ = false;
};

/// Path of this process's executable (/proc/self/exe). Throws std::system_error.
std::string self_executable();
/// Path of the executable `name` in the directory of this process's executable.
std::string sibling_executable(std::string_view name);

/// Human form of a waitpid status: "exit status 3", "signal 9 (Killed)".
std::string describe_wait_status(int status);

}  // namespace ringrl
