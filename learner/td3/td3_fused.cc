#include "learner/td3/td3_fused.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "common/errors.h"

// BLAS's single-precision product (Fortran interface), as LibTorch's MKL or the system BLAS
// exports it; null where neither does (gemm() below then goes through torch).
extern "C" void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k,
                       const float* alpha, const float* a, const int* lda, const float* b, const int* ldb,
                       const float* beta, float* c, const int* ldc) __attribute__((weak));
// MKL's bfloat16 product with float32 sums (C interface; layout 101 = row-major, transposes
// 111 = none, 112 = transposed); null where LibTorch's BLAS has none (precision bf16 is then
// refused).
extern "C" void cblas_gemm_bf16bf16f32(int layout, int transa, int transb, int m, int n, int k, float alpha,
                                       const std::uint16_t* a, int lda, const std::uint16_t* b, int ldb, float beta,
                                       float* c, int ldc) __attribute__((weak));

namespace ringrl::td3 {

namespace {

constexpr float kSmallestNormal = std::numeric_limits<float>::min();

float* f32(const torch::Tensor& t) { return t.data_ptr<float>(); }

// How a 2-D float tensor lies in memory for BLAS: row-major with leading dimension `ld`, or
// the transpose of a row-major matrix (a .t() view). `ok` is false for any other layout.
struct BlasOperand {
  bool ok = false, transposed = false;
  int ld = 0;
};

BlasOperand blas_operand(const torch::Tensor& t) {
  const std::int64_t rows = t.size(0), cols = t.size(1), s0 = t.stride(0), s1 = t.stride(1);
  BlasOperand o;
  if ((s1 == 1 || cols == 1) && (rows == 1 || s0 >= cols)) {
    o.ok = true;
    o.ld = static_cast<int>(rows == 1 ? std::max<std::int64_t>(cols, 1) : s0);
  } else if ((s0 == 1 || rows == 1) && (cols == 1 || s1 >= rows)) {
    o.ok = o.transposed = true;
    o.ld = static_cast<int>(cols == 1 ? std::max<std::int64_t>(rows, 1) : s1);
  }
  return o;
}

}  // namespace

namespace fused_detail {

// dst[i] <- src[i] rounded to bfloat16, to nearest even (the inputs are finite).
[[gnu::target_clones("avx512f", "avx2", "default")]] void to_bf16(const float* __restrict src,
                                                                   std::uint16_t* __restrict dst, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, src + i, sizeof u);
    u += 0x7fffu + ((u >> 16) & 1u);
    dst[i] = static_cast<std::uint16_t>(u >> 16);
  }
}

}  // namespace fused_detail

namespace {

// Where a bfloat16 form of operand x lies for cblas_gemm_bf16bf16f32: in a weight's copy when
// x views a mirrored weight, else rounded into `scratch` (the row-major matrix under x, rows
// made contiguous). `ok` is false for a layout BLAS cannot take.
struct Bf16Operand {
  bool ok = false, transposed = false;
  int ld = 0;
  const std::uint16_t* p = nullptr;
};

Bf16Operand bf16_operand(const torch::Tensor& x, const fused_detail::Bf16Mirrors& mirrors,
                         std::vector<std::uint16_t>& scratch) {
  const BlasOperand o = blas_operand(x);
  Bf16Operand out;
  if (!o.ok) return out;
  out.ok = true;
  out.transposed = o.transposed;
  const float* p = f32(x);
  for (const fused_detail::Bf16Mirror& m : mirrors) {
    const float* base = f32(m.src);
    if (p >= base && p < base + m.src.numel()) {
      out.ld = o.ld;
      out.p = m.bf.data() + (p - base);
      return out;
    }
  }
  // The row-major matrix under x: x itself, or x^T for a transposed view.
  const std::int64_t rows = o.transposed ? x.size(1) : x.size(0);
  const std::int64_t cols = o.transposed ? x.size(0) : x.size(1);
  scratch.resize(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r) fused_detail::to_bf16(p + r * o.ld, scratch.data() + r * cols, cols);
  out.ld = static_cast<int>(cols);
  out.p = scratch.data();
  return out;
}

// The smallest inner and output dimensions of a product that runs in bfloat16 (precision bf16):
// the hidden-to-hidden layers and their gradients; the thin first and last layers stay float32.
constexpr std::int64_t kBf16MinDim = 64;

// c <- a . b + beta c in bfloat16 with float32 sums; false (nothing done) when the product is
// too thin for it or a layout does not fit.
bool gemm_bf16(torch::Tensor& c, const torch::Tensor& a, const torch::Tensor& b, float beta,
               const fused_detail::Bf16Mirrors& mirrors) {
  const std::int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  if (k < kBf16MinDim || n < kBf16MinDim || m == 0 || cblas_gemm_bf16bf16f32 == nullptr) return false;
  const BlasOperand oc = blas_operand(c);
  if (!oc.ok || oc.transposed) return false;
  thread_local std::vector<std::uint16_t> scratch_a, scratch_b;
  const Bf16Operand pa = bf16_operand(a, mirrors, scratch_a);
  const Bf16Operand pb = bf16_operand(b, mirrors, scratch_b);
  if (!pa.ok || !pb.ok) return false;
  constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
  cblas_gemm_bf16bf16f32(kRowMajor, pa.transposed ? kTrans : kNoTrans, pb.transposed ? kTrans : kNoTrans,
                         static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, pa.p, pa.ld, pb.p,
                         pb.ld, beta, f32(c), oc.ld);
  return true;
}

// c <- a . b + beta c on the learner's BLAS (MKL in LibTorch's wheel), called directly: at
// batch 100 an update makes ~70 of these products, and torch's per-call dispatch, checks and
// output resizing cost about as much as a small product itself. A row-major product is the
// column-major product of the transposes, so a and b swap places in the call. Falls back to
// at::mm_out / addmm_out where the library has no sgemm_ or a layout does not fit BLAS.
// With `bf16` (precision bf16), a product gemm_bf16() takes goes there.
void gemm(torch::Tensor& c, const torch::Tensor& a, const torch::Tensor& b, float beta = 0.0f,
          const fused_detail::Bf16Mirrors* bf16 = nullptr) {
  if (bf16 != nullptr && gemm_bf16(c, a, b, beta, *bf16)) return;
  const std::int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  const BlasOperand oa = blas_operand(a), ob = blas_operand(b), oc = blas_operand(c);
  if (sgemm_ == nullptr || !oa.ok || !ob.ok || !oc.ok || oc.transposed || m == 0 || n == 0) {
    if (beta == 0.0f) {
      at::mm_out(c, a, b);
    } else {
      at::addmm_out(c, c, a, b, beta, 1.0f);
    }
    return;
  }
  const char ta = ob.transposed ? 'T' : 'N', tb = oa.transposed ? 'T' : 'N';
  const int mi = static_cast<int>(n), ni = static_cast<int>(m), ki = static_cast<int>(k);
  const float alpha = 1.0f;
  sgemm_(&ta, &tb, &mi, &ni, &ki, &alpha, f32(b), &ob.ld, f32(a), &oa.ld, &beta, f32(c), &oc.ld);
}

}  // namespace

