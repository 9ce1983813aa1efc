#include "learner/devices.h"

#include <torch/cuda.h>

namespace ringrl::learner {

int cuda_device_count() {
  try {
    if (!torch::cuda::is_available()) return 0;
    return static_cast<int>(torch::cuda::device_count());
  } catch (...) {
    return 0;  // a broken driver is the same as no device for the callers
  }
}

}  // namespace ringrl::learner
