// cuda_support.h for builds without the torch_cuda target.
#include "learner/cuda_support.h"

#include <stdexcept>
#include <string>

namespace ringrl::learner {

bool built_with_cuda() { return false; }
CudaDeviceInfo cuda_device_info(int) { return {}; }
std::string describe_cuda_device(int index) {
  return "cuda:" + std::to_string(index) + " not available (this LibTorch has no CUDA)";
}
void cuda_stream_synchronize(int) {}

struct CudaGraph::Impl {};
CudaGraph::CudaGraph(int device_index, int) {
  throw std::runtime_error("CUDA graph on cuda:" + std::to_string(device_index) + ": this LibTorch has no CUDA");
}
CudaGraph::~CudaGraph() = default;
void CudaGraph::run(const std::function<void()>&) {}
bool CudaGraph::captured() const noexcept { return false; }
std::int64_t CudaGraph::calls() const noexcept { return 0; }

}  // namespace ringrl::learner
