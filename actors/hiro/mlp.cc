#include "actors/hiro/mlp.h"

#include <cstring>

namespace ringrl::actors {

Mlp::Mlp(const hiro::MlpOffsets& m)
    : m_(m),
      w1_(RowMatrix::Zero(m.hidden1, m.in)),
      w2_(RowMatrix::Zero(m.hidden2, m.hidden1)),
      w3_(RowMatrix::Zero(m.out, m.hidden2)),
      b1_(Vector::Zero(m.hidden1)),
      b2_(Vector::Zero(m.hidden2)),
      b3_(Vector::Zero(m.out)),
      mask_(Vector::Ones(m.in)),
      mid_(Vector::Zero(m.out)),
      half_range_(Vector::Zero(m.out)),
      x_(m.in),
      h1_(m.hidden1),
      h2_(m.hidden2),
      o_(m.out) {}

void Mlp::load(const float* payload) {
  const auto copy = [payload](float* dst, std::size_t offset, Eigen::Index n) {
    std::memcpy(dst, payload + offset, sizeof(float) * static_cast<std::size_t>(n));
  };
  copy(w1_.data(), m_.w1, w1_.size());
  copy(b1_.data(), m_.b1, b1_.size());
  copy(w2_.data(), m_.w2, w2_.size());
  copy(b2_.data(), m_.b2, b2_.size());
  copy(w3_.data(), m_.w3, w3_.size());
  copy(b3_.data(), m_.b3, b3_.size());
  copy(mask_.data(), m_.mask, mask_.size());
  copy(mid_.data(), m_.mid, mid_.size());
  copy(half_range_.data(), m_.half_range, half_range_.size());
}

void Mlp::forward(const float* in, float* out) noexcept {
  // Masked input (ZERO_OBS), then two ReLU layers and the tanh box map.
  x_ = Eigen::Map<const Vector>(in, m_.in).cwiseProduct(mask_);
  h1_.noalias() = w1_ * x_;
  h1_ = (h1_ + b1_).cwiseMax(0.0f);
  h2_.noalias() = w2_ * h1_;
  h2_ = (h2_ + b2_).cwiseMax(0.0f);
  o_.noalias() = w3_ * h2_;
  Eigen::Map<Vector>(out, m_.out) = mid_ + half_range_.cwiseProduct((o_ + b3_).array().tanh().matrix());
}

ActorNets::ActorNets(const hiro::ActorBlobShape& shape) : layout_(shape), meta_(layout_.meta()), low_(layout_.low()) {}

bool ActorNets::load(const std::vector<std::byte>& blob, std::string* error) {
  const float* payload = blob_payload(blob, layout_.blob(), error);
  if (payload == nullptr) return false;
  meta_.load(payload);
  low_.load(payload);
  return true;
}

}  // namespace ringrl::actors
