// The one translation unit with CUDA-only LibTorch headers (see cuda_support.h).
#include "learner/cuda_support.h"

#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>

#include <optional>
#include <stdexcept>
#include <utility>

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

// ------------------------------------------------------------------------------- CudaGraph

struct CudaGraph::Impl {
  c10::DeviceIndex device = 0;
  int warmup = 0;
  std::int64_t calls = 0;
  bool spent = false;
  std::optional<c10::cuda::CUDAStream> side;
  std::unique_ptr<at::cuda::CUDAGraph> graph;
};

CudaGraph::CudaGraph(int device_index, int warmup) : impl_(std::make_unique<Impl>()) {
  if (device_index < 0 || device_index >= static_cast<int>(c10::cuda::device_count()))
    throw std::runtime_error(fmt::format("CUDA graph: no device cuda:{} ({} device(s))", device_index,
                                         static_cast<int>(c10::cuda::device_count())));
  impl_->device = static_cast<c10::DeviceIndex>(device_index);
  impl_->warmup = warmup < 0 ? 0 : warmup;
}

CudaGraph::~CudaGraph() = default;

bool CudaGraph::captured() const noexcept { return impl_->graph != nullptr; }
std::int64_t CudaGraph::calls() const noexcept { return impl_->calls; }

void CudaGraph::run(const std::function<void()>& work) {
  Impl& m = *impl_;
  if (m.spent) throw std::runtime_error(fmt::format("CUDA graph on cuda:{}: an earlier capture failed", m.device));
  if (m.graph) {
    ++m.calls;
    m.graph->replay();
    return;
  }
  c10::cuda::CUDAGuard device_guard(m.device);
  // The side stream starts after everything queued on the current one, and the current one
  // goes on after the side stream's work: one wait each way (these calls are rare).
  auto current = c10::cuda::getCurrentCUDAStream(m.device);
  if (!m.side) m.side = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, m.device);
  current.synchronize();
  if (m.calls < m.warmup) {
    {
      c10::cuda::CUDAStreamGuard stream_guard(*m.side);
      work();
    }
    m.side->synchronize();
    ++m.calls;
    return;
  }
  auto graph = std::make_unique<at::cuda::CUDAGraph>();
  try {
    c10::cuda::CUDAStreamGuard stream_guard(*m.side);
    graph->capture_begin();
    try {
      work();
    } catch (...) {
      try {
        graph->capture_end();
      } catch (...) {
      }
      throw;
    }
    graph->capture_end();
  } catch (const std::exception& e) {
    m.spent = true;
    throw std::runtime_error(fmt::format("CUDA graph capture on cuda:{} failed: {}", m.device, e.what()));
  }
  m.side->synchronize();
  m.graph = std::move(graph);
  ++m.calls;
  m.graph->replay();
}

}  // namespace ringrl::learner
