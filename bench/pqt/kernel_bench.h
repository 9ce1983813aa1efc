// bench_policy_kernels: the training pass's CPU kernels (learner/pqt/policy_kernels.h), timed
// once per instruction set this CPU runs, on one process's single thread: per update of the
// spec model, every LSTM layer's forward and backward over B rows and T steps, and the head's
// forward and backward over the B x T positions. The GEMMs around them are left out; they are
// the same for every instruction set. Torch-free.
#pragma once

#include <string>
#include <vector>

#include "common/pqt/policy_layout.h"

namespace ringrl::learner {

struct PolicyKernelTiming {
  std::string isa;             // "generic", "avx2", "avx512"
  double ms_per_update = 0.0;  // the fastest of `rounds` rounds
  bool chosen = false;         // the set policy_kernels() uses on this CPU
};

/// Rounds alternate between the sets, `seconds` in all, so background drift is shared.
std::vector<PolicyKernelTiming> bench_policy_kernels(const PolicyShape& shape, int batch, int steps, double seconds,
                                                     int rounds = 3);

}  // namespace ringrl::learner
