// CUDA facts and operations that need the CUDA-only LibTorch headers (c10/cuda, ATen/cuda),
// behind a torch-free interface. Exactly one translation unit includes those headers:
// learner/cuda_support.cc, built only when the `torch_cuda` target exists; other builds get
// learner/cuda_support_none.cc, where every function reports "no CUDA".
//
// All functions are thread-safe and never throw.
#pragma once

#include <cstdint>
#include <string>

namespace ringrl::learner {

struct CudaDeviceInfo {
  bool usable = false;  // a device with this index exists and answered
  std::string name;     // e.g. "NVIDIA H200"
  int compute_major = 0, compute_minor = 0;
  std::uint64_t total_memory = 0;  // bytes
  int multiprocessors = 0;
};

/// True when this binary was built against a LibTorch with CUDA (the torch_cuda target).
bool built_with_cuda();
/// Properties of CUDA device `index`; usable == false when there is no such device.
CudaDeviceInfo cuda_device_info(int index);
/// One line: "cuda:0 NVIDIA H200 (sm_90, 139.8 GiB, 132 SMs)", or why there is none.
std::string describe_cuda_device(int index);
/// Waits for the work queued on device `index`'s current stream; no-op without CUDA.
void cuda_stream_synchronize(int index);

}  // namespace ringrl::learner
