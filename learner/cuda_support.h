// CUDA facts and operations that need the CUDA-only LibTorch headers (c10/cuda, ATen/cuda),
// behind a torch-free interface. Exactly one translation unit includes those headers:
// learner/cuda_support.cc, built only when the `torch_cuda` target exists; other builds get
// learner/cuda_support_none.cc, where every function reports "no CUDA".
//
// The free functions are thread-safe and never throw; CudaGraph (below) has its own contract.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
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

/// CudaGraph: one fixed sequence of CUDA work (a phase of an update), run directly for its
/// first `warmup` calls, captured as a CUDA graph on the next call and replayed from then on.
///
/// Contract:
/// * run(work): calls 1..warmup run `work` on a side stream of the device (what capture wants:
///   the caching allocator, cuBLAS and autograd settle on that stream), then wait for it;
///   call warmup + 1 captures `work` on that stream and replays the graph once; every later
///   call replays it on the current stream without calling `work`. Every call therefore does
///   the work exactly once: warm-up calls are real calls.
/// * `work` must touch the same tensors the same way on every call (buffers allocated before
///   the first call, or inside the capture, which reuses the graph's own memory), must not
///   read device values back to the host, and must not depend on host values that change
///   between calls. The caller copies its inputs into the buffers before run().
/// * A failed capture throws std::runtime_error naming the device and the CUDA error, after
///   ending the capture; the object is then spent (run() throws again).
/// * Without a CUDA build, or for a device that does not exist, the constructor throws
///   std::runtime_error. One thread uses an instance.
class CudaGraph {
 public:
  CudaGraph(int device_index, int warmup);
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  void run(const std::function<void()>& work);
  /// True once the graph is captured.
  bool captured() const noexcept;
  /// Calls of run() so far (warm-up, capture and replays).
  std::int64_t calls() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringrl::learner
