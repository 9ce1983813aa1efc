// cuda_support.h for builds without the torch_cuda target.
#include "learner/cuda_support.h"

#include <string>

namespace ringrl::learner {

bool built_with_cuda() { return false; }
CudaDeviceInfo cuda_device_info(int) { return {}; }
std::string describe_cuda_device(int index) {
  return "cuda:" + std::to_string(index) + " not available (this LibTorch has no CUDA)";
}
void cuda_stream_synchronize(int) {}

}  // namespace ringrl::learner