namespace fused_detail {

// Row loops over [rows, cols] blocks with row stride ld, compiled for AVX-512, AVX2 and the
// baseline ISA (GCC target_clones; the loader picks the best the CPU has): the portable build
// targets SSE2 only, and at batch 100 these passes are a visible share of an update.

// p <- p + b (per column), then max(., 0) when `relu`.
[[gnu::target_clones("avx512f", "avx2", "default")]] void bias_act_rows(float* p, std::int64_t rows, std::int64_t cols,
                                                                        std::int64_t ld, const float* b, bool relu) {
  for (std::int64_t i = 0; i < rows; ++i, p += ld) {
    if (relu) {
      for (std::int64_t j = 0; j < cols; ++j) {
        const float z = p[j] + b[j];
        p[j] = z > 0.0f ? z : 0.0f;
      }
    } else {
      for (std::int64_t j = 0; j < cols; ++j) p[j] += b[j];
    }
  }
}

// out <- max(x + y + b, 0) over n entries (act_on_sums: a first layer from two tables).
[[gnu::target_clones("avx512f", "avx2", "default")]] void sum_bias_relu(float* __restrict out, const float* __restrict x,
                                                                        const float* __restrict y,
                                                                        const float* __restrict b, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) {
    const float z = x[j] + y[j] + b[j];
    out[j] = z > 0.0f ? z : 0.0f;
  }
}

// d <- d where h > 0, else 0.
[[gnu::target_clones("avx512f", "avx2", "default")]] void relu_backward_rows(float* d, std::int64_t ldd, const float* h,
                                                                             std::int64_t ldh, std::int64_t rows,
                                                                             std::int64_t cols) {
  for (std::int64_t i = 0; i < rows; ++i, d += ldd, h += ldh)
    for (std::int64_t j = 0; j < cols; ++j) d[j] = h[j] > 0.0f ? d[j] : 0.0f;
}

}  // namespace fused_detail

namespace {

// out <- in . w^T + b, then ReLU when `relu`: one GEMM into `out` (which may be a column
// slice), then one pass that adds the bias and clips.
void linear(torch::Tensor& out, const torch::Tensor& in, const torch::Tensor& w, const torch::Tensor& b, bool relu,
            const fused_detail::Bf16Mirrors* bf16) {
  gemm(out, in, w.t(), 0.0f, bf16);
  fused_detail::bias_act_rows(f32(out), out.size(0), out.size(1), out.stride(0), f32(b), relu);
}

// d <- d where h > 0, else 0 (the ReLU's backward, with h its output).
void relu_backward_in_place(torch::Tensor& d, const torch::Tensor& h) {
  fused_detail::relu_backward_rows(f32(d), d.stride(0), f32(h), h.stride(0), d.size(0), d.size(1));
}

// out[j] <- sum_i d[i, j] (a bias gradient), rows summed in order.
void column_sums(float* out, const torch::Tensor& d) {
  const std::int64_t rows = d.size(0), cols = d.size(1), ld = d.stride(0);
  std::fill(out, out + cols, 0.0f);
  const float* p = f32(d);
  for (std::int64_t i = 0; i < rows; ++i, p += ld)
    for (std::int64_t j = 0; j < cols; ++j) out[j] += p[j];
}

// [first, end) of the j-th of `blocks` near-equal blocks of n.
std::pair<std::int64_t, std::int64_t> block_range(int j, int blocks, std::int64_t n) {
  return {n * j / blocks, n * (j + 1) / blocks};
}

// dst[:, :] <- src with the first `masked` columns 0 (ZERO_OBS), into a column slice of dst.
void copy_masked(float* dst, std::int64_t ldd, const torch::Tensor& src, std::int64_t masked) {
  const std::int64_t rows = src.size(0), cols = src.size(1), lds = src.stride(0), cs = src.stride(1);
  const float* s = f32(src);
  for (std::int64_t i = 0; i < rows; ++i, dst += ldd, s += lds)
    for (std::int64_t j = 0; j < cols; ++j) dst[j] = j < masked ? 0.0f : s[j * cs];
}

torch::Tensor zeros(std::int64_t rows, std::int64_t cols) { return torch::zeros({rows, cols}, torch::kFloat); }

}  // namespace

