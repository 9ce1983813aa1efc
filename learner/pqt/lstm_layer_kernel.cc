#include "learner/pqt/lstm_layer_kernel.h"

#include "common/cpu_features.h"

namespace ringrl::learner {

const LstmLayerKernels& lstm_layer_kernels() {
  static const LstmLayerKernels& chosen = []() -> const LstmLayerKernels& {
#if defined(RINGRL_LSTM_LAYER_HAVE_AVX512)
    if (cpu_has_avx512()) return detail::kLstmLayerKernelsAvx512;
#endif
#if defined(RINGRL_LSTM_LAYER_HAVE_AVX2)
    if (cpu_has_avx2()) return detail::kLstmLayerKernelsAvx2;
#endif
    return detail::kLstmLayerKernelsGeneric;
  }();
  return chosen;
}

}  // namespace ringrl::learner
