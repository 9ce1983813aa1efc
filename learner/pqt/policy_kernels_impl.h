// The Eigen body of learner/pqt/policy_kernels.h, included once by each
// policy_kernels_<isa>.cc. The including file renames Eigen (`#define Eigen
// ringrl_eigen_learner_<isa>`) and names the table it defines (RINGRL_POLICY_KERNELS_TABLE), so the
// templates instantiated here stay private to that translation unit's instruction set.
#pragma once

#ifndef RINGRL_POLICY_KERNELS_TABLE
#error "define RINGRL_POLICY_KERNELS_TABLE before including learner/pqt/policy_kernels_impl.h"
#endif

#include <Eigen/Core>
#if defined(__AVX512F__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "learner/pqt/policy_kernels.h"

namespace ringrl::learner {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

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

using PaddedMap = Eigen::Map<const RowMat, 0, Eigen::OuterStride<>>;

// The recurrent products of a step, c[n, m] (+)= a[n, kdim] b[kdim, m], where b is a weight
// copy whose rows are padded to padded16(m) floats with zeros (ldb). They are small (n rows of
// one shard, m = 4h or h): a general GEMM would pack b again at every step.
#if defined(__AVX512F__)
// R rows at once over V vectors of 16 columns: every b load feeds R FMAs, and the R V
// accumulators stay in registers (R V <= 24 of the 32).
template <int V, int R>
inline void padded_rows(const float* a, int lda, int kdim, const float* b, float* c, int ldc, __mmask16 tail,
                        bool accumulate) {
  __m512 acc[R][V];
  for (int i = 0; i < R; ++i) {
    for (int v = 0; v < V; ++v) {
      const __mmask16 m = v == V - 1 ? tail : static_cast<__mmask16>(0xFFFF);
      acc[i][v] = accumulate ? _mm512_maskz_loadu_ps(m, c + i * ldc + 16 * v) : _mm512_setzero_ps();
    }
  }
  for (int k = 0; k < kdim; ++k) {
    const float* bk = b + k * 16 * V;
    for (int v = 0; v < V; ++v) {
      const __m512 w = _mm512_loadu_ps(bk + 16 * v);
      for (int i = 0; i < R; ++i) acc[i][v] = _mm512_fmadd_ps(_mm512_set1_ps(a[i * lda + k]), w, acc[i][v]);
    }
  }
  for (int i = 0; i < R; ++i) {
    for (int v = 0; v < V; ++v) {
      const __mmask16 m = v == V - 1 ? tail : static_cast<__mmask16>(0xFFFF);
      _mm512_mask_storeu_ps(c + i * ldc + 16 * v, m, acc[i][v]);
    }
  }
}

template <int V>
void padded_product_v(int n, const float* a, int lda, int kdim, const float* b, float* c, int ldc, __mmask16 tail,
                      bool accumulate) {
  constexpr int R = std::min(8, 24 / V);
  int r = 0;
  for (; r + R <= n; r += R) padded_rows<V, R>(a + r * lda, lda, kdim, b, c + r * ldc, ldc, tail, accumulate);
  for (; r < n; ++r) padded_rows<V, 1>(a + r * lda, lda, kdim, b, c + r * ldc, ldc, tail, accumulate);
}
#endif

void padded_product(int n, int m, const float* a, int lda, int kdim, const float* b, float* c, int ldc,
                    bool accumulate) {
#if defined(__AVX512F__)
  const __mmask16 tail = m % 16 == 0 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << (m % 16)) - 1);
  switch ((m + 15) / 16) {
    case 1: return padded_product_v<1>(n, a, lda, kdim, b, c, ldc, tail, accumulate);
    case 2: return padded_product_v<2>(n, a, lda, kdim, b, c, ldc, tail, accumulate);
    case 3: return padded_product_v<3>(n, a, lda, kdim, b, c, ldc, tail, accumulate);
    case 4: return padded_product_v<4>(n, a, lda, kdim, b, c, ldc, tail, accumulate);
    case 5: return padded_product_v<5>(n, a, lda, kdim, b, c, ldc, tail, accumulate);
    case 6: return padded_product_v<6>(n, a, lda, kdim, b, c, ldc, tail, accumulate);
    case 7: return padded_product_v<7>(n, a, lda, kdim, b, c, ldc, tail, accumulate);
    case 8: return padded_product_v<8>(n, a, lda, kdim, b, c, ldc, tail, accumulate);
    case 9: return padded_product_v<9>(n, a, lda, kdim, b, c, ldc, tail, accumulate);
    default: break;  // wider than the registers hold: the general product below
  }
