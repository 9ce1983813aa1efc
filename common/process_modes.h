// A learner process's machine settings, set once by the run driver (learner/run_driver.h).
//
// Contract:
// * flush_subnormals() flushes subnormal floats to zero, inputs and results (x86 MXCSR FTZ and
//   DAZ, the bits TensorFlow sets in its CPU threads, which the original systems ran on), in
//   the calling thread; a no-op elsewhere. Without it, optimizer moments of weights whose
//   gradient stays 0 decay through the subnormal range, where each x86 float operation takes
//   a microcode assist: long runs slowed down by more than 2x.
// * keep_freed_memory() keeps freed heap memory in the process instead of returning it to the
//   system, so a learner's per-update buffers of a few MB reuse warm pages rather than mapping
//   and faulting in fresh ones every update (about 15% of a CPU PQT update). Process-wide;
//   idempotent; a no-op outside glibc.
#pragma once

namespace ringrl {

void flush_subnormals() noexcept;
void keep_freed_memory() noexcept;

}  // namespace ringrl
