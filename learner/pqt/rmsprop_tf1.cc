#include "learner/pqt/rmsprop_tf1.h"

#include "common/errors.h"

namespace ringrl::learner {

RmsPropTf1::RmsPropTf1(std::vector<torch::Tensor> params, const RmsPropTf1Options& options)
    : options_(options), params_(std::move(params)) {
  if (!(options.lr > 0.0)) throw UsageError("RMSProp lr must be > 0, got " + std::to_string(options.lr));
  if (!(options.decay >= 0.0 && options.decay < 1.0)) {
    throw UsageError("RMSProp decay must be in [0, 1), got " + std::to_string(options.decay));
  }
  if (!(options.epsilon >= 0.0)) {
    throw UsageError("RMSProp epsilon must be >= 0, got " + std::to_string(options.epsilon));
  }
  torch::NoGradGuard no_grad;
  for (const auto& p : params_) {
    ms_.push_back(torch::full_like(p, options.initial_accumulator).detach());
  }
}

void RmsPropTf1::apply_dense(std::size_t i, const torch::Tensor& grad) {
  torch::NoGradGuard no_grad;
  torch::Tensor& ms = ms_.at(i);
  ms.add_((grad * grad - ms) * (1.0 - options_.decay));
  params_.at(i).sub_(grad * options_.lr * torch::rsqrt(ms + options_.epsilon));
}

void RmsPropTf1::apply_rows(std::size_t i, const torch::Tensor& rows, const torch::Tensor& grad) {
  torch::NoGradGuard no_grad;
  torch::Tensor& ms = ms_.at(i);
  torch::Tensor& p = params_.at(i);
  const torch::Tensor g = grad.index_select(0, rows);
  torch::Tensor m = ms.index_select(0, rows);
  m.add_((g * g - m) * (1.0 - options_.decay));
  ms.index_copy_(0, rows, m);
  p.index_copy_(0, rows, p.index_select(0, rows) - g * options_.lr * torch::rsqrt(m + options_.epsilon));
}

void RmsPropTf1::apply_row_mask(std::size_t i, const torch::Tensor& row_mask, const torch::Tensor& grad) {
  torch::NoGradGuard no_grad;
  torch::Tensor& ms = ms_.at(i);
  torch::Tensor& p = params_.at(i);
  std::vector<int64_t> shape(static_cast<std::size_t>(p.dim()), 1);
  shape[0] = p.size(0);
  const torch::Tensor keep = row_mask.to(torch::kBool).view(shape);
  const torch::Tensor m = torch::where(keep, ms + (grad * grad - ms) * (1.0 - options_.decay), ms);
  ms.copy_(m);
  p.copy_(torch::where(keep, p - grad * options_.lr * torch::rsqrt(m + options_.epsilon), p));
}

}  // namespace ringrl::learner
