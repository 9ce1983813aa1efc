// The one translation unit with CUDA-only LibTorch headers (see cuda_support.h).
#include "learner/cuda_support.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>

#include <fmt/format.h>

namespace ringrl::learner {

bool built_with_cuda() { return true; }

CudaDeviceInfo cuda_device_info(int index) {
  CudaDeviceInfo info;
  try {
    if (index < 0 || index >= static_cast<int>(c10::cuda::device_count())) return info;
    const cudaDeviceProp* p = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(index));
    info.usable = true;
    info.name = p->name;
    info.compute_major = p->major;
    info.compute_minor = p->minor;
    info.total_memory = p->totalGlobalMem;
    info.multiprocessors = p->multiProcessorCount;
  } catch (...) {
    info.usable = false;  // no driver or no device: report, don't throw
  }
  return info;
}

std::string describe_cuda_device(int index) {
  const CudaDeviceInfo i = cuda_device_info(index);
  if (!i.usable) return fmt::format("cuda:{} not available (CUDA build, no such device or no driver)", index);
  return fmt::format("cuda:{} {} (sm_{}{}, {:.1f} GiB, {} SMs)", index, i.name, i.compute_major, i.compute_minor,
                     static_cast<double>(i.total_memory) / (1ull << 30), i.multiprocessors);
}

void cuda_stream_synchronize(int index) {
  try {
    if (index < 0 || index >= static_cast<int>(c10::cuda::device_count())) return;
    c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(index)).synchronize();
  } catch (...) {
  }
}

}  // namespace ringrl::learner
