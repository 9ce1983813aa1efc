// Torch's intra-op thread count for this process, and a learner's thread count. Every ringrl
// process uses one thread unless its learner asks for more: the models are small, and the
// other cores belong to the actor processes. (The floating-point mode and the heap setting of
// a learner process: common/process_modes.h.)
#pragma once

#include <cstdint>

namespace ringrl::learner {

inline constexpr int kTorchThreadsPerProcess = 1;

/// Sets torch's intra-op and inter-op thread counts to `n` (>= 1).
void set_torch_threads(int n = kTorchThreadsPerProcess);

/// CPUs this process may run on (its affinity mask), at least 1.
int available_cpus();

/// Most threads auto picks: a PQT batch of 64 rows makes 2 shards per thread, a HIRO pass at
/// batch 100 two row blocks (learner/pqt/policy_pass.h, learner/td3/td3_fused.h).
inline constexpr std::uint32_t kMaxAutoLearnerThreads = 8;

/// A learner's threads (the learner_threads keys) for `requested` with `actors` actor
/// processes: as asked when > 0; else (auto) one per CPU this process may use that no actor
/// holds, and at least two where it may use two, at most kMaxAutoLearnerThreads. The second
/// thread pays even where the actors hold every core: they wait while the learner trains (PQT's
/// pace learner, HIRO's rate limiter), and the learner's tasks go to whichever thread runs, so
/// it takes up their idle core (docs/train.md: 32% -> 43% of the actor-only ceiling with 1
/// actor on 2 cores; docs/hiro.md: 1.6x env steps/s).
std::uint32_t resolve_learner_threads(std::uint32_t requested, std::uint32_t actors);

}  // namespace ringrl::learner