namespace fused_detail {

// The elementwise loops that run over every weight once per update, compiled for AVX-512,
// AVX2 and the baseline ISA; the loader picks the best the CPU has. (They are a large share
// of an update at batch 100, and the portable build targets SSE2 only.)

[[gnu::target_clones("avx512f", "avx2", "default")]] void adam_loop(float* __restrict p, float* __restrict m,
                                                                    float* __restrict v, const float* __restrict g,
                                                                    std::int64_t n, AdamConstants c) {
  for (std::int64_t i = 0; i < n; ++i) {
    // The moments of a weight whose gradient stays 0 (a dead ReLU unit) decay geometrically
    // through the subnormal range, where every x86 float operation takes a microcode assist:
    // measured in a long run, this loop then took 63 % of the learner's time. Such a moment
    // moves its weight by < lr * FLT_MIN / eps ~ 1e-34, far below float resolution, so it is
    // flushed to 0 here.
    // Written as selects and a sqrt that cannot set errno (-fno-math-errno, learner/td3/
    // CMakeLists.txt) so that the loop vectorises: scalar, it was ~12 % of the learner's time.
    const float mi = m[i] * c.b1 + c.one_b1 * g[i];
    const float vi = v[i] * c.b2 + c.one_b2 * g[i] * g[i];
    const float mf = std::fabs(mi) < kSmallestNormal ? 0.0f : mi;
    const float vf = vi < kSmallestNormal ? 0.0f : vi;
    m[i] = mf;
    v[i] = vf;
    p[i] -= c.step_size * mf / (std::sqrt(vf) / c.sqrt_bc2 + c.eps);
  }
}

// adam_loop with a gradient of 0.
[[gnu::target_clones("avx512f", "avx2", "default")]] void adam_zero_loop(float* __restrict p, float* __restrict m,
                                                                         float* __restrict v, std::int64_t n,
                                                                         AdamConstants c) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float mi = m[i] * c.b1;
    const float vi = v[i] * c.b2;
    const float mf = std::fabs(mi) < kSmallestNormal ? 0.0f : mi;
    const float vf = vi < kSmallestNormal ? 0.0f : vi;
    m[i] = mf;
    v[i] = vf;
    p[i] -= c.step_size * mf / (std::sqrt(vf) / c.sqrt_bc2 + c.eps);
  }
}

[[gnu::target_clones("avx512f", "avx2", "default")]] void soft_update_loop(float* __restrict target,
                                                                           const float* __restrict online,
                                                                           std::int64_t n, float keep, float tau) {
  for (std::int64_t i = 0; i < n; ++i) target[i] = target[i] * keep + online[i] * tau;
}

}  // namespace fused_detail

// ------------------------------------------------------------------------------- AdamState

namespace {

// The constants of Adam step t in `form` (td3.h). Both forms run the same loop,
// p -= step_size * m / (sqrt(v) / sqrt_bc2 + eps): TensorFlow's with sqrt_bc2 = 1 and the
// correction folded into the step size, PyTorch's with eps added after the correction.
fused_detail::AdamConstants adam_constants(double lr, AdamForm form, std::int64_t t) {
  const double bc1 = 1.0 - std::pow(kAdamBeta1, static_cast<double>(t));
  const double bc2 = 1.0 - std::pow(kAdamBeta2, static_cast<double>(t));
  const bool tf = form == AdamForm::kTensorFlow;
  return fused_detail::AdamConstants{static_cast<float>(kAdamBeta1),
                                     static_cast<float>(kAdamBeta2),
                                     static_cast<float>(1.0 - kAdamBeta1),
                                     static_cast<float>(1.0 - kAdamBeta2),
                                     tf ? 1.0f : static_cast<float>(std::sqrt(bc2)),
                                     static_cast<float>(kAdamEpsilon),
                                     static_cast<float>(tf ? lr * std::sqrt(bc2) / bc1 : lr / bc1)};
}

}  // namespace

AdamState::AdamState(std::vector<torch::Tensor> params, double lr, AdamForm form)
    : params_(std::move(params)), lr_(lr), form_(form) {
  for (const auto& p : params_) {
    m_.push_back(torch::zeros_like(p));
    v_.push_back(torch::zeros_like(p));
  }
}

