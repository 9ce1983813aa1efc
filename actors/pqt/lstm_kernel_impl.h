// The Eigen sampling kernel, included once by each actors/lstm_kernel_<isa>.cc.
//
// The including file defines RINGRL_KERNEL_FACTORY (the factory's name) and renames the
// Eigen namespace (`#define Eigen ringrl_eigen_<isa>`) before including this, so every
// template instantiated here is private to its translation unit and its instruction set.
// Everything else lives in an anonymous namespace for the same reason.
//
// Data layout (all column-major, batch index innermost, so every per-unit vector over the
// batch is contiguous and the gate blocks are contiguous slabs):
//   gates_l [B, 4 h_l] with the gate blocks reordered to (i, f, o, j): one sigmoid over the
//   first 3 h_l columns, one tanh over the last h_l.
//   Layer 0's input term is a lookup: ekb0 [V, 4 h0] = E . K0[:emb] + b0 + forget bias.
//   xh_l [B, h_{l-1} + h_l] for l >= 1 holds [h_{l-1}, h_l], the input of layer l's single
//   GEMM; layer 0's state lives in xh_1's left columns, so a 2-layer step copies nothing.
#pragma once

#ifndef RINGRL_KERNEL_FACTORY
#error "define RINGRL_KERNEL_FACTORY before including actors/pqt/lstm_kernel_impl.h"
#endif

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "actors/pqt/lstm_kernel.h"

namespace ringrl::actors::detail {
namespace {

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
using Vec = Eigen::Matrix<float, Eigen::Dynamic, 1>;
using IVec = Eigen::Matrix<std::int32_t, Eigen::Dynamic, 1>;

/// TF gate block k (i, j, f, o) -> kernel gate block (i, f, o, j).
constexpr int kGateOrder[4] = {0, 3, 1, 2};
constexpr int kForgetBlock = 1;  // f in the kernel order
constexpr int kSigmoidBlocks = 3;

/// splitmix64: small, fast, statistically sound for drawing tokens.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1) with 24 random bits.
  float uniform() { return static_cast<float>(next() >> 40) * 0x1.0p-24f; }

 private:
  std::uint64_t state_;
};

class Kernel final : public SamplerKernel {
 public:
  explicit Kernel(const KernelConfig& config) : c_(config) {
    const int b = c_.batch_size;
    for (int l = 0; l < c_.num_layers; ++l) {
      h_[l] = c_.lstm_sizes[l];
      in_[l] = l == 0 ? c_.embedding : c_.lstm_sizes[l - 1];
      gates_[l] = Mat::Zero(b, 4 * h_[l]);
      cell_[l] = Mat::Zero(b, h_[l]);
      if (l >= 1) {
        k_[l] = Mat::Zero(in_[l] + h_[l], 4 * h_[l]);
        bias_[l] = Vec::Zero(4 * h_[l]);
        xh_[l] = Mat::Zero(b, in_[l] + h_[l]);
      }
    }
    if (c_.num_layers == 1) xh_[0] = Mat::Zero(b, h_[0]);
    ekb0_ = Mat::Zero(c_.vocab, 4 * h_[0]);
    kh0_ = Mat::Zero(h_[0], 4 * h_[0]);
    w_ = Mat::Zero(h_[c_.num_layers - 1], c_.vocab);
    logits_ = Mat::Zero(b, c_.vocab);
    probs_ = Mat::Zero(b, c_.vocab);
    max_ = Vec::Zero(b);
    sum_ = Vec::Zero(b);
    log_sum_ = Vec::Zero(b);
    input_ = IVec::Zero(b);
    done_ = IVec::Zero(b);
  }

