// RmsPropTf1: TF1's RMSProp (spec §5.3, pitfall 14) on LibTorch tensors, no autograd.
//
// Per element: ms <- ms + (1 - decay) (g^2 - ms);  w <- w - lr g / sqrt(ms + eps).
// Accumulators start at initial_accumulator (1.0 in TF1), momentum is 0.
// apply_rows() is the sparse (IndexedSlices) path of an embedding: only the listed rows of
// the parameter and of its accumulator change; the gradient rows are the summed lookups.
// One thread; parameters must outlive the optimizer. Torch header: learner internals/tests.
#pragma once

#include <torch/torch.h>

#include <vector>

namespace ringrl::learner {

struct RmsPropTf1Options {
  double lr = 1e-4;
  double decay = 0.99;
  double epsilon = 1e-10;
  double initial_accumulator = 1.0;
};

class RmsPropTf1 {
 public:
  RmsPropTf1(std::vector<torch::Tensor> params, const RmsPropTf1Options& options);

  /// Dense update of params[i] with `grad` (same shape).
  void apply_dense(std::size_t i, const torch::Tensor& grad);
  /// Sparse update of the rows `rows` (int64 [R], unique) of params[i] with the full-size
  /// dense `grad` (only its `rows` are read).
  void apply_rows(std::size_t i, const torch::Tensor& rows, const torch::Tensor& grad);
  /// Same as apply_rows with the rows given as a mask [dim 0] (nonzero = gathered); no
  /// dynamic shapes, so no device sync on CUDA. The learner uses this one.
  void apply_row_mask(std::size_t i, const torch::Tensor& row_mask, const torch::Tensor& grad);

  void set_lr(double lr) { options_.lr = lr; }
  const RmsPropTf1Options& options() const { return options_; }
  const std::vector<torch::Tensor>& params() const { return params_; }
  /// Mean-square accumulators, one per parameter, same shapes.
  const std::vector<torch::Tensor>& accumulators() const { return ms_; }
  std::vector<torch::Tensor>& accumulators() { return ms_; }

 private:
  RmsPropTf1Options options_;
  std::vector<torch::Tensor> params_;
  std::vector<torch::Tensor> ms_;
};

}  // namespace ringrl::learner