fused_detail::AdamConstants AdamState::begin_step() {
  ++step_;
  return adam_constants(lr_, form_, step_);
}

void AdamState::apply(const fused_detail::AdamConstants& c, std::size_t k, std::int64_t begin, std::int64_t end,
                      const float* grad) const {
  float* p = f32(params_[k]) + begin;
  float* m = f32(m_[k]) + begin;
  float* v = f32(v_[k]) + begin;
  if (grad != nullptr) {
    fused_detail::adam_loop(p, m, v, grad, end - begin, c);
  } else {
    fused_detail::adam_zero_loop(p, m, v, end - begin, c);
  }
}

AdamSnapshot AdamState::snapshot() const {
  AdamSnapshot s;
  s.steps = step_;
  for (std::size_t k = 0; k < params_.size(); ++k) {
    s.m.push_back(m_[k].clone());
    s.v.push_back(v_[k].clone());
  }
  return s;
}

void AdamState::save(ByteWriter& out) const { save_adam_moments(out, step_, m_, v_); }

void AdamState::load(ByteReader& in) { step_ = load_adam_moments(in, m_, v_); }

// -------------------------------------------------------------------------------- FusedTd3

FusedTd3::Net FusedTd3::view_of(torch::nn::Linear& fc1, torch::nn::Linear& fc2, torch::nn::Linear& out) {
  const auto v = [](torch::nn::Linear& l) { return Layer{l->weight.detach(), l->bias.detach()}; };
  return Net{v(fc1), v(fc2), v(out)};
}

FusedTd3::Net FusedTd3::grads_like(const Net& n) {
  const auto z = [](const Layer& l) { return Layer{torch::zeros_like(l.w), torch::zeros_like(l.b)}; };
  return Net{z(n.l1), z(n.l2), z(n.l3)};
}

FusedTd3::Chunks FusedTd3::chunks_of(const std::vector<torch::Tensor>& tensors) {
  // The elements of all tensors end to end, cut into near-equal chunks of about kChunkFloats.
  std::int64_t total = 0;
  for (const auto& t : tensors) total += t.numel();
  const std::int64_t count = std::max<std::int64_t>(1, (total + kChunkFloats / 2) / kChunkFloats);
  Chunks out(static_cast<std::size_t>(count));
  std::int64_t offset = 0;  // of tensor k's first element, end to end
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const std::int64_t n = tensors[k].numel();
    for (std::int64_t c = 0; c < count; ++c) {
      const std::int64_t begin = std::max(total * c / count, offset) - offset;
      const std::int64_t end = std::min(total * (c + 1) / count, offset + n) - offset;
      if (begin < end) out[static_cast<std::size_t>(c)].push_back(Piece{k, begin, end});
    }
    offset += n;
  }
  return out;
}

int FusedTd3::row_blocks(std::int64_t rows) noexcept {
  int blocks = 1;
  while (blocks * 2 <= kMaxRowBlocks && rows / (blocks * 2) >= kBlockRows) blocks *= 2;
  return blocks;
}

FusedTd3::FusedTd3(const Td3Options& options, Actor& actor, Critic& q1, Critic& q2, Actor& actor_target,
                   Critic& q1_target, Critic& q2_target, TaskArena& arena)
    : options_(options),
      arena_(arena),
      in_(options.shape.input_dim),
      act_(options.shape.action_dim),
      h1_(options.shape.hidden1),
      h2_(options.shape.hidden2),
      masked_(options.shape.masked_inputs),
      units_(std::max(1, std::min(options.shape.hidden1, options.shape.hidden2) / kUnitsPerBlock)),
      actor_(view_of(actor->fc1, actor->fc2, actor->out)),
      q1_(view_of(q1->fc1, q1->fc2, q1->out)),
      q2_(view_of(q2->fc1, q2->fc2, q2->out)),
      actor_t_(view_of(actor_target->fc1, actor_target->fc2, actor_target->out)),
      q1_t_(view_of(q1_target->fc1, q1_target->fc2, q1_target->out)),
      q2_t_(view_of(q2_target->fc1, q2_target->fc2, q2_target->out)),
      actor_g_(grads_like(actor_)),
      q1_g_(grads_like(q1_)),
      q2_g_(grads_like(q2_)),
      actor_adam_(actor_.tensors(), options.actor_lr, options.adam_form),
      critic_adam_(
          [&] {
            auto v = q1_.tensors();
            for (auto& t : q2_.tensors()) v.push_back(t);
            return v;
          }(),
          options.critic_lr, options.adam_form) {
  for (const auto& t : actor_.tensors())
    if (!t.device().is_cpu() || t.scalar_type() != torch::kFloat || !t.is_contiguous())
      throw UsageError("td3: the fused update needs contiguous float32 CPU networks");
  for (std::size_t j = 0; j < options.shape.action_low.size(); ++j) {
    mid_.push_back((options.shape.action_high[j] + options.shape.action_low[j]) / 2);
    half_.push_back((options.shape.action_high[j] - options.shape.action_low[j]) / 2);
  }
  actor_chunks_ = chunks_of(actor_.tensors());
  const std::pair<const Net*, const Net*> pairs[] = {{&actor_t_, &actor_}, {&q1_t_, &q1_}, {&q2_t_, &q2_}};
  for (const auto& [target, online] : pairs) {
    for (auto& t : target->tensors()) soft_dst_.push_back(t);
    for (auto& t : online->tensors()) soft_src_.push_back(t);
  }
  soft_chunks_ = chunks_of(soft_dst_);
  if (options.precision == Td3Precision::kBfloat16) {
    if (cblas_gemm_bf16bf16f32 == nullptr)
      throw UsageError("td3: learner precision bf16 needs MKL's cblas_gemm_bf16bf16f32, which this LibTorch's BLAS "
                       "lacks (use fp32)");
    bf16_ = true;
    for (const Net* n : {&actor_, &q1_, &q2_, &actor_t_, &q1_t_, &q2_t_})
      mirrors_.push_back(fused_detail::Bf16Mirror{n->l2.w, std::vector<std::uint16_t>(n->l2.w.numel())});
    weights_changed();
  }
}

