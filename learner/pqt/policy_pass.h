// PolicyPass: the policy's training pass on the CPU without autograd (spec brain_coder §5.1,
// §5.3): the teacher-forced forward, the log-softmax head, and a hand-written backward to the
// gradient of every parameter. The eager path (Policy::forward, losses.h, autograd) computes
// the same numbers; tests/learner/pqt/policy_pass_test.cc holds them together.
//
// Contract:
// * forward(tokens, groups): tokens [G n, T] int64 on the CPU, n = rows / groups; rows
//   [g n, (g + 1) n) are group g. Inputs are the tokens shifted right with EOS first (as
//   Policy::forward). Afterwards action_log_probs() and entropy_steps() are [G n, T]:
//   log pi(a_it) and -sum_a pi log pi (clamped at kEntropyLogFloor, as losses.h), EOS masked as
//   the policy's options say.
// * backward(ca, ce): for a loss whose derivative is ca = dL/dlog pi(a_it) and
//   ce = dL/dH_it (both [G n, T], constants), writes each group's gradient of L restricted to
//   that group's rows, in blob order (embedding, (kernel, bias) per layer, output), into
//   group_grads(g); the embedding gradient is dense (rows not looked up are 0). lookup_sq(g)
//   is the sum of squares of the per-lookup embedding gradients (how TF's global norm counts an
//   IndexedSlices gradient). One group gives the gradient of the whole batch.
// * Every buffer is allocated on the first pass of a shape and kept; a pass allocates nothing
//   else of that size. The LSTM layers and the head run learner/pqt/policy_kernels.h, split
//   over torch's intra-op threads by batch rows; GEMMs run through LibTorch (MKL).
// * The policy's parameters are read at each call (no copy); the pass never writes them.
// * CPU and float32 only (PolicyPass::supports says whether a policy qualifies).
#pragma once

#include <torch/torch.h>

#include <vector>

#include "learner/pqt/policy.h"

namespace ringrl::learner {

class PolicyPass {
 public:
  explicit PolicyPass(Policy policy);

  static bool supports(const Policy& policy);

  void forward(const torch::Tensor& tokens, int groups = 1);
  /// [G n, T] views over fresh tensors (safe to keep across passes).
  torch::Tensor action_log_probs() const;
  torch::Tensor entropy_steps() const;
  /// The embedding rows the forward looked up (int64, one per position).
  const torch::Tensor& input_tokens() const { return input_tokens_; }

  void backward(const torch::Tensor& ca, const torch::Tensor& ce);
  const std::vector<torch::Tensor>& group_grads(int g) const { return grads_[static_cast<std::size_t>(g)]; }
  double lookup_sq(int g) const { return lookup_sq_[static_cast<std::size_t>(g)]; }

 private:
  struct Layer {
    torch::Tensor pre, acts, cs, tcs, hs, dg, dx;  // [G, T, n, *] (time-major inside a group)
  };
  void resize(int groups, int rows_per_group, int steps);
  /// [G n, T] (row-major by row) -> [G, T, n] and back.
  torch::Tensor to_position_order(const torch::Tensor& by_row) const;
  torch::Tensor to_row_order(const torch::Tensor& by_position) const;

  Policy policy_;
  int groups_ = 0, n_ = 0, t_ = 0;
  std::vector<Layer> layers_;
  torch::Tensor embedded_;      // [P, E] float, P = G T n positions
  torch::Tensor input_tokens_;  // [P] int64
  torch::Tensor inputs32_;      // [P] int32 (input tokens)
  torch::Tensor actions32_;     // [P] int32 (drawn tokens)
  torch::Tensor logits_t_;      // [V, P]
  torch::Tensor log_probs_t_;   // [V, P]
  torch::Tensor alp_, ent_;     // [P]
  torch::Tensor dlogits_t_;     // [V, P]
  torch::Tensor dh_top_;        // [P, h_top]
  torch::Tensor d_embedded_;    // [P, E]
  std::vector<std::vector<torch::Tensor>> grads_;  // [G][blob tensor]
  std::vector<double> lookup_sq_;
};

}  // namespace ringrl::learner
