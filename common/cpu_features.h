// What the CPU running this process can execute, for the kernels compiled once per instruction
// set (the actors' sampler, the learner's LSTM layer) and picked at run time.
#pragma once

namespace ringrl {

/// AVX2 with FMA.
inline bool cpu_has_avx2() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

/// The AVX-512 subsets the kernels are compiled with (F, DQ, VL, BW), plus AVX2 and FMA.
inline bool cpu_has_avx512() {
#if defined(__x86_64__) || defined(__i386__)
  return cpu_has_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
#else
  return false;
#endif
}

}  // namespace ringrl
