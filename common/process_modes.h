// A learner process's machine settings, set once by the run driver (learner/run_driver.h), and
// the CPUs a rank of an MPI job may use.
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
// * widen_cpu_affinity() lets this process (and the children it starts later, which inherit
//   it) run on every online CPU its cpuset permits: an MPI launcher binds each rank to a core by
//   default (Open MPI for -np <= 2), and a rank's actors and learner threads need the node's
//   cores. The CPUs outside a cpuset (Slurm's --cpus-per-task) stay out. Returns the CPUs
//   before and after, and the node's online count.
// * allowed_cpus() is the number of CPUs this process may run on now.
#pragma once

namespace ringrl {

void flush_subnormals() noexcept;
void keep_freed_memory() noexcept;

struct CpuWidening {
  int before = 1, after = 1, online = 1;
};
CpuWidening widen_cpu_affinity() noexcept;
int allowed_cpus() noexcept;

}  // namespace ringrl