#endif
  const PaddedMap bm(b, kdim, m, Eigen::OuterStride<>(padded16(m)));
  Eigen::Map<RowMat, 0, Eigen::OuterStride<>> cm(c, n, m, Eigen::OuterStride<>(ldc));
  const Eigen::Map<const RowMat, 0, Eigen::OuterStride<>> am(a, n, kdim, Eigen::OuterStride<>(lda));
  if (accumulate) {
    cm.noalias() += am * bm;
  } else {
    cm.noalias() = am * bm;
  }
}

// One row of a step. Pointer arguments are __restrict so that the loops vectorise.

/// ar = pre + cb (the bias, with the forget bias on f), j doubled (see forward).
inline void stage_row(int h, const float* __restrict pr, const float* __restrict cb, float* __restrict ar) {
  for (int u = 0; u < 4 * h; ++u) ar[u] = pr[u] + cb[u];
  for (int u = h; u < 2 * h; ++u) ar[u] *= 2.0f;
}

/// From the sigmoids in ar: j = 2 s - 1 (stored back), c = c_prev f + i j.
inline void cell_row(int h, float* __restrict ar, const float* __restrict cp, float* __restrict cr) {
  float* __restrict i = ar;
  float* __restrict j = ar + h;
  const float* __restrict f = ar + 2 * h;
  for (int u = 0; u < h; ++u) j[u] = 2.0f * j[u] - 1.0f;
  if (cp != nullptr) {
    for (int u = 0; u < h; ++u) cr[u] = cp[u] * f[u] + i[u] * j[u];
  } else {
    for (int u = 0; u < h; ++u) cr[u] = i[u] * j[u];
  }
}

inline void add_row(int len, const float* __restrict x, float* __restrict acc) {
  for (int u = 0; u < len; ++u) acc[u] += x[u];
}

inline void output_row(int h, const float* __restrict o, const float* __restrict tc, float* __restrict out) {
  for (int u = 0; u < h; ++u) out[u] = o[u] * tc[u];
}

/// The elementwise backward of one row: dc carries dL/dc_t in and dL/dc_{t-1} (through c) out.
inline void cell_backward_row(int h, const float* __restrict ar, const float* __restrict tc,
                              const float* __restrict dho, const float* __restrict dh_rec,
                              const float* __restrict cp, float* __restrict dc, float* __restrict gr) {
  const float* __restrict i = ar;
  const float* __restrict j = ar + h;
  const float* __restrict f = ar + 2 * h;
  const float* __restrict o = ar + 3 * h;
  float* __restrict gi = gr;
  float* __restrict gj = gr + h;
  float* __restrict gf = gr + 2 * h;
  float* __restrict go = gr + 3 * h;
  for (int u = 0; u < h; ++u) {
    const float dht = dho[u] + dh_rec[u];
    const float dct = dc[u] + dht * o[u] * (1.0f - tc[u] * tc[u]);
    gi[u] = dct * j[u] * i[u] * (1.0f - i[u]);
    gj[u] = dct * i[u] * (1.0f - j[u] * j[u]);
    go[u] = dht * tc[u] * o[u] * (1.0f - o[u]);
    gf[u] = dct * f[u] * (1.0f - f[u]);  // times c_{t-1} below
    dc[u] = dct * f[u];
  }
  if (cp != nullptr) {
    for (int u = 0; u < h; ++u) gf[u] *= cp[u];
  } else {
    for (int u = 0; u < h; ++u) gf[u] = 0.0f;
  }
}

