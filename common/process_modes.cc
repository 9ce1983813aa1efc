#include "common/process_modes.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

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

}  // namespace ringrl
