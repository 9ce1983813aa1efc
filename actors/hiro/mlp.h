// Torch-free inference of the HIRO acting networks (spec hiro.md §4) on the actors' CPUs.
//
// Mlp: x * input_mask -> h1 -> h2 -> out, ReLU hidden layers, then
// a = mid + half_range * tanh(.): the same function as the learner's td3::Actor (the mask
// carries ZERO_OBS). ActorNets holds the meta (high-level) and the low-level Mlp of one
// actor-nets blob (common/hiro/actor_blob.h) and loads a blob only after blob_payload()
// (common/blob_layout.h) accepted its header: magic, fingerprint and size.
//
// Weights are copied out of the blob on load (the weight channel's buffer may change after
// the call), so an instance is an immutable snapshot between loads. forward() does not
// allocate and does not throw. One thread uses an instance (it keeps scratch vectors).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "common/hiro/actor_blob.h"

namespace ringrl::actors {

class Mlp {
 public:
  /// Sizes from `m`; weights zero until load().
  explicit Mlp(const hiro::MlpOffsets& m);
  /// Copies this network's tensors out of a blob payload (floats at m's offsets).
  void load(const float* payload);
  /// out[out_dim] = the network at in[in_dim].
  void forward(const float* in, float* out) noexcept;

  int in_dim() const noexcept { return static_cast<int>(m_.in); }
  int out_dim() const noexcept { return static_cast<int>(m_.out); }

 private:
  using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Vector = Eigen::VectorXf;

  hiro::MlpOffsets m_;
  RowMatrix w1_, w2_, w3_;  // [h1 x in], [h2 x h1], [out x h2]
  Vector b1_, b2_, b3_, mask_, mid_, half_range_;
  Vector x_, h1_, h2_, o_;  // scratch
};

/// Both acting networks of one blob layout.
class ActorNets {
 public:
  explicit ActorNets(const hiro::ActorBlobShape& shape);

  const hiro::ActorBlobLayout& layout() const noexcept { return layout_; }
  /// Checks (blob_payload) and loads a channel blob; false + *error (nothing loaded) when it
  /// is of another layout or shape.
  bool load(const std::vector<std::byte>& blob, std::string* error);

  /// Meta actor: (obs (+) G) -> goal inside the goal box.
  Mlp& meta() noexcept { return meta_; }
  /// Low-level actor: (obs (+) g) -> env action inside the action box.
  Mlp& low() noexcept { return low_; }

 private:
  hiro::ActorBlobLayout layout_;
  Mlp meta_, low_;
};

}  // namespace ringrl::actors
