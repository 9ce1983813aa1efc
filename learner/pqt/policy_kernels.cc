#include "learner/pqt/policy_kernels.h"

#include "common/cpu_features.h"

namespace ringrl::learner {

const PolicyKernels& policy_kernels() {
  static const PolicyKernels& chosen = []() -> const PolicyKernels& {
#if defined(RINGRL_POLICY_KERNELS_HAVE_AVX512)
    if (cpu_has_avx512()) return detail::kPolicyKernelsAvx512;
#endif
#if defined(RINGRL_POLICY_KERNELS_HAVE_AVX2)
    if (cpu_has_avx2()) return detail::kPolicyKernelsAvx2;
#endif
    return detail::kPolicyKernelsGeneric;
  }();
  return chosen;
}

std::vector<const PolicyKernels*> available_policy_kernels() {
  std::vector<const PolicyKernels*> all{&detail::kPolicyKernelsGeneric};
#if defined(RINGRL_POLICY_KERNELS_HAVE_AVX2)
  if (cpu_has_avx2()) all.push_back(&detail::kPolicyKernelsAvx2);
#endif
#if defined(RINGRL_POLICY_KERNELS_HAVE_AVX512)
  if (cpu_has_avx512()) all.push_back(&detail::kPolicyKernelsAvx512);
#endif
  return all;
}

}  // namespace ringrl::learner