// The gate non-linearities run over whole contiguous steps, so every vector lane is used (a
// block of h = 35 columns would leave most of an AVX-512 register to scalar code). For that, j's
// tanh is computed as 2 sigmoid(2 x) - 1: the j columns of pre and of a copy of kh are doubled,
// and the forget bias is added, as each step's pre is copied in.
void forward(const LstmLayerDims& d, int row_begin, int row_end, const float* pre, const float* kh, const float* bias,
             float forget_bias, float* acts, float* cs, float* tcs, float* hs, float* scratch) {
  const int n = row_end - row_begin, h = d.hidden, g4 = 4 * h;
  const std::size_t gate_step = static_cast<std::size_t>(d.batch) * g4;
  const std::size_t state_step = static_cast<std::size_t>(d.batch) * h;
  const std::size_t slice = static_cast<std::size_t>(n) * h;  // this slice's floats per state step
  // From here on every array pointer starts at this slice's first row.
  pre += static_cast<std::size_t>(row_begin) * g4;
  acts += static_cast<std::size_t>(row_begin) * g4;
  cs += static_cast<std::size_t>(row_begin) * h;
  tcs += static_cast<std::size_t>(row_begin) * h;
  hs += static_cast<std::size_t>(row_begin) * h;
  const int g4p = padded16(g4);
  float* k2 = scratch;  // kh with j doubled, rows padded to g4p
  for (int k = 0; k < h; ++k) {
    for (int u = 0; u < g4p; ++u) k2[k * g4p + u] = u < g4 ? kh[k * g4 + u] * (u >= h && u < 2 * h ? 2.0f : 1.0f) : 0.0f;
  }
  float* cb = scratch + static_cast<std::size_t>(h) * g4p;
  for (int u = 0; u < g4; ++u) cb[u] = (bias != nullptr ? bias[u] : 0.0f) + (u / h == 2 ? forget_bias : 0.0f);
  for (int t = 0; t < d.steps; ++t) {
    float* a = acts + t * gate_step;
    const float* p = pre + t * gate_step;
    for (int r = 0; r < n; ++r) stage_row(h, p + r * g4, cb, a + r * g4);
    if (t > 0) padded_product(n, g4, hs + (t - 1) * state_step, h, h, k2, a, g4, /*accumulate=*/true);
    sigmoid_in_place(a, static_cast<std::size_t>(n) * g4);
    float* c = cs + t * state_step;
    const float* c_prev = t > 0 ? cs + (t - 1) * state_step : nullptr;
    for (int r = 0; r < n; ++r) cell_row(h, a + r * g4, c_prev != nullptr ? c_prev + r * h : nullptr, c + r * h);
    float* tc = tcs + t * state_step;
    tanh_into(c, slice, tc);
    float* out = hs + t * state_step;
    for (int r = 0; r < n; ++r) output_row(h, a + r * g4 + 3 * h, tc + r * h, out + r * h);
  }
}