  void set_weights(const float* blob) override {
    const int v = c_.vocab;
    const int e = c_.embedding;
    // Layer 0: fold the embedding, the bias and the forget bias into a per-token table.
    {
      const int h = h_[0];
      const float* emb = blob + c_.embedding_offset;
      const float* k0 = blob + c_.kernel_offset[0];
      const float* b0 = blob + c_.bias_offset[0];
      for (int col = 0; col < 4 * h; ++col) {
        const int block = col / h;
        const int dst = kGateOrder[block] * h + col % h;
        const float fb = kGateOrder[block] == kForgetBlock ? c_.forget_bias : 0.0f;
        for (int tok = 0; tok < v; ++tok) {
          float acc = 0.0f;
          for (int r = 0; r < e; ++r) acc += emb[tok * e + r] * k0[r * 4 * h + col];
          ekb0_(tok, dst) = acc + b0[col] + fb;
        }
        for (int r = 0; r < h; ++r) kh0_(r, dst) = k0[(e + r) * 4 * h + col];
      }
    }
    // Upper layers: reorder the gate columns, fold the forget bias into the bias.
    for (int l = 1; l < c_.num_layers; ++l) {
      const int h = h_[l];
      const int rows = in_[l] + h;
      const float* k = blob + c_.kernel_offset[l];
      const float* bias = blob + c_.bias_offset[l];
      for (int col = 0; col < 4 * h; ++col) {
        const int block = col / h;
        const int dst = kGateOrder[block] * h + col % h;
        const float fb = kGateOrder[block] == kForgetBlock ? c_.forget_bias : 0.0f;
        for (int r = 0; r < rows; ++r) k_[l](r, dst) = k[r * 4 * h + col];
        bias_[l](dst) = bias[col] + fb;
      }
    }
    const float* out = blob + c_.output_offset;
    for (int r = 0; r < w_.rows(); ++r) {
      for (int tok = 0; tok < v; ++tok) w_(r, tok) = out[r * v + tok];
    }
  }

  void sample(std::uint64_t seed, std::int32_t* tokens, std::int32_t* lengths, float* log_probs) override {
    const int b = c_.batch_size;
    const int t_max = c_.max_len;
    const int first = c_.eos_token ? 0 : 1;  // first drawable token
    const int live = c_.vocab - first;
    SplitMix64 rng(seed);
    reset_state();
    input_.setZero();  // EOS doubles as the start token
    done_.setZero();
    std::memset(tokens, 0, sizeof(std::int32_t) * static_cast<std::size_t>(b) * t_max);
    std::memset(log_probs, 0, sizeof(float) * static_cast<std::size_t>(b) * t_max);
    for (int i = 0; i < b; ++i) lengths[i] = t_max;
    int running = b;

    for (int t = 0; t < t_max && running > 0; ++t) {
      step(input_.data());
      auto lg = logits_.rightCols(live);
      if (c_.softmax_tr != 1.0f) lg *= c_.softmax_tr;
      // Row-wise max, exp and sum, vectorised over the batch (column by column).
      max_ = lg.col(0);
      for (int a = 1; a < live; ++a) max_ = max_.cwiseMax(lg.col(a));
      auto pr = probs_.leftCols(live);
      pr.array() = (lg.colwise() - max_).array().exp();
      sum_ = pr.col(0);
      for (int a = 1; a < live; ++a) sum_ += pr.col(a);
      log_sum_.array() = sum_.array().log();

      // Inverse-CDF draw per row (same summation order as sum_).
      for (int i = 0; i < b; ++i) {
        const float u = rng.uniform() * sum_(i);
        if (done_(i)) {
          input_(i) = 0;
          continue;
        }
        float cum = 0.0f;
        int pick = -1;
        int last_positive = 0;
        for (int a = 0; a < live; ++a) {
          const float p = pr(i, a);
          if (p > 0.0f) last_positive = a;
          cum += p;
          if (u < cum) {
            pick = a;
            break;
          }
        }
        if (pick < 0) pick = last_positive;  // u*sum rounded up to sum
        const int token = pick + first;
        const std::size_t at = static_cast<std::size_t>(i) * t_max + t;
        tokens[at] = token;
        log_probs[at] = (lg(i, pick) - max_(i)) - log_sum_(i);
        input_(i) = token;
        if (token == 0) {  // EOS drawn (only when eos_token)
          done_(i) = 1;
          lengths[i] = t + 1;
          --running;
        }
      }
    }
  }

