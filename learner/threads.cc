#include "learner/threads.h"

#include <ATen/Parallel.h>
#include <sched.h>

#include <algorithm>

namespace ringrl::learner {

void set_torch_threads(int n) {
  at::set_num_threads(n);
  // The inter-op pool can be sized only once per process, before it is used.
  static const bool interop_set = [n] {
    try {
      at::set_num_interop_threads(n);
    } catch (...) {
      // Already started by someone else: keep its size.
    }
    return true;
  }();
  (void)interop_set;
}

int available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

std::uint32_t resolve_learner_threads(std::uint32_t requested, std::uint32_t actors) {
  if (requested > 0) return requested;
  const auto cpus = static_cast<std::uint32_t>(available_cpus());
  const std::uint32_t free = cpus > actors ? cpus - actors : 1u;
  return std::clamp(std::max(free, std::min(cpus, 2u)), 1u, kMaxAutoLearnerThreads);
}

}  // namespace ringrl::learner