fused_detail::Bf16Mirror* FusedTd3::mirror_of(const torch::Tensor& w) {
  if (!bf16_) return nullptr;
  for (fused_detail::Bf16Mirror& m : mirrors_)
    if (m.src.data_ptr() == w.data_ptr()) return &m;
  return nullptr;
}

void FusedTd3::refresh_bf16(const torch::Tensor& w, std::int64_t begin, std::int64_t end) {
  if (fused_detail::Bf16Mirror* m = mirror_of(w))
    fused_detail::to_bf16(f32(m->src) + begin, m->bf.data() + begin, end - begin);
}

void FusedTd3::weights_changed() {
  arena_.run(static_cast<int>(mirrors_.size()), [&](int k, int /*slot*/) {
    const fused_detail::Bf16Mirror& m = mirrors_[static_cast<std::size_t>(k)];
    refresh_bf16(m.src, 0, m.src.numel());
  });
}

void FusedTd3::ensure_batch(std::int64_t rows) {
  if (rows == rows_) return;
  rows_ = rows;
  in1_ = zeros(rows, in_ + act_);
  d_action_ = zeros(rows, act_);
  y_ = zeros(rows, 1);
  huber_.assign(static_cast<std::size_t>(2 * rows), 0.0);
  for (CriticWork* w : {&w1_, &w2_}) {
    w->in2 = zeros(rows, h1_ + act_);
    w->h2 = zeros(rows, h2_);
    w->q = zeros(rows, 1);
    w->dq = zeros(rows, 1);
    w->dz2 = zeros(rows, h2_);
    w->dz1 = zeros(rows, h1_);
  }
  aw_.xin = zeros(rows, in_);
  aw_.h1 = zeros(rows, h1_);
  aw_.h2 = zeros(rows, h2_);
  aw_.t = zeros(rows, act_);
  aw_.mu = zeros(rows, act_);
  aw_.dz3 = zeros(rows, act_);
  aw_.dz2 = zeros(rows, h2_);
  aw_.dz1 = zeros(rows, h1_);
  // The row cut: views of every buffer over each block's rows.
  const int blocks = row_blocks(rows);
  blocks_.assign(static_cast<std::size_t>(blocks), Block{});
  for (int k = 0; k < blocks; ++k) {
    const auto [first, end] = block_range(k, blocks, rows);
    Block& bk = blocks_[static_cast<std::size_t>(k)];
    bk.first = first;
    bk.rows = end - first;
    const auto rows_of = [&](const torch::Tensor& t) { return t.narrow(0, first, end - first); };
    bk.in1 = rows_of(in1_);
    bk.d_action = rows_of(d_action_);
    const std::pair<CriticWork*, const CriticWork*> works[] = {{&bk.w1, &w1_}, {&bk.w2, &w2_}};
    for (const auto& [dst, src] : works) {
      *dst = CriticWork{rows_of(src->in2), rows_of(src->h2),  rows_of(src->q),
                        rows_of(src->dq),  rows_of(src->dz2), rows_of(src->dz1)};
    }
    bk.aw = ActorWork{rows_of(aw_.xin), rows_of(aw_.h1),  rows_of(aw_.h2),  rows_of(aw_.t),
                      rows_of(aw_.mu),  rows_of(aw_.dz3), rows_of(aw_.dz2), rows_of(aw_.dz1)};
  }
}

void FusedTd3::critic_input(const torch::Tensor& x, const torch::Tensor& a, torch::Tensor& in1) const {
  const std::int64_t ld = in1.stride(0);
  copy_masked(f32(in1), ld, x, masked_);
  copy_masked(f32(in1) + in_, ld, a, 0);
}

void FusedTd3::actor_forward(const Net& n, ActorWork& ws) const {
  linear(ws.h1, ws.xin, n.l1.w, n.l1.b, /*relu=*/true, bf16());
  actor_tail(n, ws);
}

void FusedTd3::actor_tail(const Net& n, ActorWork& ws) const {
  linear(ws.h2, ws.h1, n.l2.w, n.l2.b, /*relu=*/true, bf16());
  linear(ws.t, ws.h2, n.l3.w, n.l3.b, /*relu=*/false, bf16());
  float* t = f32(ws.t);
  float* mu = f32(ws.mu);
  const std::int64_t rows = ws.t.size(0);
  for (std::int64_t i = 0; i < rows; ++i)
    for (int j = 0; j < act_; ++j) {
      const std::int64_t e = i * act_ + j;
      t[e] = std::tanh(t[e]);
      mu[e] = mid_[j] + half_[j] * t[e];
    }
}

