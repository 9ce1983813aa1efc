// Torch's intra-op thread count for this process. Every ringrl process uses one thread: the
// models are small, and the other cores belong to the actor processes.
#pragma once

namespace ringrl::learner {

inline constexpr int kTorchThreadsPerProcess = 1;

/// Sets torch's intra-op and inter-op thread counts to `n` (>= 1).
void set_torch_threads(int n = kTorchThreadsPerProcess);

}  // namespace ringrl::learner