void backward(const LstmLayerDims& d, int row_begin, int row_end, const float* kh, const float* acts, const float* cs,
              const float* tcs, const float* dh_out, float* dg, float* dbias, float* scratch) {
  const int n = row_end - row_begin, h = d.hidden, g4 = 4 * h;
  const std::size_t gate_step = static_cast<std::size_t>(d.batch) * g4;
  const std::size_t state_step = static_cast<std::size_t>(d.batch) * h;
  const std::size_t slice = static_cast<std::size_t>(n) * h;
  acts += static_cast<std::size_t>(row_begin) * g4;
  dg += static_cast<std::size_t>(row_begin) * g4;
  cs += static_cast<std::size_t>(row_begin) * h;
  tcs += static_cast<std::size_t>(row_begin) * h;
  dh_out += static_cast<std::size_t>(row_begin) * h;
  const int hp = padded16(h);
  float* dh_rec = scratch;           // dL/dh_t through h_t -> step t + 1
  float* dc = scratch + slice;       // dL/dc_t through c_t -> c_{t+1}
  float* kt = scratch + 2 * slice;   // kh transposed, rows padded to hp
  for (int u = 0; u < g4; ++u) {
    for (int k = 0; k < hp; ++k) kt[u * hp + k] = k < h ? kh[k * g4 + u] : 0.0f;
  }
  std::memset(dh_rec, 0, sizeof(float) * slice);
  std::memset(dc, 0, sizeof(float) * slice);
  for (int t = d.steps - 1; t >= 0; --t) {
    const float* a = acts + t * gate_step;
    const float* tc = tcs + t * state_step;
    const float* dho = dh_out + t * state_step;
    const float* c_prev = t > 0 ? cs + (t - 1) * state_step : nullptr;
    float* g = dg + t * gate_step;
    for (int r = 0; r < n; ++r) {
      const int s = r * h;
      cell_backward_row(h, a + r * g4, tc + s, dho + s, dh_rec + s, c_prev != nullptr ? c_prev + s : nullptr, dc + s,
                        g + r * g4);
      if (dbias != nullptr) add_row(g4, g + r * g4, dbias);
    }
    if (t > 0) padded_product(n, h, g, g4, g4, kt, dh_rec, h, /*accumulate=*/false);
  }
}

using ColArray = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
using ColMap = Eigen::Map<ColArray>;
using ConstColMap = Eigen::Map<const ColArray>;
using VecMap = Eigen::Map<Eigen::ArrayXf>;
using ConstVecMap = Eigen::Map<const Eigen::ArrayXf>;

// [V, P] row-major is [P, V] column-major: column v is token v over all positions, so every
// operation below is vectorised over positions.
void head_forward(int positions, int vocab, bool eos_masked, float masked_logit, float entropy_floor, float* z,
                  const int* actions, float* lp, float* alp, float* ent) {
  ColMap zm(z, positions, vocab);
  ColMap lpm(lp, positions, vocab);
  VecMap e(ent, positions);
  if (eos_masked) zm.col(0).setConstant(masked_logit);
  // alp holds the max, then the log of the sum, before its final values.
  VecMap m(alp, positions);
  m = zm.col(0);
  for (int v = 1; v < vocab; ++v) m = m.max(zm.col(v));
  e = (zm.col(0) - m).exp();
  for (int v = 1; v < vocab; ++v) e += (zm.col(v) - m).exp();
  e = e.log();
  for (int v = 0; v < vocab; ++v) lpm.col(v) = (zm.col(v) - m) - e;
  e.setZero();
  for (int v = 0; v < vocab; ++v) {
    const auto lc = lpm.col(v).max(entropy_floor);
    e -= lc.exp() * lc;
  }
  for (int p = 0; p < positions; ++p) alp[p] = lp[static_cast<std::size_t>(actions[p]) * positions + p];
}

void head_backward(int positions, int vocab, bool eos_masked, float entropy_floor, const float* lp, const int* actions,
                   const float* ca, const float* ce, const float* ent, float* dz) {
  const ConstColMap lpm(lp, positions, vocab);
  ColMap dzm(dz, positions, vocab);
  const ConstVecMap a(ca, positions), c(ce, positions), e(ent, positions);
  for (int v = 0; v < vocab; ++v) {
    const auto p = lpm.col(v).exp();
    dzm.col(v) = -(a * p) - c * p * (lpm.col(v).max(entropy_floor) + e);
  }
  for (int p = 0; p < positions; ++p) dz[static_cast<std::size_t>(actions[p]) * positions + p] += ca[p];
  if (eos_masked) dzm.col(0).setZero();
}

}  // namespace

namespace detail {
extern const PolicyKernels RINGRL_POLICY_KERNELS_TABLE;
const PolicyKernels RINGRL_POLICY_KERNELS_TABLE{&forward, &backward, &head_forward, &head_backward,
                                                 RINGRL_POLICY_KERNELS_ISA};
}  // namespace detail

}  // namespace ringrl::learner
