#include "common/process_modes.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sched.h>
#include <unistd.h>

namespace ringrl {

void flush_subnormals() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  constexpr unsigned kFlushToZero = 0x8000, kDenormalsAreZero = 0x0040;
  _mm_setcsr(_mm_getcsr() | kFlushToZero | kDenormalsAreZero);
#endif
}

void keep_freed_memory() noexcept {
#if defined(__GLIBC__)
  // Fixed thresholds (setting them turns off glibc's dynamic adjustment): blocks up to 32 MiB
  // come from the heap, and up to 1 GiB of free heap top stays mapped.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

int allowed_cpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

CpuWidening widen_cpu_affinity() noexcept {
  CpuWidening w;
  w.before = allowed_cpus();
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  w.online = online > 0 ? static_cast<int>(online) : w.before;
  if (w.before < w.online) {
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < w.online && c < CPU_SETSIZE; ++c) CPU_SET(c, &all);
    sched_setaffinity(0, sizeof all, &all);  // the kernel keeps out what the cpuset forbids
  }
  w.after = allowed_cpus();
  return w;
}

}  // namespace ringrl
