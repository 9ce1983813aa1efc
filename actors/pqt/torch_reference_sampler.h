// TorchReferenceSampler: the plain LibTorch sampler of the same policy, one token at a time
// with torch::nn::LSTMCell modules under InferenceMode. It is the baseline the dedicated
// LstmSampler is measured against and a second, independent reading of the blob.
//
// The blob's TF1 kernels [in + h, 4h] with gates (i, j, f, o) and the run-time forget bias
// are converted once in set_weights to LSTMCell's w_ih [4h, in], w_hh [4h, h], b_ih (gates
// i, f, g, o; forget bias folded in), b_hh = 0. Sampling uses torch::multinomial with a
// generator seeded per batch, so its draws differ from LstmSampler's for the same seed.
// Torch-free header (pimpl); one thread per instance; the caller sets torch's thread count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "actors/pqt/sampled_batch.h"
#include "common/pqt/policy_layout.h"

namespace ringrl::actors {

class TorchReferenceSampler {
 public:
  TorchReferenceSampler(const PolicyShape& shape, const SamplerOptions& options);
  ~TorchReferenceSampler();
  TorchReferenceSampler(const TorchReferenceSampler&) = delete;
  TorchReferenceSampler& operator=(const TorchReferenceSampler&) = delete;

  void set_weights(const float* blob, std::size_t num_floats);
  void sample(std::uint64_t seed, SampledBatch* out);
  /// As LstmSampler::teacher_forced_logits.
  void teacher_forced_logits(const std::int32_t* tokens, int b, int t, float* out);

  const PolicyLayout& layout() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ringrl::actors
