#include "learner/td3/td3_fused.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "common/errors.h"

namespace ringrl::td3 {

namespace {

// Rows of act() per chunk: a [chunk, 300] activation is 300 KB, so both stay in L2.
constexpr std::int64_t kActChunkRows = 256;
constexpr float kSmallestNormal = std::numeric_limits<float>::min();

float* f32(const torch::Tensor& t) { return t.data_ptr<float>(); }

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
void linear(torch::Tensor& out, const torch::Tensor& in, const torch::Tensor& w, const torch::Tensor& b, bool relu) {
  at::mm_out(out, in, w.t());
  fused_detail::bias_act_rows(f32(out), out.size(0), out.size(1), out.stride(0), f32(b), relu);
}

// d <- d where h > 0, else 0 (the ReLU's backward, with h its output).
void relu_backward_in_place(torch::Tensor& d, const torch::Tensor& h) {
  fused_detail::relu_backward_rows(f32(d), d.stride(0), f32(h), h.stride(0), d.size(0), d.size(1));
}

// out[j] <- sum_i d[i, j] (a bias gradient).
void column_sums(torch::Tensor& out, const torch::Tensor& d) {
  const std::int64_t rows = d.size(0), cols = d.size(1), ld = d.stride(0);
  float* o = f32(out);
  std::fill(o, o + cols, 0.0f);
  const float* p = f32(d);
  for (std::int64_t i = 0; i < rows; ++i, p += ld)
    for (std::int64_t j = 0; j < cols; ++j) o[j] += p[j];
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

struct AdamConstants {
  float b1, b2, one_b1, one_b2, sqrt_bc2, eps, step_size;
};

// The elementwise loops that run over every weight once per update, compiled for AVX-512,
// AVX2 and the baseline ISA; the loader picks the best the CPU has. (They are a large share
// of an update at batch 100, and the portable build targets SSE2 only.)

[[gnu::target_clones("avx512f", "avx2", "default")]] void adam_loop(float* p, float* m, float* v, const float* g,
                                                                    std::int64_t n, AdamConstants c) {
  for (std::int64_t i = 0; i < n; ++i) {
    // The moments of a weight whose gradient stays 0 (a dead ReLU unit) decay geometrically
    // through the subnormal range, where every x86 float operation takes a microcode assist:
    // measured in a long run, this loop then took 63 % of the learner's time. Such a moment
    // moves its weight by < lr * FLT_MIN / eps ~ 1e-34, far below float resolution, so it is
    // flushed to 0 here.
    const float mi = m[i] * c.b1 + c.one_b1 * g[i];
    const float vi = v[i] * c.b2 + c.one_b2 * g[i] * g[i];
    m[i] = std::fabs(mi) < kSmallestNormal ? 0.0f : mi;
    v[i] = vi < kSmallestNormal ? 0.0f : vi;
    p[i] -= c.step_size * m[i] / (std::sqrt(v[i]) / c.sqrt_bc2 + c.eps);
  }
}

// adam_loop with a gradient of 0.
[[gnu::target_clones("avx512f", "avx2", "default")]] void adam_zero_loop(float* p, float* m, float* v, std::int64_t n,
                                                                         AdamConstants c) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float mi = m[i] * c.b1;
    const float vi = v[i] * c.b2;
    m[i] = std::fabs(mi) < kSmallestNormal ? 0.0f : mi;
    v[i] = vi < kSmallestNormal ? 0.0f : vi;
    p[i] -= c.step_size * m[i] / (std::sqrt(v[i]) / c.sqrt_bc2 + c.eps);
  }
}

[[gnu::target_clones("avx512f", "avx2", "default")]] void soft_update_loop(float* target, const float* online,
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

void AdamState::step(const std::vector<torch::Tensor>& grads) {
  ++step_;
  const fused_detail::AdamConstants c = adam_constants(lr_, form_, step_);
  for (std::size_t k = 0; k < params_.size(); ++k)
    fused_detail::adam_loop(f32(params_[k]), f32(m_[k]), f32(v_[k]), f32(grads[k]), params_[k].numel(), c);
}

void AdamState::step_zero() {
  ++step_;
  const fused_detail::AdamConstants c = adam_constants(lr_, form_, step_);
  for (std::size_t k = 0; k < params_.size(); ++k)
    fused_detail::adam_zero_loop(f32(params_[k]), f32(m_[k]), f32(v_[k]), params_[k].numel(), c);
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

void AdamState::save(ByteWriter& out) const {
  for (std::size_t k = 0; k < params_.size(); ++k) {
    out.put<std::uint8_t>(step_ > 0 ? 1 : 0);
    if (step_ == 0) continue;
    out.put<std::int64_t>(step_);
    save_tensor(out, m_[k]);
    save_tensor(out, v_[k]);
  }
}

void AdamState::load(ByteReader& in) {
  std::int64_t step = -1;
  for (std::size_t k = 0; k < params_.size(); ++k) {
    const auto present = in.get<std::uint8_t>();
    if (present > 1) in.fail("Adam state flag " + std::to_string(present));
    std::int64_t s = 0;
    if (present == 1) {
      s = in.get<std::int64_t>();
      if (s < 1) in.fail("Adam step " + std::to_string(s));
      load_tensor(in, m_[k]);
      load_tensor(in, v_[k]);
    } else {
      m_[k].zero_();
      v_[k].zero_();
    }
    if (step >= 0 && s != step)
      in.fail("Adam steps differ between parameters (" + std::to_string(step) + " and " + std::to_string(s) + ")");
    step = s;
  }
  step_ = std::max<std::int64_t>(step, 0);
}

// -------------------------------------------------------------------------------- FusedTd3

FusedTd3::Net FusedTd3::view_of(torch::nn::Linear& fc1, torch::nn::Linear& fc2, torch::nn::Linear& out) {
  const auto v = [](torch::nn::Linear& l) { return Layer{l->weight.detach(), l->bias.detach()}; };
  return Net{v(fc1), v(fc2), v(out)};
}

FusedTd3::Net FusedTd3::grads_like(const Net& n) {
  const auto z = [](const Layer& l) { return Layer{torch::zeros_like(l.w), torch::zeros_like(l.b)}; };
  return Net{z(n.l1), z(n.l2), z(n.l3)};
}

FusedTd3::FusedTd3(const Td3Options& options, Actor& actor, Critic& q1, Critic& q2, Actor& actor_target,
                   Critic& q1_target, Critic& q2_target)
    : options_(options),
      in_(options.shape.input_dim),
      act_(options.shape.action_dim),
      h1_(options.shape.hidden1),
      h2_(options.shape.hidden2),
      masked_(options.shape.masked_inputs),
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
}

void FusedTd3::ensure_batch(std::int64_t rows) {
  if (rows == rows_) return;
  rows_ = rows;
  in1_ = zeros(rows, in_ + act_);
  d_action_ = zeros(rows, act_);
  y_ = zeros(rows, 1);
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
}

void FusedTd3::critic_input(const torch::Tensor& x, const torch::Tensor& a, torch::Tensor& in1) const {
  const std::int64_t ld = in1.stride(0);
  copy_masked(f32(in1), ld, x, masked_);
  copy_masked(f32(in1) + in_, ld, a, 0);
}

void FusedTd3::actor_forward(const Net& n, ActorWork& ws) const {
  linear(ws.h1, ws.xin, n.l1.w, n.l1.b, /*relu=*/true);
  linear(ws.h2, ws.h1, n.l2.w, n.l2.b, /*relu=*/true);
  linear(ws.t, ws.h2, n.l3.w, n.l3.b, /*relu=*/false);
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
  linear(h1, in1, n.l1.w, n.l1.b, /*relu=*/true);
  copy_masked(f32(ws.in2) + h1_, ws.in2.stride(0), in1.narrow(1, in_, act_), 0);  // the action enters again
  linear(ws.h2, ws.in2, n.l2.w, n.l2.b, /*relu=*/true);
  linear(ws.q, ws.h2, n.l3.w, n.l3.b, /*relu=*/false);
}

void FusedTd3::critic_backward(const Net& n, const torch::Tensor& in1, CriticWork& ws, Net* g,
                               torch::Tensor* d_action) const {
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
  if (g != nullptr) {
    at::mm_out(g->l3.w, ws.dq.t(), ws.h2);
    column_sums(g->l3.b, ws.dq);
    at::mm_out(g->l2.w, ws.dz2.t(), ws.in2);
    column_sums(g->l2.b, ws.dz2);
  }
  at::mm_out(ws.dz1, ws.dz2, n.l2.w.narrow(1, 0, h1_));
  relu_backward_in_place(ws.dz1, ws.in2.narrow(1, 0, h1_));
  if (g != nullptr) {
    at::mm_out(g->l1.w, ws.dz1.t(), in1);
    column_sums(g->l1.b, ws.dz1);
  }
  if (d_action != nullptr) {
    // The action enters twice: at the first layer and after it.
    at::mm_out(*d_action, ws.dz2, n.l2.w.narrow(1, h1_, act_));
    at::addmm_out(*d_action, *d_action, ws.dz1, n.l1.w.narrow(1, in_, act_));
  }
}

float FusedTd3::critic_step(const Td3Batch& b, const torch::Tensor& eps) {
  const std::int64_t rows = b.x.size(0);
  ensure_batch(rows);
  // Target: a' = mu_targ(x') + clip(sigma eps, -c, c), not clipped to the box.
  copy_masked(f32(aw_.xin), in_, b.x_next, masked_);
  actor_forward(actor_t_, aw_);
  {
    const auto e = eps.contiguous();
    const float* pe = f32(e);
    float* mu = f32(aw_.mu);
    const float sigma = static_cast<float>(options_.target_noise);
    const float clip = static_cast<float>(options_.target_noise_clip);
    for (std::int64_t i = 0; i < rows * act_; ++i) mu[i] += std::clamp(sigma * pe[i], -clip, clip);
  }
  critic_input(b.x_next, aw_.mu, in1_);
  critic_forward(q1_t_, in1_, w1_);
  critic_forward(q2_t_, in1_, w2_);
  {
    const auto r = b.r.contiguous();
    const float* pr = f32(r);
    const float* q1 = f32(w1_.q);
    const float* q2 = f32(w2_.q);
    float* y = f32(y_);
    const float gamma = static_cast<float>(options_.gamma);
    for (std::int64_t i = 0; i < rows; ++i) y[i] = pr[i] + gamma * std::min(q1[i], q2[i]);
  }
  // Online critics, the mean Huber loss over the 2B terms and its gradient.
  critic_input(b.x, b.a, in1_);
  critic_forward(q1_, in1_, w1_);
  critic_forward(q2_, in1_, w2_);
  double loss = 0.0;
  const float scale = 1.0f / static_cast<float>(2 * rows);
  for (CriticWork* w : {&w1_, &w2_}) {
    const float* q = f32(w->q);
    const float* y = f32(y_);
    float* dq = f32(w->dq);
    for (std::int64_t i = 0; i < rows; ++i) {
      const float d = q[i] - y[i];
      const float ad = std::fabs(d);
      loss += ad <= kHuberDelta ? 0.5 * d * d : kHuberDelta * (ad - 0.5 * kHuberDelta);
      dq[i] = std::clamp(d, static_cast<float>(-kHuberDelta), static_cast<float>(kHuberDelta)) * scale;
    }
  }
  critic_backward(q1_, in1_, w1_, &q1_g_, nullptr);
  critic_backward(q2_, in1_, w2_, &q2_g_, nullptr);
  auto grads = q1_g_.tensors();
  for (auto& t : q2_g_.tensors()) grads.push_back(t);
  critic_adam_.step(grads);
  return static_cast<float>(loss / static_cast<double>(2 * rows));
}

float FusedTd3::actor_step(const torch::Tensor& x) {
  const std::int64_t rows = x.size(0);
  ensure_batch(rows);
  copy_masked(f32(aw_.xin), in_, x, masked_);
  actor_forward(actor_, aw_);
  critic_input(x, aw_.mu, in1_);
  critic_forward(q1_, in1_, w1_);
  double loss = 0.0;
  {
    const float* q = f32(w1_.q);
    float* dq = f32(w1_.dq);
    const float g = -1.0f / static_cast<float>(rows);
    for (std::int64_t i = 0; i < rows; ++i) {
      loss -= q[i];
      dq[i] = g;
    }
  }
  critic_backward(q1_, in1_, w1_, nullptr, &d_action_);
  // Through mid + half * tanh(z3), then the actor's layers.
  {
    const float* da = f32(d_action_);
    const float* t = f32(aw_.t);
    float* dz3 = f32(aw_.dz3);
    for (std::int64_t i = 0; i < rows; ++i)
      for (int j = 0; j < act_; ++j) {
        const std::int64_t e = i * act_ + j;
        dz3[e] = da[e] * half_[j] * (1.0f - t[e] * t[e]);
      }
  }
  at::mm_out(actor_g_.l3.w, aw_.dz3.t(), aw_.h2);
  column_sums(actor_g_.l3.b, aw_.dz3);
  at::mm_out(aw_.dz2, aw_.dz3, actor_.l3.w);
  relu_backward_in_place(aw_.dz2, aw_.h2);
  at::mm_out(actor_g_.l2.w, aw_.dz2.t(), aw_.h1);
  column_sums(actor_g_.l2.b, aw_.dz2);
  at::mm_out(aw_.dz1, aw_.dz2, actor_.l2.w);
  relu_backward_in_place(aw_.dz1, aw_.h1);
  at::mm_out(actor_g_.l1.w, aw_.dz1.t(), aw_.xin);
  column_sums(actor_g_.l1.b, aw_.dz1);
  actor_adam_.step(actor_g_.tensors());
  return static_cast<float>(loss / static_cast<double>(rows));
}

void FusedTd3::soft_update() {
  const float tau = static_cast<float>(options_.tau);
  const float keep = static_cast<float>(1.0 - options_.tau);
  const std::pair<const Net*, const Net*> pairs[] = {{&actor_t_, &actor_}, {&q1_t_, &q1_}, {&q2_t_, &q2_}};
  for (const auto& [target, online] : pairs) {
    const auto dst = target->tensors();
    const auto src = online->tensors();
    for (std::size_t k = 0; k < dst.size(); ++k)
      fused_detail::soft_update_loop(f32(dst[k]), f32(src[k]), dst[k].numel(), keep, tau);
  }
}

torch::Tensor FusedTd3::act(const torch::Tensor& x) {
  const std::int64_t rows = x.size(0);
  auto out = torch::empty({rows, act_}, torch::kFloat);
  ActorWork ws;
  const std::int64_t chunk = std::min(rows, kActChunkRows);
  ws.xin = zeros(chunk, in_);
  ws.h1 = zeros(chunk, h1_);
  ws.h2 = zeros(chunk, h2_);
  ws.t = zeros(chunk, act_);
  for (std::int64_t first = 0; first < rows; first += chunk) {
    const std::int64_t n = std::min(chunk, rows - first);
    ActorWork part;
    part.xin = ws.xin.narrow(0, 0, n);
    part.h1 = ws.h1.narrow(0, 0, n);
    part.h2 = ws.h2.narrow(0, 0, n);
    part.t = ws.t.narrow(0, 0, n);
    part.mu = out.narrow(0, first, n);
    copy_masked(f32(part.xin), in_, x.narrow(0, first, n), masked_);
    actor_forward(actor_, part);
  }
  return out;
}

}  // namespace ringrl::td3
