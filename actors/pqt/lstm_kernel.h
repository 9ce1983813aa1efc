// Internal interface between LstmSampler and its per-ISA kernels (actors/lstm_kernel_*.cc).
//
// Only plain types cross it: each kernel translation unit is compiled with its own
// instruction-set flags and its own renamed copy of Eigen, so nothing it instantiates may be
// shared with other translation units (no std containers, no common/ types). Not for use
// outside actors/.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ringrl::actors::detail {

/// Most LSTM layers a kernel supports.
inline constexpr int kMaxKernelLayers = 8;

/// Shape, blob offsets (floats) and sampling options, copied from PolicyLayout/SamplerOptions.
struct KernelConfig {
  int vocab = 0;
  int embedding = 0;
  int num_layers = 0;
  int lstm_sizes[kMaxKernelLayers] = {};
  std::size_t embedding_offset = 0;
  std::size_t kernel_offset[kMaxKernelLayers] = {};
  std::size_t bias_offset[kMaxKernelLayers] = {};
  std::size_t output_offset = 0;
  int batch_size = 0;
  int max_len = 0;
  bool eos_token = false;
  float softmax_tr = 1.0f;
  float eos_masked_logit = 0.0f;
  float forget_bias = 0.0f;
};

class SamplerKernel {
 public:
  virtual ~SamplerKernel() = default;
  /// Pre-transforms a blob (layout of common/pqt/policy_layout.h) into the kernel's form.
  virtual void set_weights(const float* blob) = 0;
  /// tokens/log_probs [B, T] row-major, lengths [B]; padding written as 0.
  virtual void sample(std::uint64_t seed, std::int32_t* tokens, std::int32_t* lengths, float* log_probs) = 0;
  /// tokens [b, t] (b <= B, t <= T) -> logits [b, t, vocab] row-major.
  virtual void teacher_forced_logits(const std::int32_t* tokens, int b, int t, float* logits) = 0;
};

// Factories, one per translation unit; the caller owns the result.
SamplerKernel* make_kernel_generic(const KernelConfig& config);
SamplerKernel* make_kernel_avx2(const KernelConfig& config);
SamplerKernel* make_kernel_avx512(const KernelConfig& config);

}  // namespace ringrl::actors::detail
