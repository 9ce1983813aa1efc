// The generic part of every weight blob: named row-major float32 tensors at aligned offsets,
// a fingerprint of the layout, and the small header that travels in front of the tensors on
// the weight channel so that an actor can check what it received before using it.
//
// Contract:
// * BlobLayout is a pure value type: add() tensors in blob order; each starts at a multiple of
//   kBlobAlignFloats floats (64 bytes), gaps are zero; num_floats() is aligned too. All
//   const methods are thread-safe.
// * fingerprint() hashes (FNV-1a 64) the algorithm's layout version, every tensor's name and
//   shape, in order: two layouts are interchangeable iff their fingerprints are equal.
// * On the channel a blob is BlobHeader (64 bytes: magic, fingerprint, payload bytes) followed
//   by the tensors. The learner writes it with write_blob_header(); an actor calls
//   blob_payload() with the fingerprint of the layout it was built for and uses the weights
//   only when it returns non-null.
// * Algorithm wings build their layouts on this (common/pqt/policy_layout.h,
//   common/hiro/ for HIRO); nothing here knows any model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace ringrl {

/// Tensor offsets are rounded up to this many floats (64 bytes, one cache line).
inline constexpr std::size_t kBlobAlignFloats = 16;
/// First 8 bytes of a BlobHeader: "RRLBLOB1".
inline constexpr std::uint64_t kBlobMagic = 0x31424F4C424C5252ULL;

/// One tensor of a blob: rows x cols floats, row-major, `offset` floats from the payload start.
/// 1-D tensors have rows == 1.
struct BlobTensor {
  std::string name;
  int rows = 0;
  int cols = 0;
  std::size_t offset = 0;
  std::size_t numel() const { return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols); }
};

class BlobLayout {
 public:
  /// `layout_version` is the algorithm's own: bump it whenever its blob order changes.
  explicit BlobLayout(std::uint32_t layout_version = 1) : version_(layout_version) {}

  /// Appends a tensor; returns its index.
  std::size_t add(std::string name, int rows, int cols) {
    const std::size_t off = align_up(total_);
    tensors_.push_back(BlobTensor{std::move(name), rows, cols, off});
    total_ = off + tensors_.back().numel();
    return tensors_.size() - 1;
  }
  const std::vector<BlobTensor>& tensors() const { return tensors_; }
  const BlobTensor& tensor(std::size_t i) const { return tensors_.at(i); }
  /// The tensor called `name`, or nullptr.
  const BlobTensor* find(const std::string& name) const {
    for (const auto& t : tensors_)
      if (t.name == name) return &t;
    return nullptr;
  }
  /// Payload size in floats / bytes (a multiple of kBlobAlignFloats).
  std::size_t num_floats() const { return align_up(total_); }
  std::size_t num_bytes() const { return num_floats() * sizeof(float); }
  /// Trainable parameters (alignment padding excluded).
  std::size_t num_parameters() const {
    std::size_t n = 0;
    for (const auto& t : tensors_) n += t.numel();
    return n;
  }
  std::uint64_t fingerprint() const {
    std::uint64_t h = kFnvOffset;
    auto mix = [&h](std::uint64_t v) {
      for (int b = 0; b < 8; ++b) {
        h ^= (v >> (8 * b)) & 0xffU;
        h *= kFnvPrime;
      }
    };
    mix(version_);
    mix(tensors_.size());
    for (const auto& t : tensors_) {
      for (char c : t.name) mix(static_cast<unsigned char>(c));
      mix(static_cast<std::uint64_t>(t.rows));
      mix(static_cast<std::uint64_t>(t.cols));
    }
    return h;
  }

  static std::size_t align_up(std::size_t n) {
    return (n + kBlobAlignFloats - 1) / kBlobAlignFloats * kBlobAlignFloats;
  }

 private:
  static constexpr std::uint64_t kFnvOffset = 1469598103934665603ULL;
  static constexpr std::uint64_t kFnvPrime = 1099511628211ULL;

  std::uint32_t version_;
  std::vector<BlobTensor> tensors_;
  std::size_t total_ = 0;
};

/// What travels in front of the tensors on the weight channel (64 bytes, so the tensors stay
/// cache-line aligned).
struct BlobHeader {
  std::uint64_t magic;          // kBlobMagic
  std::uint64_t fingerprint;    // BlobLayout::fingerprint() of the payload
  std::uint64_t payload_bytes;  // BlobLayout::num_bytes()
  std::uint64_t reserved[5];    // zero
};
static_assert(std::is_trivially_copyable_v<BlobHeader> && sizeof(BlobHeader) == 64);

/// Bytes of a channel blob for `layout`: header plus payload.
inline std::size_t channel_blob_bytes(const BlobLayout& layout) { return sizeof(BlobHeader) + layout.num_bytes(); }

/// Writes the header for `layout` at `dst`; the payload goes at dst + sizeof(BlobHeader).
inline void write_blob_header(std::byte* dst, const BlobLayout& layout) {
  BlobHeader h{};
  h.magic = kBlobMagic;
  h.fingerprint = layout.fingerprint();
  h.payload_bytes = layout.num_bytes();
  std::memcpy(dst, &h, sizeof h);
}

/// The payload of a channel blob if it carries `layout`'s fingerprint and size; otherwise
/// nullptr, with the reason in `*error`.
inline const float* blob_payload(const std::vector<std::byte>& blob, const BlobLayout& layout, std::string* error) {
  if (blob.size() < sizeof(BlobHeader)) {
    *error = "weight blob of " + std::to_string(blob.size()) + " bytes is shorter than its header";
    return nullptr;
  }
  BlobHeader h;
  std::memcpy(&h, blob.data(), sizeof h);
  if (h.magic != kBlobMagic) {
    *error = "weight blob has no blob header (bad magic)";
    return nullptr;
  }
  if (h.fingerprint != layout.fingerprint()) {
    *error = "weight blob has layout fingerprint " + std::to_string(h.fingerprint) + ", this actor expects " +
             std::to_string(layout.fingerprint()) + " (a different model shape)";
    return nullptr;
  }
  if (h.payload_bytes != layout.num_bytes() || blob.size() != sizeof(BlobHeader) + layout.num_bytes()) {
    *error = "weight blob of " + std::to_string(blob.size()) + " bytes, expected " +
             std::to_string(sizeof(BlobHeader) + layout.num_bytes());
    return nullptr;
  }
  return reinterpret_cast<const float*>(blob.data() + sizeof(BlobHeader));
}

}  // namespace ringrl
