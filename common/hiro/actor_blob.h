// The HIRO actor-nets blob (spec hiro.md §4): the flat float32 weight blob that carries both
// acting networks, the meta (high-level) actor and the low-level actor, from the learner to
// every HIRO actor process through the weight channel.
//
// Layout (float offsets; every tensor starts on a 64-byte boundary, i.e. a multiple of 16
// floats; padding is 0):
//   header   16 floats = 64 bytes:
//            bytes 0-7  magic "HIROBLOB"      bytes 8-15  fingerprint (u64, see below)
//            bytes 16-63 the shape as u32: layout version, then ActorBlobShape's fields, then 0
//   then, for the meta actor and then the low-level actor, in this order:
//            fc1.weight [h1 x in]   fc1.bias [h1]
//            fc2.weight [h2 x h1]   fc2.bias [h2]
//            out.weight [out x h2]  out.bias [out]
//            mid [out]              half_range [out]        (the action box: a = mid + hr * tanh)
// Weights are row-major [out_features x in_features], as torch::nn::Linear stores them.
// The low-level actor multiplies its first `low_masked_inputs` inputs by 0 (ZERO_OBS).
//
// Fingerprint: FNV-1a 64 over the layout version and every shape field. A reader computes the
// fingerprint of the shape it expects and refuses a blob whose magic or fingerprint differs
// (check_actor_blob), so an actor never runs weights of another shape or layout version.
//
// Pure value types and functions; any thread. Writers own the destination buffer, readers
// borrow the blob for the call. The learner fills the tensors (td3::HiroLearner::write_blob);
// write_actor_blob_header() writes the 64-byte header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace ringrl::hiro {

/// Layout version of the blob; bump it whenever the layout above changes.
inline constexpr std::uint32_t kActorBlobLayoutVersion = 1;
/// "HIROBLOB" as a little-endian u64.
inline constexpr std::uint64_t kActorBlobMagic = 0x424f4c424f524948ULL;
/// Floats per alignment unit: 64 bytes.
inline constexpr std::size_t kActorBlobAlignFloats = 16;
/// Floats of the header.
inline constexpr std::size_t kActorBlobHeaderFloats = 16;

/// Shapes of the two acting networks (spec §4 table).
struct ActorBlobShape {
  std::uint32_t meta_in = 0;      // obs (+) G
  std::uint32_t meta_out = 0;     // k (the goal)
  std::uint32_t low_in = 0;       // obs (+) g
  std::uint32_t low_out = 0;      // env action
  std::uint32_t hidden1 = 0;      // both networks
  std::uint32_t hidden2 = 0;
  std::uint32_t low_masked_inputs = 0;  // ZERO_OBS: 2 under hiro_orig, else 0

  bool operator==(const ActorBlobShape& o) const noexcept {
    return meta_in == o.meta_in && meta_out == o.meta_out && low_in == o.low_in && low_out == o.low_out &&
           hidden1 == o.hidden1 && hidden2 == o.hidden2 && low_masked_inputs == o.low_masked_inputs;
  }
};

/// Float offsets of one network's tensors inside the blob.
struct MlpOffsets {
  std::uint32_t in = 0, hidden1 = 0, hidden2 = 0, out = 0;  // sizes
  std::size_t w1 = 0, b1 = 0, w2 = 0, b2 = 0, w3 = 0, b3 = 0, mid = 0, half_range = 0;
};

/// The blob layout of one shape.
class ActorBlobLayout {
 public:
  explicit ActorBlobLayout(const ActorBlobShape& shape) noexcept : shape_(shape) {
    std::size_t at = kActorBlobHeaderFloats;
    meta_ = place(at, shape.meta_in, shape.meta_out);
    low_ = place(at, shape.low_in, shape.low_out);
    num_floats_ = at;
  }

  const ActorBlobShape& shape() const noexcept { return shape_; }
  const MlpOffsets& meta() const noexcept { return meta_; }
  const MlpOffsets& low() const noexcept { return low_; }
  std::size_t num_floats() const noexcept { return num_floats_; }
  std::size_t num_bytes() const noexcept { return num_floats_ * sizeof(float); }

  /// FNV-1a 64 over the layout version and the shape fields.
  std::uint64_t fingerprint() const noexcept {
    std::uint64_t h = kFnvOffset;
    const std::uint32_t words[] = {kActorBlobLayoutVersion, shape_.meta_in, shape_.meta_out, shape_.low_in,
                                   shape_.low_out, shape_.hidden1, shape_.hidden2, shape_.low_masked_inputs};
    for (const std::uint32_t w : words)
      for (int b = 0; b < 4; ++b) {
        h ^= (w >> (8 * b)) & 0xffu;
        h *= kFnvPrime;
      }
    return h;
  }

