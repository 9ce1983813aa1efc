// LstmSampler: the actors' dedicated CPU sampler of the 2 x 35 LSTM program policy.
//
// Contract:
// * Reads weights in the common/pqt/policy_layout.h blob format (set_weights copies and
//   pre-transforms them: the weights are an immutable snapshot until the next set_weights).
// * sample(seed, out) draws B programs of at most T tokens (§5.2): step 0 input is E[EOS];
//   each step is one batched GEMM per LSTM layer plus vectorised gate non-linearities; a
//   token is drawn from softmax(softmax_tr * logits); rows stop at EOS (if eos_token) or T.
//   Same weights + same seed -> identical output, on the same build and instruction set.
// * Everything is allocated at construction; sample() and teacher_forced_logits() allocate
//   nothing (out must already have the right shape, see SampledBatch::resize).
// * Kernel variant: chosen once at construction from the CPU (AVX-512 / AVX2+FMA / generic
//   SSE2, each compiled in its own translation unit) unless the build is RINGRL_NATIVE, where
//   the single kernel is compiled for the host. isa() names the one in use.
// * One thread per instance; instances are independent. Torch-free (Eigen inside).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "actors/pqt/sampled_batch.h"
#include "common/pqt/policy_layout.h"

namespace ringrl::actors {

/// Instruction-set variant of the sampling kernel.
enum class SamplerIsa { kAuto, kGeneric, kAvx2, kAvx512, kNative };
const char* sampler_isa_name(SamplerIsa isa);
/// Variants compiled into this build and runnable on this CPU, best first.
std::vector<SamplerIsa> available_sampler_isas();

class LstmSampler {
 public:
  /// Throws UsageError on a bad shape/options or an ISA that is not available.
  LstmSampler(const PolicyShape& shape, const SamplerOptions& options, SamplerIsa isa = SamplerIsa::kAuto);
  ~LstmSampler();
  LstmSampler(const LstmSampler&) = delete;
  LstmSampler& operator=(const LstmSampler&) = delete;

  /// Copies a blob of layout().num_floats() floats. UsageError if `num_floats` differs.
  void set_weights(const float* blob, std::size_t num_floats);

  /// Samples a batch into `out` (resized by the caller to B x T once). Precondition:
  /// set_weights was called.
  void sample(std::uint64_t seed, SampledBatch* out);

  /// Teacher-forced logits for tokens [b, t] (b <= B, t <= T) into out [b, t, vocab]
  /// (row-major), inputs shifted right with EOS first, EOS masked as when sampling, no
  /// softmax_tr. For actor/learner agreement tests.
  void teacher_forced_logits(const std::int32_t* tokens, int b, int t, float* out);

  const PolicyLayout& layout() const;
  const SamplerOptions& options() const;
  SamplerIsa isa() const;

  struct Kernel;  // per-ISA implementation (lstm_kernel_impl.h)

 private:
  std::unique_ptr<Kernel> kernel_;
};

}  // namespace ringrl::actors
