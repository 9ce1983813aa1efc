// Torch's intra-op thread count for this process, and its floating-point mode. Every ringrl
// process uses one thread: the models are small, and the other cores belong to the actor
// processes.
#pragma once

#include <cstdint>

namespace ringrl::learner {

inline constexpr int kTorchThreadsPerProcess = 1;

/// Sets torch's intra-op and inter-op thread counts to `n` (>= 1).
void set_torch_threads(int n = kTorchThreadsPerProcess);

/// Flushes subnormal floats to zero (inputs and results) in the calling thread, as TensorFlow,
/// which the original systems ran on, does in its CPU threads. Without it, optimizer moments
/// of weights whose gradient stays 0 decay through the subnormal range, where each x86 float
/// operation takes a microcode assist: long runs slowed down by more than 2x. The learner
/// process calls it once (run_driver.cc).
void flush_subnormals();

/// Keeps freed heap memory in the process instead of returning it to the system, so the
/// learner's per-update tensors of a few MB reuse warm pages rather than mapping and faulting
/// in fresh ones every update (about 15% of a CPU PQT update). Process-wide; idempotent.
void keep_freed_memory();

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