  void teacher_forced_logits(const std::int32_t* tokens, int b, int t, float* out) override {
    const int v = c_.vocab;
    reset_state();
    input_.setZero();
    for (int s = 0; s < t; ++s) {
      step(input_.data());
      if (!c_.eos_token) logits_.col(0).setConstant(c_.eos_masked_logit);
      for (int i = 0; i < b; ++i) {
        float* dst = out + (static_cast<std::size_t>(i) * t + s) * v;
        for (int a = 0; a < v; ++a) dst[a] = logits_(i, a);
        input_(i) = tokens[static_cast<std::size_t>(i) * t + s];
      }
    }
  }

 private:
  void reset_state() {
    for (int l = 0; l < c_.num_layers; ++l) {
      cell_[l].setZero();
      if (l >= 1 || c_.num_layers == 1) xh_[l].setZero();
    }
  }

  /// Where layer l's hidden state lives (see the layout note at the top).
  Eigen::Block<Mat, Eigen::Dynamic, Eigen::Dynamic, true> hidden(int l) {
    if (l == 0) {
      return c_.num_layers == 1 ? xh_[0].leftCols(h_[0]) : xh_[1].leftCols(h_[0]);
    }
    return xh_[l].rightCols(h_[l]);
  }

  /// Gate non-linearities and the state update of layer l from gates_[l].
  void cell_update(int l) {
    const int h = h_[l];
    Mat& g = gates_[l];
    auto sig = g.leftCols(kSigmoidBlocks * h).array();
    sig = (sig * 0.5f).tanh() * 0.5f + 0.5f;  // sigmoid via the vectorised tanh
    auto j = g.rightCols(h).array();
    j = j.tanh();
    cell_[l].array() = cell_[l].array() * g.middleCols(h, h).array() + g.leftCols(h).array() * g.rightCols(h).array();
    hidden(l).array() = g.middleCols(2 * h, h).array() * cell_[l].array().tanh();
  }

  /// One time step for input tokens [B]; leaves raw logits in logits_.
  void step(const std::int32_t* in_tokens) {
    const int b = c_.batch_size;
    const int v = c_.vocab;
    // Layer 0: table lookup for the input term, one GEMM for the recurrent term.
    {
      Mat& g = gates_[0];
      const int cols = static_cast<int>(g.cols());
      for (int col = 0; col < cols; ++col) {
        const float* table = ekb0_.data() + static_cast<std::size_t>(col) * v;
        float* dst = g.data() + static_cast<std::size_t>(col) * b;
        for (int i = 0; i < b; ++i) dst[i] = table[in_tokens[i]];
      }
      g.noalias() += hidden(0) * kh0_;
      cell_update(0);
    }
    for (int l = 1; l < c_.num_layers; ++l) {
      Mat& g = gates_[l];
      g = bias_[l].transpose().replicate(b, 1);
      g.noalias() += xh_[l] * k_[l];
      cell_update(l);
      if (l + 1 < c_.num_layers) xh_[l + 1].leftCols(h_[l]) = xh_[l].rightCols(h_[l]);
    }
    logits_.noalias() = hidden(c_.num_layers - 1) * w_;
  }

  KernelConfig c_;
  int h_[kMaxKernelLayers] = {};
  int in_[kMaxKernelLayers] = {};
  Mat ekb0_;                    // [V, 4 h0]
  Mat kh0_;                     // [h0, 4 h0]
  Mat k_[kMaxKernelLayers];     // l >= 1: [in_l + h_l, 4 h_l]
  Vec bias_[kMaxKernelLayers];  // l >= 1: [4 h_l], forget bias folded in
  Mat w_;                       // [h_top, V]
  Mat gates_[kMaxKernelLayers];
  Mat cell_[kMaxKernelLayers];
  Mat xh_[kMaxKernelLayers];
  Mat logits_;  // [B, V]
  Mat probs_;   // [B, V] (first `live` columns used)
  Vec max_, sum_, log_sum_;
  IVec input_, done_;
};

}  // namespace

SamplerKernel* RINGRL_KERNEL_FACTORY(const KernelConfig& config) { return new Kernel(config); }

}  // namespace ringrl::actors::detail