 private:
  static constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
  static constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;

  static std::size_t align(std::size_t n) noexcept {
    return (n + kActorBlobAlignFloats - 1) / kActorBlobAlignFloats * kActorBlobAlignFloats;
  }
  MlpOffsets place(std::size_t& at, std::uint32_t in, std::uint32_t out) const noexcept {
    MlpOffsets m;
    m.in = in;
    m.hidden1 = shape_.hidden1;
    m.hidden2 = shape_.hidden2;
    m.out = out;
    auto take = [&at](std::size_t n) {
      const std::size_t off = at;
      at = align(at + n);
      return off;
    };
    m.w1 = take(std::size_t{m.hidden1} * in);
    m.b1 = take(m.hidden1);
    m.w2 = take(std::size_t{m.hidden2} * m.hidden1);
    m.b2 = take(m.hidden2);
    m.w3 = take(std::size_t{out} * m.hidden2);
    m.b3 = take(out);
    m.mid = take(out);
    m.half_range = take(out);
    return m;
  }

  ActorBlobShape shape_;
  MlpOffsets meta_, low_;
  std::size_t num_floats_ = 0;
};

/// Writes the 64-byte header (magic, fingerprint, shape) at the start of `blob`.
inline void write_actor_blob_header(const ActorBlobLayout& layout, void* blob) noexcept {
  unsigned char header[kActorBlobHeaderFloats * sizeof(float)] = {};
  const std::uint64_t magic = kActorBlobMagic, fp = layout.fingerprint();
  const ActorBlobShape& s = layout.shape();
  const std::uint32_t words[] = {kActorBlobLayoutVersion, s.meta_in, s.meta_out, s.low_in,
                                 s.low_out, s.hidden1, s.hidden2, s.low_masked_inputs};
  std::memcpy(header, &magic, sizeof magic);
  std::memcpy(header + 8, &fp, sizeof fp);
  std::memcpy(header + 16, words, sizeof words);
  std::memcpy(blob, header, sizeof header);
}

/// Checks that `bytes` bytes at `blob` are an actor blob of `expected`'s layout: size, magic
/// and fingerprint. False with a one-line reason naming what differs.
inline bool check_actor_blob(const void* blob, std::size_t bytes, const ActorBlobLayout& expected,
                             std::string* error) {
  if (bytes < kActorBlobHeaderFloats * sizeof(float)) {
    *error = "actor blob of " + std::to_string(bytes) + " bytes is shorter than its 64-byte header";
    return false;
  }
  std::uint64_t magic = 0, fp = 0;
  std::uint32_t words[8] = {};
  std::memcpy(&magic, blob, sizeof magic);
  std::memcpy(&fp, static_cast<const unsigned char*>(blob) + 8, sizeof fp);
  std::memcpy(words, static_cast<const unsigned char*>(blob) + 16, sizeof words);
  if (magic != kActorBlobMagic) {
    *error = "weight blob is not a HIRO actor blob (bad magic)";
    return false;
  }
  if (fp != expected.fingerprint()) {
    const ActorBlobShape& e = expected.shape();
    *error = "actor blob fingerprint " + std::to_string(fp) + " (layout v" + std::to_string(words[0]) + ", meta " +
             std::to_string(words[1]) + "->" + std::to_string(words[2]) + ", low " + std::to_string(words[3]) + "->" +
             std::to_string(words[4]) + ", hidden " + std::to_string(words[5]) + "-" + std::to_string(words[6]) +
             ", masked " + std::to_string(words[7]) + ") differs from this actor's " +
             std::to_string(expected.fingerprint()) + " (layout v" + std::to_string(kActorBlobLayoutVersion) +
             ", meta " + std::to_string(e.meta_in) + "->" + std::to_string(e.meta_out) + ", low " +
             std::to_string(e.low_in) + "->" + std::to_string(e.low_out) + ", hidden " + std::to_string(e.hidden1) +
             "-" + std::to_string(e.hidden2) + ", masked " + std::to_string(e.low_masked_inputs) + ")";
    return false;
  }
  if (bytes != expected.num_bytes()) {
    *error = "actor blob of " + std::to_string(bytes) + " bytes, expected " + std::to_string(expected.num_bytes());
    return false;
  }
  return true;
}

}  // namespace ringrl::hiro
