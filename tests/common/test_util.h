// Helpers shared by the common/ tests: unique run ids and /dev/shm checks.
#pragma once

#include <unistd.h>

#include <atomic>
#include <string>

#include "common/shm_segment.h"

namespace ringrl::testing {

inline std::string unique_run_id(const std::string& what) {
  static std::atomic<int> counter{0};
  return "t-" + what + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

inline bool shm_exists(const std::string& name) { return access(("/dev/shm/" + name).c_str(), F_OK) == 0; }

}  // namespace ringrl::testing
