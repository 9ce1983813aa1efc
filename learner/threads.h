// Torch's intra-op thread count for this process, and its floating-point mode. Every ringrl
// process uses one thread: the models are small, and the other cores belong to the actor
// processes.
#pragma once

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

}  // namespace ringrl::learner
