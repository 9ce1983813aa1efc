// The Eigen body of learner/pqt/lstm_layer_kernel.h, included once by each
// lstm_layer_kernel_<isa>.cc. The including file renames Eigen (`#define Eigen
// ringrl_eigen_learner_<isa>`) and names the table it defines (RINGRL_LSTM_LAYER_KERNELS), so the
// templates instantiated here stay private to that translation unit's instruction set.
#pragma once

#ifndef RINGRL_LSTM_LAYER_KERNELS
#error "define RINGRL_LSTM_LAYER_KERNELS before including learner/pqt/lstm_layer_kernel_impl.h"
#endif

#include <Eigen/Core>

#include <cstddef>
#include <cstring>

#include "learner/pqt/lstm_layer_kernel.h"

namespace ringrl::learner {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatMap = Eigen::Map<RowMat>;
using ConstMatMap = Eigen::Map<const RowMat>;

/// Sigmoid over n contiguous floats, as (tanh(x / 2) + 1) / 2 through Eigen's vectorised tanh
/// (the actors' sampler computes it the same way).
void sigmoid_in_place(float* x, std::size_t n) {
  Eigen::Map<Eigen::ArrayXf> a(x, static_cast<Eigen::Index>(n));
  a = (a * 0.5f).tanh() * 0.5f + 0.5f;
}

void tanh_into(const float* x, std::size_t n, float* y) {
  Eigen::Map<Eigen::ArrayXf>(y, static_cast<Eigen::Index>(n)) =
      Eigen::Map<const Eigen::ArrayXf>(x, static_cast<Eigen::Index>(n)).tanh();
}

// The gate non-linearities run over whole contiguous steps, so every vector lane is used (a
// block of h = 35 columns would leave most of an AVX-512 register to scalar code). For that, j's
// tanh is computed as 2 sigmoid(2 x) - 1: the j columns of pre and of a copy of kh are doubled,
// and the forget bias is added, as each step's pre is copied in. The per-row loops below are
// plain arithmetic, which the compiler vectorises.
void forward(const LstmLayerDims& d, const float* pre, const float* kh, float forget_bias, float* acts, float* cs,
             float* tcs, float* hs, float* scratch) {
  const int n = d.batch, h = d.hidden, g4 = 4 * h;
  const std::size_t gate_step = static_cast<std::size_t>(n) * g4;
  const std::size_t state_step = static_cast<std::size_t>(n) * h;
  MatMap k2(scratch, h, g4);
  k2 = ConstMatMap(kh, h, g4);
  k2.middleCols(h, h) *= 2.0f;
  for (int t = 0; t < d.steps; ++t) {
    float* __restrict a = acts + t * gate_step;
    const float* __restrict p = pre + t * gate_step;
    for (int r = 0; r < n; ++r) {
      float* __restrict ar = a + r * g4;
      const float* __restrict pr = p + r * g4;
      for (int u = 0; u < h; ++u) ar[u] = pr[u];
      for (int u = h; u < 2 * h; ++u) ar[u] = 2.0f * pr[u];
      for (int u = 2 * h; u < 3 * h; ++u) ar[u] = pr[u] + forget_bias;
      for (int u = 3 * h; u < g4; ++u) ar[u] = pr[u];
    }
    if (t > 0) MatMap(a, n, g4).noalias() += ConstMatMap(hs + (t - 1) * state_step, n, h) * k2;
    sigmoid_in_place(a, gate_step);
    float* __restrict c = cs + t * state_step;
    const float* __restrict c_prev = t > 0 ? cs + (t - 1) * state_step : nullptr;
    for (int r = 0; r < n; ++r) {
      float* __restrict ar = a + r * g4;
      float* __restrict cr = c + r * h;
      for (int u = 0; u < h; ++u) ar[h + u] = 2.0f * ar[h + u] - 1.0f;
      if (c_prev != nullptr) {
        const float* __restrict cp = c_prev + r * h;
        for (int u = 0; u < h; ++u) cr[u] = cp[u] * ar[2 * h + u] + ar[u] * ar[h + u];
      } else {
        for (int u = 0; u < h; ++u) cr[u] = ar[u] * ar[h + u];
      }
    }
    float* __restrict tc = tcs + t * state_step;
    tanh_into(c, state_step, tc);
    float* __restrict out = hs + t * state_step;
    for (int r = 0; r < n; ++r) {
      const float* __restrict o = a + r * g4 + 3 * h;
      for (int u = 0; u < h; ++u) out[r * h + u] = o[u] * tc[r * h + u];
    }
  }
}

void backward(const LstmLayerDims& d, const float* kh, const float* acts, const float* cs, const float* tcs,
              const float* dh_out, float* dg, float* scratch) {
  const int n = d.batch, h = d.hidden, g4 = 4 * h;
  const std::size_t gate_step = static_cast<std::size_t>(n) * g4;
  const std::size_t state_step = static_cast<std::size_t>(n) * h;
  const ConstMatMap k(kh, h, g4);
  float* __restrict dh_rec = scratch;           // dL/dh_t through h_t -> step t + 1
  float* __restrict dc = scratch + state_step;  // dL/dc_t through c_t -> c_{t+1}
  std::memset(dh_rec, 0, sizeof(float) * state_step);
  std::memset(dc, 0, sizeof(float) * state_step);
  for (int t = d.steps - 1; t >= 0; --t) {
    const float* __restrict a = acts + t * gate_step;
    const float* __restrict tc = tcs + t * state_step;
    const float* __restrict dho = dh_out + t * state_step;
    const float* __restrict c_prev = t > 0 ? cs + (t - 1) * state_step : nullptr;
    float* __restrict g = dg + t * gate_step;
    for (int r = 0; r < n; ++r) {
      const float* __restrict ar = a + r * g4;
      float* __restrict gr = g + r * g4;
      const int s = r * h;
      for (int u = 0; u < h; ++u) {
        const float i = ar[u], j = ar[h + u], f = ar[2 * h + u], o = ar[3 * h + u];
        const float dht = dho[s + u] + dh_rec[s + u];
        const float tcu = tc[s + u];
        const float dct = dc[s + u] + dht * o * (1.0f - tcu * tcu);
        gr[u] = dct * j * i * (1.0f - i);
        gr[h + u] = dct * i * (1.0f - j * j);
        gr[2 * h + u] = c_prev != nullptr ? dct * c_prev[s + u] * f * (1.0f - f) : 0.0f;
        gr[3 * h + u] = dht * tcu * o * (1.0f - o);
        dc[s + u] = dct * f;
      }
    }
    if (t > 0) MatMap(dh_rec, n, h).noalias() = ConstMatMap(g, n, g4) * k.transpose();
  }
}

}  // namespace

namespace detail {
extern const LstmLayerKernels RINGRL_LSTM_LAYER_KERNELS;
const LstmLayerKernels RINGRL_LSTM_LAYER_KERNELS{&forward, &backward, RINGRL_LSTM_LAYER_ISA};
}  // namespace detail

}  // namespace ringrl::learner
