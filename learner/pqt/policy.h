// Policy: the LibTorch module of the program policy (spec §5.1), stored in blob form.
//
// Contract:
// * Parameters are exactly the tensors of common/pqt/policy_layout.h, with the same shapes and
//   the TF1 conventions (kernels [in + h, 4h], gates (i, j, f, o), no output bias); so
//   write_blob/read_blob are plain copies and the actors read the same numbers.
// * Init (§5.1): embedding U(-1, 1); kernels and output TF variance_scaling (FAN_AVG,
//   uniform, factor = param_init_factor); biases 0. Drawn from a private generator seeded
//   with PolicyOptions::seed (the global torch RNG is not touched).
// * forward(actions, ...) is the training-time re-evaluation: inputs are the actions shifted
//   right with EOS (0) prepended; returns raw logits [N, T, vocab], EOS logit replaced by
//   kEosMaskedLogit when eos_token is false. No sequence masking inside: outputs at t depend
//   only on inputs <= t, so callers mask the losses.
// * Torch header: include it only from learner internals and tests.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "common/pqt/policy_layout.h"
#include "learner/pqt/policy_kernels.h"

namespace ringrl::learner {

struct PolicyOptions {
  PolicyShape shape{};
  double param_init_factor = 1.0;
  bool eos_token = false;
  std::uint64_t seed = 1;
  /// forward() runs each LSTM layer as one autograd node with a hand-written BPTT backward
  /// (same math as forward_reference, ~5x faster on CPU). false: plain autograd.
  bool fused_lstm = true;
  /// The fused layer on the CPU runs the per-ISA kernels of learner/pqt/policy_kernels.h
  /// for both passes (else tensor ops per step, as on CUDA).
  bool cpu_loops = true;
};

/// Result of a teacher-forced forward.
struct PolicyForward {
  torch::Tensor logits;        // [N, T, vocab], EOS masked when eos_token is false
  torch::Tensor embedded;      // [T, N, embedding] (time-major): gathered rows; its grad
                               // holds one row per lookup
  torch::Tensor input_tokens;  // [N, T] int64: the gathered embedding row ids
};

class PolicyImpl : public torch::nn::Module {
 public:
  explicit PolicyImpl(const PolicyOptions& options);

  /// Teacher-forced pass over `actions` [N, T] (int64, on this module's device).
  /// With retain_embedding_grad the `embedded` tensor keeps its .grad() after backward.
  PolicyForward forward(const torch::Tensor& actions, bool retain_embedding_grad = false);
  /// The same function with plain per-step autograd ops (the reference for tests and the
  /// bare-LibTorch baseline of bench/pqt/learner_bench.h).
  PolicyForward forward_reference(const torch::Tensor& actions, bool retain_embedding_grad = false);

  /// Host copies in the layout order (num_floats() floats; padding written as 0).
  void write_blob(float* dst) const;
  void read_blob(const float* src);

  const PolicyLayout& layout() const { return layout_; }
  const PolicyOptions& options() const { return options_; }

  /// Parameters in blob order: embedding, (kernel, bias) per layer, output.
  std::vector<torch::Tensor> blob_parameters() const;

  torch::Tensor embedding;
  std::vector<torch::Tensor> kernels;  // [in_l + h_l, 4 h_l]
  std::vector<torch::Tensor> biases;   // [4 h_l]
  torch::Tensor output;                // [h_last, vocab]

 private:
  PolicyOptions options_;
  PolicyLayout layout_;
};
TORCH_MODULE(Policy);

/// TF variance_scaling(FAN_AVG, uniform) bound for a [rows, cols] kernel:
/// sqrt(3 * factor / ((rows + cols) / 2)).
double variance_scaling_limit(int rows, int cols, double factor);

/// Copies tensors given in blob order (shapes of `layout`) into / out of a host blob.
/// Used for the parameters and for same-shaped optimizer state.
void tensors_to_blob(const PolicyLayout& layout, const std::vector<torch::Tensor>& tensors, float* dst);
void blob_to_tensors(const PolicyLayout& layout, const float* src, const std::vector<torch::Tensor>& tensors);

/// Shifts actions [N, T] right by one with EOS (0) at t = 0 (the teacher-forcing inputs).
torch::Tensor shift_right(const torch::Tensor& actions);

namespace detail {
/// The LSTM layer kernels of policy_kernels.h over every row of [T, N, *] arrays, the rows
/// split over torch's intra-op threads (chunks of at least 8 rows).
void lstm_forward_threads(const LstmLayerDims& d, const float* pre, const float* kh, const float* bias,
                          float forget_bias, float* acts, float* cs, float* tcs, float* hs);
/// Adds the bias gradient (the sum of dg) to dbias unless it is null.
void lstm_backward_threads(const LstmLayerDims& d, const float* kh, const float* acts, const float* cs,
                           const float* tcs, const float* dh_out, float* dg, float* dbias);
}  // namespace detail

}  // namespace ringrl::learner
