// The flat parameter blob of the program-synthesis policy (spec brain_coder §5.1).
//
// Contract:
// * This header is the ONE definition of the blob. The learner writes it (learner/pqt/policy.h),
//   the actors read it (actors/pqt/lstm_sampler.h), the weight channel carries it as raw bytes.
// * The blob is a contiguous array of float32 (host byte order). Tensors follow each other in
//   the order below; each starts at an offset that is a multiple of kPolicyBlobAlignFloats
//   (64 bytes), the gaps are zero. Every tensor is row-major.
//     embedding                      [vocab, embedding]
//     for each LSTM layer l:
//       lstm_kernel_l                [in_l + h_l, 4 h_l]   in_0 = embedding, in_l = h_{l-1}
//       lstm_bias_l                  [4 h_l]
//     output                         [h_last, vocab]        (no bias)
//   LSTM columns are the TF1 BasicLSTMCell gates in the order (i, j, f, o), each h_l wide:
//   gates = [x, h] . kernel + bias, c' = c*sigmoid(f + 1) + sigmoid(i)*tanh(j),
//   h' = tanh(c')*sigmoid(o). The forget bias +1 is NOT stored; readers add it at run time.
// * The generic part (aligned named tensors, the fingerprint, the channel header) is
//   common/blob_layout.h; blob() is this policy's BlobLayout. fingerprint() identifies the
//   shape (and this layout's version); an actor compares it with the channel blob's header
//   (blob_payload()) before it uses the weights.
// * Pure value type, torch-free, header-only; all methods are const and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/blob_layout.h"
#include "common/errors.h"

namespace ringrl {

/// Offsets of blob tensors are rounded up to this many floats (64 bytes, one cache line).
inline constexpr std::size_t kPolicyBlobAlignFloats = kBlobAlignFloats;
/// Bumped whenever the blob order or alignment changes; part of the fingerprint.
inline constexpr std::uint32_t kPolicyLayoutVersion = 1;
/// Number of LSTM gates per unit (i, j, f, o).
inline constexpr int kLstmGates = 4;
/// Token 0 is EOS; it doubles as the start token (spec §2, §5.2).
inline constexpr int kPolicyEosToken = 0;
/// Logit given to EOS when eos_token is false, so EOS is never drawn (spec §5.1).
inline constexpr float kPolicyEosMaskedLogit = -2.4e38f;
/// TF1 BasicLSTMCell forget bias, added to the f gate at run time (not stored in the blob).
inline constexpr float kPolicyForgetBias = 1.0f;

/// Sizes of the policy network. Defaults: spec §6.1 (9 BF tokens, embedding 10, 2 x 35 LSTM).
struct PolicyShape {
  int vocab = 9;                        // number of tokens, EOS = 0
  int embedding = 10;                   // obs_embedding_size
  std::vector<int> lstm_sizes{35, 35};  // policy_lstm_sizes, bottom layer first

  /// Throws UsageError naming the bad field.
  void validate() const {
    if (vocab < 2) throw UsageError("policy vocab must be >= 2, got " + std::to_string(vocab));
    if (embedding < 1) {
      throw UsageError("policy embedding size must be >= 1, got " + std::to_string(embedding));
    }
    if (lstm_sizes.empty()) throw UsageError("policy lstm_sizes must name at least one layer");
    for (int h : lstm_sizes) {
      if (h < 1) throw UsageError("policy lstm size must be >= 1, got " + std::to_string(h));
    }
  }
  int num_layers() const { return static_cast<int>(lstm_sizes.size()); }
  /// Input width of LSTM layer l (embedding for layer 0, the layer below otherwise).
  int layer_input(int l) const { return l == 0 ? embedding : lstm_sizes[l - 1]; }
  int top_size() const { return lstm_sizes.back(); }
  bool operator==(const PolicyShape& o) const {
    return vocab == o.vocab && embedding == o.embedding && lstm_sizes == o.lstm_sizes;
  }
  bool operator!=(const PolicyShape& o) const { return !(*this == o); }
};

/// What a blob tensor is.
enum class PolicyTensorKind { kEmbedding, kLstmKernel, kLstmBias, kOutput };

/// One tensor of the blob: rows x cols floats, row-major, at `offset` floats from the start.
/// 1-D tensors (biases) have rows == 1.
struct PolicyTensorSpec {
  std::string name;  // "embedding", "lstm0/kernel", "lstm0/bias", ..., "output"
  PolicyTensorKind kind;
  int layer;  // LSTM layer for kernels and biases, -1 otherwise
  int rows;
  int cols;
  std::size_t offset;
  std::size_t numel() const { return static_cast<std::size_t>(rows) * cols; }
  bool is_vector() const { return kind == PolicyTensorKind::kLstmBias; }
};

/// The blob layout for one PolicyShape (see the contract above).
class PolicyLayout {
 public:
  /// Validates `shape` (UsageError) and computes the offsets.
  explicit PolicyLayout(PolicyShape shape = PolicyShape{}) : shape_(std::move(shape)), blob_(kPolicyLayoutVersion) {
    shape_.validate();
    auto add = [&](std::string name, PolicyTensorKind kind, int layer, int rows, int cols) {
      const BlobTensor& t = blob_.tensor(blob_.add(name, rows, cols));
      tensors_.push_back(PolicyTensorSpec{std::move(name), kind, layer, rows, cols, t.offset});
    };
    add("embedding", PolicyTensorKind::kEmbedding, -1, shape_.vocab, shape_.embedding);
    for (int l = 0; l < shape_.num_layers(); ++l) {
      const int h = shape_.lstm_sizes[l];
      const std::string prefix = "lstm" + std::to_string(l);
      add(prefix + "/kernel", PolicyTensorKind::kLstmKernel, l, shape_.layer_input(l) + h, kLstmGates * h);
      add(prefix + "/bias", PolicyTensorKind::kLstmBias, l, 1, kLstmGates * h);
    }
    add("output", PolicyTensorKind::kOutput, -1, shape_.top_size(), shape_.vocab);
  }

  const PolicyShape& shape() const { return shape_; }
  /// All tensors in blob order.
  const std::vector<PolicyTensorSpec>& tensors() const { return tensors_; }
  /// Blob size in floats / bytes (a multiple of kPolicyBlobAlignFloats).
  std::size_t num_floats() const { return blob_.num_floats(); }
  std::size_t num_bytes() const { return blob_.num_bytes(); }
  /// The generic layout of the same tensors (names, offsets, fingerprint).
  const BlobLayout& blob() const { return blob_; }
  /// Number of trainable parameters (excludes alignment padding).
  std::size_t num_parameters() const {
    std::size_t n = 0;
    for (const auto& t : tensors_) n += t.numel();
    return n;
  }

  const PolicyTensorSpec& embedding() const { return tensors_.front(); }
  const PolicyTensorSpec& lstm_kernel(int layer) const { return tensors_.at(1 + 2 * layer); }
  const PolicyTensorSpec& lstm_bias(int layer) const { return tensors_.at(2 + 2 * layer); }
  const PolicyTensorSpec& output() const { return tensors_.back(); }

  /// Equal iff the layouts are interchangeable (the layout version, names and shapes).
  std::uint64_t fingerprint() const { return blob_.fingerprint(); }

 private:
  PolicyShape shape_;
  BlobLayout blob_;
  std::vector<PolicyTensorSpec> tensors_;
};

}  // namespace ringrl