void FusedTd3::critic_forward(const Net& n, const torch::Tensor& in1, CriticWork& ws) const {
  auto h1 = ws.in2.narrow(1, 0, h1_);
  linear(h1, in1, n.l1.w, n.l1.b, /*relu=*/true, bf16());
  copy_masked(f32(ws.in2) + h1_, ws.in2.stride(0), in1.narrow(1, in_, act_), 0);  // the action enters again
  linear(ws.h2, ws.in2, n.l2.w, n.l2.b, /*relu=*/true, bf16());
  linear(ws.q, ws.h2, n.l3.w, n.l3.b, /*relu=*/false, bf16());
}

void FusedTd3::critic_backward_rows(const Net& n, CriticWork& ws, torch::Tensor* d_action) const {
  const std::int64_t rows = ws.q.size(0);
  // dz2 = (dq . w3) masked by h2 > 0.
  {
    const float* dq = f32(ws.dq);
    const float* w3 = f32(n.l3.w);
    const float* h2 = f32(ws.h2);
    float* dz2 = f32(ws.dz2);
    for (std::int64_t i = 0; i < rows; ++i)
      for (int j = 0; j < h2_; ++j) {
        const std::int64_t e = i * h2_ + j;
        dz2[e] = h2[e] > 0.0f ? dq[i] * w3[j] : 0.0f;
      }
  }
  gemm(ws.dz1, ws.dz2, n.l2.w.narrow(1, 0, h1_), 0.0f, bf16());
  relu_backward_in_place(ws.dz1, ws.in2.narrow(1, 0, h1_));
  if (d_action != nullptr) {
    // The action enters twice: at the first layer and after it.
    gemm(*d_action, ws.dz2, n.l2.w.narrow(1, h1_, act_), 0.0f, bf16());
    gemm(*d_action, ws.dz1, n.l1.w.narrow(1, in_, act_), /*beta=*/1.0f, bf16());
  }
}

void FusedTd3::weight_block(int j, const Net& n, Net& g, const torch::Tensor& d1, const torch::Tensor& in1,
                            const torch::Tensor& d2, const torch::Tensor& in2, const torch::Tensor& d3,
                            const torch::Tensor& in3, const AdamState& adam, std::size_t base,
                            const fused_detail::AdamConstants& c) {
  // Layer l, units [u0, u1): rows u0.. of its weight gradient = d_l[:, u0:u1]^T in_l, its bias
  // entries the column sums; then Adam on exactly those rows and entries.
  const auto layer = [&](const Layer& w, Layer& gl, const torch::Tensor& d, const torch::Tensor& in, std::int64_t u0,
                         std::int64_t u1, std::size_t k) {
    if (u1 <= u0) return;
    auto gw = gl.w.narrow(0, u0, u1 - u0);
    gemm(gw, d.narrow(1, u0, u1 - u0).t(), in, 0.0f, bf16());
    column_sums(f32(gl.b) + u0, d.narrow(1, u0, u1 - u0));
    const std::int64_t cols = w.w.size(1);
    adam.apply(c, base + k, u0 * cols, u1 * cols, f32(gw));
    adam.apply(c, base + k + 1, u0, u1, f32(gl.b) + u0);
    refresh_bf16(w.w, u0 * cols, u1 * cols);
  };
  const auto [a0, a1] = block_range(j, units_, h1_);
  const auto [b0, b1] = block_range(j, units_, h2_);
  layer(n.l1, g.l1, d1, in1, a0, a1, 0);
  layer(n.l2, g.l2, d2, in2, b0, b1, 2);
  if (j == 0) layer(n.l3, g.l3, d3, in3, 0, n.l3.w.size(0), 4);
}

void FusedTd3::critic_rows(Block& bk, const Td3Batch& b, const float* eps, const float* r) {
  const std::int64_t first = bk.first, rows = bk.rows;
  const auto mine = [&](const torch::Tensor& t) { return t.narrow(0, first, rows); };
  // Target: a' = mu_targ(x') + clip(sigma eps, -c, c), not clipped to the box.
  copy_masked(f32(bk.aw.xin), in_, mine(b.x_next), masked_);
  actor_forward(actor_t_, bk.aw);
  {
    const float* pe = eps + first * act_;
    float* mu = f32(bk.aw.mu);
    const float sigma = static_cast<float>(options_.target_noise);
    const float clip = static_cast<float>(options_.target_noise_clip);
    for (std::int64_t i = 0; i < rows * act_; ++i) mu[i] += std::clamp(sigma * pe[i], -clip, clip);
  }
  critic_input(mine(b.x_next), bk.aw.mu, bk.in1);
  critic_forward(q1_t_, bk.in1, bk.w1);
  critic_forward(q2_t_, bk.in1, bk.w2);
  float* y = f32(y_) + first;
  {
    const float* q1 = f32(bk.w1.q);
    const float* q2 = f32(bk.w2.q);
    const float gamma = static_cast<float>(options_.gamma);
    for (std::int64_t i = 0; i < rows; ++i) y[i] = r[first + i] + gamma * std::min(q1[i], q2[i]);
  }
  // Online critics, the Huber terms of the loss and their gradient.
  critic_input(mine(b.x), mine(b.a), bk.in1);
  critic_forward(q1_, bk.in1, bk.w1);
  critic_forward(q2_, bk.in1, bk.w2);
  const float scale = 1.0f / static_cast<float>(2 * rows_);
  for (int c = 0; c < 2; ++c) {
    CriticWork& w = c == 0 ? bk.w1 : bk.w2;
    const float* q = f32(w.q);
    float* dq = f32(w.dq);
    double* terms = huber_.data() + c * rows_ + first;
    for (std::int64_t i = 0; i < rows; ++i) {
      const float d = q[i] - y[i];
      const float ad = std::fabs(d);
      terms[i] = ad <= kHuberDelta ? 0.5 * d * d : kHuberDelta * (ad - 0.5 * kHuberDelta);
      dq[i] = std::clamp(d, static_cast<float>(-kHuberDelta), static_cast<float>(kHuberDelta)) * scale;
    }
  }
  critic_backward_rows(q1_, bk.w1, nullptr);
  critic_backward_rows(q2_, bk.w2, nullptr);
}

