// The HIRO actor-nets blob (spec hiro.md §4): the weight blob that carries both acting
// networks, the meta (high-level) actor and the low-level actor, from the learner to every HIRO
// actor process through the weight channel. Built on the generic blob (common/blob_layout.h):
// a 64-byte BlobHeader (magic, fingerprint, payload bytes), then named row-major float32
// tensors, each on a 64-byte boundary:
//   meta.fc1.weight [h1 x in]  meta.fc1.bias [1 x h1]  meta.fc2.weight [h2 x h1]  meta.fc2.bias
//   meta.out.weight [out x h2] meta.out.bias           meta.input_mask [1 x in]
//   meta.mid [1 x out]         meta.half_range [1 x out]
//   low.*  the same for the low-level actor
// The function is a = mid + half_range * tanh(out(relu(fc2(relu(fc1(x * input_mask)))))), the
// learner's td3::Actor; input_mask carries ZERO_OBS (0 on x, y under hiro_orig's low level).
//
// The fingerprint covers kActorBlobLayoutVersion and every tensor's name and shape: an actor
// computes it for the shape it was configured with and uses a blob only when
// blob_payload() (common/blob_layout.h) accepts it.
//
// Pure value types; any thread. The learner fills the tensors (hiro::HiroLearner::write_blob).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/blob_layout.h"

namespace ringrl::hiro {

/// Layout version of the blob; bump it whenever the tensor order above changes.
inline constexpr std::uint32_t kActorBlobLayoutVersion = 1;

/// Shapes of the two acting networks (spec §4 table).
struct ActorBlobShape {
  int meta_in = 0;   // obs (+) G
  int meta_out = 0;  // k (the goal)
  int low_in = 0;    // obs (+) g
  int low_out = 0;   // env action
  int hidden1 = 0;   // both networks
  int hidden2 = 0;
};

/// Payload float offsets of one network's tensors.
struct MlpOffsets {
  int in = 0, hidden1 = 0, hidden2 = 0, out = 0;  // sizes
  std::size_t w1 = 0, b1 = 0, w2 = 0, b2 = 0, w3 = 0, b3 = 0, mask = 0, mid = 0, half_range = 0;
};

/// The blob layout of one shape.
class ActorBlobLayout {
 public:
  explicit ActorBlobLayout(const ActorBlobShape& shape) : shape_(shape), blob_(kActorBlobLayoutVersion) {
    meta_ = place("meta", shape.meta_in, shape.meta_out);
    low_ = place("low", shape.low_in, shape.low_out);
  }

  const ActorBlobShape& shape() const noexcept { return shape_; }
  const BlobLayout& blob() const noexcept { return blob_; }
  const MlpOffsets& meta() const noexcept { return meta_; }
  const MlpOffsets& low() const noexcept { return low_; }
  /// Bytes on the weight channel: header plus payload.
  std::size_t channel_bytes() const { return channel_blob_bytes(blob_); }
  std::uint64_t fingerprint() const { return blob_.fingerprint(); }

 private:
  MlpOffsets place(const std::string& net, int in, int out) {
    MlpOffsets m;
    m.in = in;
    m.hidden1 = shape_.hidden1;
    m.hidden2 = shape_.hidden2;
    m.out = out;
    const auto add = [&](const char* name, int rows, int cols) {
      return blob_.tensor(blob_.add(net + "." + name, rows, cols)).offset;
    };
    m.w1 = add("fc1.weight", m.hidden1, in);
    m.b1 = add("fc1.bias", 1, m.hidden1);
    m.w2 = add("fc2.weight", m.hidden2, m.hidden1);
    m.b2 = add("fc2.bias", 1, m.hidden2);
    m.w3 = add("out.weight", out, m.hidden2);
    m.b3 = add("out.bias", 1, out);
    m.mask = add("input_mask", 1, in);
    m.mid = add("mid", 1, out);
    m.half_range = add("half_range", 1, out);
    return m;
  }

  ActorBlobShape shape_;
  BlobLayout blob_;
  MlpOffsets meta_, low_;
};

}  // namespace ringrl::hiro