float FusedTd3::critic_step(const Td3Batch& b, const torch::Tensor& eps) {
  const std::int64_t rows = b.x.size(0);
  ensure_batch(rows);
  const auto e = eps.contiguous();
  const auto r = b.r.contiguous();
  // The rows, then the weight gradients and Adam by (critic, unit block).
  arena_.run(static_cast<int>(blocks_.size()),
             [&](int k, int /*slot*/) { critic_rows(blocks_[static_cast<std::size_t>(k)], b, f32(e), f32(r)); });
  const fused_detail::AdamConstants c = critic_adam_.begin_step();
  arena_.run(2 * units_, [&](int task, int /*slot*/) {
    const int critic = task / units_;
    const Net& n = critic == 0 ? q1_ : q2_;
    Net& g = critic == 0 ? q1_g_ : q2_g_;
    const CriticWork& w = critic == 0 ? w1_ : w2_;
    weight_block(task % units_, n, g, w.dz1, in1_, w.dz2, w.in2, w.dq, w.h2, critic_adam_,
                 /*base=*/static_cast<std::size_t>(6 * critic), c);
  });
  // The mean over the 2B terms, summed in row order (critic 1, then critic 2).
  double loss = 0.0;
  for (const double t : huber_) loss += t;
  return static_cast<float>(loss / static_cast<double>(2 * rows));
}

void FusedTd3::actor_rows(Block& bk, const torch::Tensor& x) {
  const std::int64_t first = bk.first, rows = bk.rows;
  const auto xs = x.narrow(0, first, rows);
  copy_masked(f32(bk.aw.xin), in_, xs, masked_);
  actor_forward(actor_, bk.aw);
  critic_input(xs, bk.aw.mu, bk.in1);
  critic_forward(q1_, bk.in1, bk.w1);
  {
    float* dq = f32(bk.w1.dq);
    const float g = -1.0f / static_cast<float>(rows_);
    for (std::int64_t i = 0; i < rows; ++i) dq[i] = g;
  }
  critic_backward_rows(q1_, bk.w1, &bk.d_action);
  // Through mid + half * tanh(z3), then the actor's layers.
  {
    const float* da = f32(bk.d_action);
    const float* t = f32(bk.aw.t);
    float* dz3 = f32(bk.aw.dz3);
    for (std::int64_t i = 0; i < rows; ++i)
      for (int j = 0; j < act_; ++j) {
        const std::int64_t e = i * act_ + j;
        dz3[e] = da[e] * half_[j] * (1.0f - t[e] * t[e]);
      }
  }
  gemm(bk.aw.dz2, bk.aw.dz3, actor_.l3.w, 0.0f, bf16());
  relu_backward_in_place(bk.aw.dz2, bk.aw.h2);
  gemm(bk.aw.dz1, bk.aw.dz2, actor_.l2.w, 0.0f, bf16());
  relu_backward_in_place(bk.aw.dz1, bk.aw.h1);
}

float FusedTd3::actor_step(const torch::Tensor& x) {
  const std::int64_t rows = x.size(0);
  ensure_batch(rows);
  arena_.run(static_cast<int>(blocks_.size()),
             [&](int k, int /*slot*/) { actor_rows(blocks_[static_cast<std::size_t>(k)], x); });
  const fused_detail::AdamConstants c = actor_adam_.begin_step();
  arena_.run(units_, [&](int j, int /*slot*/) {
    weight_block(j, actor_, actor_g_, aw_.dz1, aw_.xin, aw_.dz2, aw_.h1, aw_.dz3, aw_.h2, actor_adam_, /*base=*/0, c);
  });
  double loss = 0.0;
  const float* q = f32(w1_.q);
  for (std::int64_t i = 0; i < rows; ++i) loss -= q[i];
  return static_cast<float>(loss / static_cast<double>(rows));
}

void FusedTd3::actor_zero_grad_step() {
  const fused_detail::AdamConstants c = actor_adam_.begin_step();
  arena_.run(static_cast<int>(actor_chunks_.size()), [&](int task, int /*slot*/) {
    for (const Piece& p : actor_chunks_[static_cast<std::size_t>(task)]) {
      actor_adam_.apply(c, p.k, p.begin, p.end, /*grad=*/nullptr);
      refresh_bf16(actor_adam_.param(p.k), p.begin, p.end);
    }
  });
}

void FusedTd3::soft_update() {
  const float tau = static_cast<float>(options_.tau);
  const float keep = static_cast<float>(1.0 - options_.tau);
  arena_.run(static_cast<int>(soft_chunks_.size()), [&](int task, int /*slot*/) {
    for (const Piece& p : soft_chunks_[static_cast<std::size_t>(task)]) {
      fused_detail::soft_update_loop(f32(soft_dst_[p.k]) + p.begin, f32(soft_src_[p.k]) + p.begin, p.end - p.begin,
                                     keep, tau);
      refresh_bf16(soft_dst_[p.k], p.begin, p.end);
    }
  });
}

void FusedTd3::ensure_act_scratch() {
  act_scratch_.resize(static_cast<std::size_t>(arena_.threads()));
  for (ActorWork& ws : act_scratch_) {
    if (ws.xin.defined()) continue;
    ws.xin = zeros(kActChunkRows, in_);
    ws.h1 = zeros(kActChunkRows, h1_);
    ws.h2 = zeros(kActChunkRows, h2_);
    ws.t = zeros(kActChunkRows, act_);
  }
}

FusedTd3::ActorWork FusedTd3::act_chunk(int slot, std::int64_t first, std::int64_t n, torch::Tensor& out) const {
  const ActorWork& ws = act_scratch_[static_cast<std::size_t>(slot)];
  ActorWork part;
  part.xin = ws.xin.narrow(0, 0, n);
  part.h1 = ws.h1.narrow(0, 0, n);
  part.h2 = ws.h2.narrow(0, 0, n);
  part.t = ws.t.narrow(0, 0, n);
  part.mu = out.narrow(0, first, n);
  return part;
}

torch::Tensor FusedTd3::act(const torch::Tensor& x) {
  const std::int64_t rows = x.size(0);
  auto out = torch::empty({rows, act_}, torch::kFloat);
  if (rows == 0) return out;
  ensure_act_scratch();
  const auto chunks = static_cast<int>((rows + kActChunkRows - 1) / kActChunkRows);
  arena_.run(chunks, [&](int k, int slot) {
    const std::int64_t first = k * kActChunkRows;
    const std::int64_t n = std::min(kActChunkRows, rows - first);
    ActorWork part = act_chunk(slot, first, n, out);
    copy_masked(f32(part.xin), in_, x.narrow(0, first, n), masked_);
    actor_forward(actor_, part);
  });
  return out;
}

torch::Tensor FusedTd3::act_on_sums(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& ia,
                                    const torch::Tensor& ib) {
  const std::int64_t rows = ia.size(0);
  if (a.dim() != 2 || b.dim() != 2 || a.size(1) != in_ || b.size(1) != in_ || ib.size(0) != rows)
    throw UsageError("td3: act_on_sums needs two [*, " + std::to_string(in_) + "] tables and two equal index lists");
  auto out = torch::empty({rows, act_}, torch::kFloat);
  if (rows == 0) return out;
  const auto ta = a.contiguous(), tb = b.contiguous();
  const auto xa = ia.to(torch::kLong).contiguous(), xb = ib.to(torch::kLong).contiguous();
  const std::int64_t* pa_index = xa.data_ptr<std::int64_t>();
  const std::int64_t* pb_index = xb.data_ptr<std::int64_t>();
  for (std::int64_t r = 0; r < rows; ++r)
    if (pa_index[r] < 0 || pa_index[r] >= ta.size(0) || pb_index[r] < 0 || pb_index[r] >= tb.size(0))
      throw UsageError("td3: act_on_sums index out of range at row " + std::to_string(r));
  // The first layer without its bias on each table (the masked inputs left out).
  const std::int64_t open = in_ - masked_;
  const auto w1 = actor_.l1.w.narrow(1, masked_, open).t();
  torch::Tensor first[2] = {torch::empty({ta.size(0), h1_}, torch::kFloat), torch::empty({tb.size(0), h1_}, torch::kFloat)};
  arena_.run(2, [&](int k, int /*slot*/) { gemm(first[k], (k == 0 ? ta : tb).narrow(1, masked_, open), w1, 0.0f, bf16()); });
  ensure_act_scratch();
  const auto chunks = static_cast<int>((rows + kActChunkRows - 1) / kActChunkRows);
  arena_.run(chunks, [&](int k, int slot) {
    const std::int64_t begin = k * kActChunkRows;
    const std::int64_t n = std::min(kActChunkRows, rows - begin);
    ActorWork part = act_chunk(slot, begin, n, out);
    float* h1 = f32(part.h1);
    for (std::int64_t r = 0; r < n; ++r)
      fused_detail::sum_bias_relu(h1 + r * h1_, f32(first[0]) + pa_index[begin + r] * h1_,
                                  f32(first[1]) + pb_index[begin + r] * h1_, f32(actor_.l1.b), h1_);
    actor_tail(actor_, part);
  });
  return out;
}

}  // namespace ringrl::td3
