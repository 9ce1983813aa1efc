#include "learner/pqt/policy.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace ringrl::learner {

namespace {

/// Embedding init bound: U(-1, 1) (spec §5.1).
constexpr double kEmbeddingInitLimit = 1.0;

torch::Tensor uniform(at::Generator& gen, std::vector<int64_t> shape, double limit) {
  return torch::empty(shape, torch::kFloat32).uniform_(-limit, limit, gen);
}

/// [4h] with kPolicyForgetBias on the f block (TF order i, j, f, o), zero elsewhere.
torch::Tensor forget_bias_vector(int h, const torch::Device& device) {
  auto v = torch::zeros({kLstmGates * h}, torch::TensorOptions().dtype(torch::kFloat32));
  v.narrow(0, 2 * h, h).fill_(kPolicyForgetBias);
  return v.to(device);
}

void check_spec(const PolicyTensorSpec& spec, const torch::Tensor& t) {
  TORCH_CHECK(static_cast<std::size_t>(t.numel()) == spec.numel(), "tensor for ", spec.name, " has ", t.numel(),
              " elements, layout needs ", spec.numel());
}

}  // namespace

double variance_scaling_limit(int rows, int cols, double factor) {
  const double fan_avg = (static_cast<double>(rows) + cols) / 2.0;
  return std::sqrt(3.0 * factor / fan_avg);
}

torch::Tensor shift_right(const torch::Tensor& actions) {
  const int64_t t = actions.size(1);
  auto start = torch::full({actions.size(0), 1}, kPolicyEosToken, actions.options());
  if (t == 1) return start;
  return torch::cat({start, actions.narrow(1, 0, t - 1)}, 1);
}

PolicyImpl::PolicyImpl(const PolicyOptions& options) : options_(options), layout_(options.shape) {
  const PolicyShape& s = layout_.shape();
  at::Generator gen = at::detail::createCPUGenerator(options.seed);
  embedding = register_parameter("embedding", uniform(gen, {s.vocab, s.embedding}, kEmbeddingInitLimit));
  for (int l = 0; l < s.num_layers(); ++l) {
    const PolicyTensorSpec& k = layout_.lstm_kernel(l);
    const double limit = variance_scaling_limit(k.rows, k.cols, options.param_init_factor);
    kernels.push_back(
        register_parameter("lstm" + std::to_string(l) + "_kernel", uniform(gen, {k.rows, k.cols}, limit)));
    biases.push_back(register_parameter("lstm" + std::to_string(l) + "_bias", torch::zeros({k.cols}, torch::kFloat32)));
  }
  const PolicyTensorSpec& o = layout_.output();
  output = register_parameter(
      "output", uniform(gen, {o.rows, o.cols}, variance_scaling_limit(o.rows, o.cols, options.param_init_factor)));
}

std::vector<torch::Tensor> PolicyImpl::blob_parameters() const {
  std::vector<torch::Tensor> out;
  out.push_back(embedding);
  for (std::size_t l = 0; l < kernels.size(); ++l) {
    out.push_back(kernels[l]);
    out.push_back(biases[l]);
  }
  out.push_back(output);
  return out;
}

namespace {

/// Elementwise LSTM backward of one step with tensor ops (any device), TF gate order
/// (i, j, f, o). dc carries dL/dc_t in and dL/dc_{t-1} (through c) out.
void cell_backward_tensor(const torch::Tensor& act, const torch::Tensor& c_prev, const torch::Tensor& tc,
                          const torch::Tensor& dh_out, const torch::Tensor& dh_rec, torch::Tensor& dc,
                          torch::Tensor& dg) {
  const int64_t h = tc.size(1);
  const torch::Tensor i = act.narrow(1, 0, h), j = act.narrow(1, h, h);
  const torch::Tensor f = act.narrow(1, 2 * h, h), o = act.narrow(1, 3 * h, h);
  const torch::Tensor dht = dh_out + dh_rec;
  dc.add_(dht * o * (1 - tc * tc));
  dg.narrow(1, 0, h).copy_(dc * j * i * (1 - i));
  dg.narrow(1, h, h).copy_(dc * i * (1 - j * j));
  if (c_prev.defined()) {
    dg.narrow(1, 2 * h, h).copy_(dc * c_prev * f * (1 - f));
  } else {
    dg.narrow(1, 2 * h, h).zero_();
  }
  dg.narrow(1, 3 * h, h).copy_(dht * tc * o * (1 - o));
  dc.mul_(f);
}

bool use_cpu_kernel(bool cpu_kernel, const torch::Tensor& t) {
  return cpu_kernel && t.device().is_cpu() && t.scalar_type() == torch::kFloat32;
}

/// One LSTM layer over all steps with a hand-written backward (BPTT), so autograd records
/// one node per layer instead of ~10 per step. Inputs (time-major, TF gate order i, j, f, o):
/// pre [T, N, 4h] = x Kx + b, kh [h, 4h]; the forget bias is added inside. Output: hidden
/// states [T, N, h]. On the CPU both passes run learner/pqt/policy_kernels.h.
struct LstmLayerFunction : public torch::autograd::Function<LstmLayerFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& pre, const torch::Tensor& kh,
                               double forget_bias, bool cpu_kernel) {
    const int64_t t_len = pre.size(0), n = pre.size(1), h = kh.size(0);
    auto opts = pre.options();
    auto acts = torch::empty({t_len, n, 4 * h}, opts);
    auto cs = torch::empty({t_len, n, h}, opts);
    auto tcs = torch::empty({t_len, n, h}, opts);
    auto hs = torch::empty({t_len, n, h}, opts);
    const bool kernel = use_cpu_kernel(cpu_kernel, pre);
    if (kernel) {
      const torch::Tensor pre_c = pre.contiguous(), kh_c = kh.contiguous();
      detail::lstm_forward_threads({static_cast<int>(t_len), static_cast<int>(n), static_cast<int>(h)},
                                   pre_c.data_ptr<float>(), kh_c.data_ptr<float>(), nullptr, static_cast<float>(forget_bias),
                                   acts.data_ptr<float>(), cs.data_ptr<float>(), tcs.data_ptr<float>(),
                                   hs.data_ptr<float>());
    } else {
      const auto zero = torch::zeros({n, h}, opts);
      for (int64_t t = 0; t < t_len; ++t) {
        torch::Tensor a = acts.select(0, t);
        torch::addmm_out(a, pre.select(0, t), t > 0 ? hs.select(0, t - 1) : zero, kh);
        a.narrow(1, 0, h).sigmoid_();
        a.narrow(1, h, h).tanh_();
        a.narrow(1, 2 * h, h).add_(forget_bias);
        a.narrow(1, 2 * h, 2 * h).sigmoid_();
        torch::Tensor c = cs.select(0, t);
        torch::mul_out(c, a.narrow(1, 2 * h, h), t > 0 ? cs.select(0, t - 1) : zero);
        c.addcmul_(a.narrow(1, 0, h), a.narrow(1, h, h));
        torch::Tensor tc = tcs.select(0, t);
        torch::tanh_out(tc, c);
        torch::Tensor out = hs.select(0, t);
        torch::mul_out(out, a.narrow(1, 3 * h, h), tc);
      }
    }
    ctx->save_for_backward({acts, cs, tcs, hs, kh});
    ctx->saved_data["cpu_kernel"] = kernel;
    return hs;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& acts = saved[0];
    const torch::Tensor& cs = saved[1];
    const torch::Tensor& tcs = saved[2];
    const torch::Tensor& hs = saved[3];
    const torch::Tensor& kh = saved[4];
    const int64_t t_len = acts.size(0), n = acts.size(1), h = kh.size(0);
    const torch::Tensor dh_out = grads[0].defined() ? grads[0].contiguous() : torch::zeros_like(hs);
    auto dg = torch::empty_like(acts);
    if (ctx->saved_data["cpu_kernel"].toBool()) {
      const torch::Tensor kh_c = kh.contiguous();
      detail::lstm_backward_threads({static_cast<int>(t_len), static_cast<int>(n), static_cast<int>(h)},
                                    kh_c.data_ptr<float>(), acts.data_ptr<float>(), cs.data_ptr<float>(),
                                    tcs.data_ptr<float>(), dh_out.data_ptr<float>(), dg.data_ptr<float>(), nullptr);
    } else {
      auto dh = torch::zeros({n, h}, acts.options());
      auto dc = torch::zeros({n, h}, acts.options());
      const torch::Tensor kh_t = kh.t();
      for (int64_t t = t_len - 1; t >= 0; --t) {
        torch::Tensor g = dg.select(0, t);
        cell_backward_tensor(acts.select(0, t), t > 0 ? cs.select(0, t - 1) : torch::Tensor(), tcs.select(0, t),
                             dh_out.select(0, t), dh, dc, g);
        torch::mm_out(dh, g, kh_t);
      }
    }
    // dKh = sum_t h_{t-1}^T dG_t in one GEMM (h_{-1} = 0).
    torch::Tensor dkh = torch::mm(hs.narrow(0, 0, t_len - 1).reshape({(t_len - 1) * n, h}).t(),
                                  dg.narrow(0, 1, t_len - 1).reshape({(t_len - 1) * n, 4 * h}));
    return {dg, dkh, torch::Tensor(), torch::Tensor()};
  }
};

/// Masks the EOS logit (last dim) when eos_token is false.
torch::Tensor mask_eos(const torch::Tensor& logits, bool eos_token) {
  if (eos_token) return logits;
  auto eos = torch::full({1}, kPolicyEosToken, torch::TensorOptions().dtype(torch::kInt64).device(logits.device()));
  return logits.index_fill(logits.dim() - 1, eos, kPolicyEosMaskedLogit);
}

}  // namespace

namespace detail {
namespace {

/// Fewest batch rows worth a thread of their own in the LSTM layer kernels.
constexpr int kMinRowsPerThread = 8;

/// Calls fn(row_begin, row_end, chunk) for up to at::get_num_threads() chunks of the n batch
/// rows, on torch's intra-op threads (the recurrence never mixes rows).
int row_chunks(int n) { return std::max(1, std::min(at::get_num_threads(), n / kMinRowsPerThread)); }

template <typename Fn>
void over_row_chunks(int n, const Fn& fn) {
  const int chunks = row_chunks(n);
  if (chunks == 1) {
    fn(0, n, 0);
    return;
  }
  at::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      fn(static_cast<int>(n * c / chunks), static_cast<int>(n * (c + 1) / chunks), static_cast<int>(c));
    }
  });
}

/// Scratch for `floats` floats, kept per thread between calls.
float* scratch_floats(std::size_t floats) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < floats) buffer.resize(floats);
  return buffer.data();
}

}  // namespace

void lstm_forward_threads(const LstmLayerDims& d, const float* pre, const float* kh, const float* bias,
                          float forget_bias, float* acts, float* cs, float* tcs, float* hs) {
  const auto per_chunk = static_cast<std::size_t>(lstm_forward_scratch(d.hidden));
  float* scratch = scratch_floats(per_chunk * static_cast<std::size_t>(std::max(1, at::get_num_threads())));
  over_row_chunks(d.batch, [&](int begin, int end, int chunk) {
    policy_kernels().forward(d, begin, end, pre, kh, bias, forget_bias, acts, cs, tcs, hs,
                             scratch + chunk * per_chunk);
  });
}

void lstm_backward_threads(const LstmLayerDims& d, const float* kh, const float* acts, const float* cs,
                           const float* tcs, const float* dh_out, float* dg, float* dbias) {
  // Per chunk: its kernel scratch, then 4h of bias-gradient partial sums.
  const std::size_t gates = 4 * static_cast<std::size_t>(d.hidden);
  const int chunks = row_chunks(d.batch);
  const auto per_chunk = static_cast<std::size_t>(lstm_backward_scratch((d.batch + chunks - 1) / chunks, d.hidden));
  float* scratch = scratch_floats((per_chunk + gates) * chunks);
  float* partial = scratch + per_chunk * chunks;
  std::fill(partial, partial + gates * chunks, 0.0f);
  over_row_chunks(d.batch, [&](int begin, int end, int chunk) {
    policy_kernels().backward(d, begin, end, kh, acts, cs, tcs, dh_out, dg,
                              dbias != nullptr ? partial + chunk * gates : nullptr, scratch + chunk * per_chunk);
  });
  if (dbias == nullptr) return;
  for (int c = 0; c < chunks; ++c) {
    for (std::size_t u = 0; u < gates; ++u) dbias[u] += partial[c * gates + u];
  }
}

}  // namespace detail

PolicyForward PolicyImpl::forward(const torch::Tensor& actions, bool retain_embedding_grad) {
  if (!options_.fused_lstm) return forward_reference(actions, retain_embedding_grad);
  const PolicyShape& s = layout_.shape();
  const int64_t n = actions.size(0);
  const int64_t t = actions.size(1);
  PolicyForward f;
  f.input_tokens = shift_right(actions);
  // Time-major from here on: every per-step slice is contiguous.
  f.embedded = embedding.index_select(0, f.input_tokens.t().reshape({-1})).view({t, n, s.embedding});
  if (retain_embedding_grad && f.embedded.requires_grad()) f.embedded.retain_grad();

  torch::Tensor x = f.embedded;
  for (int l = 0; l < s.num_layers(); ++l) {
    const int64_t in = s.layer_input(l);
    const int64_t h = s.lstm_sizes[l];
    const torch::Tensor pre = torch::addmm(biases[l], x.reshape({t * n, in}), kernels[l].narrow(0, 0, in)).view({t, n, 4 * h});
    x = LstmLayerFunction::apply(pre, kernels[l].narrow(0, in, h), static_cast<double>(kPolicyForgetBias),
                                 options_.cpu_loops);
  }
  const int64_t top = s.top_size();
  const torch::Tensor logits_tm = torch::mm(x.reshape({t * n, top}), output).view({t, n, s.vocab});
  f.logits = mask_eos(logits_tm.transpose(0, 1), options_.eos_token);
  return f;
}

PolicyForward PolicyImpl::forward_reference(const torch::Tensor& actions, bool retain_embedding_grad) {
  const PolicyShape& s = layout_.shape();
  const int64_t n = actions.size(0);
  const int64_t t = actions.size(1);
  PolicyForward f;
  f.input_tokens = shift_right(actions);
  f.embedded = embedding.index_select(0, f.input_tokens.t().reshape({-1})).view({t, n, s.embedding});
  if (retain_embedding_grad && f.embedded.requires_grad()) f.embedded.retain_grad();

  // Plain autograd: one GEMM for all input projections, then the cell ops per step.
  torch::Tensor x = f.embedded;
  for (int l = 0; l < s.num_layers(); ++l) {
    const int64_t in = s.layer_input(l);
    const int64_t h = s.lstm_sizes[l];
    const torch::Tensor kx = kernels[l].narrow(0, 0, in);
    const torch::Tensor kh = kernels[l].narrow(0, in, h);
    const torch::Tensor bias = biases[l] + forget_bias_vector(static_cast<int>(h), x.device());
    const torch::Tensor pre = torch::addmm(bias, x.reshape({t * n, in}), kx).view({t, n, 4 * h});
    torch::Tensor hs = torch::zeros({n, h}, x.options().requires_grad(false));
    torch::Tensor cs = torch::zeros({n, h}, x.options().requires_grad(false));
    std::vector<torch::Tensor> outs;
    outs.reserve(static_cast<std::size_t>(t));
    for (int64_t step = 0; step < t; ++step) {
      const torch::Tensor g = torch::addmm(pre.select(0, step), hs, kh);
      const torch::Tensor sg = torch::sigmoid(g);  // the j block is recomputed with tanh below
      const torch::Tensor i = sg.narrow(1, 0, h);
      const torch::Tensor j = torch::tanh(g.narrow(1, h, h));
      const torch::Tensor fg = sg.narrow(1, 2 * h, h);
      const torch::Tensor o = sg.narrow(1, 3 * h, h);
      cs = cs * fg + i * j;
      hs = torch::tanh(cs) * o;
      outs.push_back(hs);
    }
    x = torch::stack(outs, 0);
  }
  const int64_t top = s.top_size();
  const torch::Tensor logits_tm = torch::mm(x.reshape({t * n, top}), output).view({t, n, s.vocab});
  f.logits = mask_eos(logits_tm.transpose(0, 1), options_.eos_token);
  return f;
}

void tensors_to_blob(const PolicyLayout& layout, const std::vector<torch::Tensor>& tensors, float* dst) {
  TORCH_CHECK(tensors.size() == layout.tensors().size(), "expected ", layout.tensors().size(), " tensors, got ",
              tensors.size());
  std::memset(dst, 0, layout.num_bytes());
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const PolicyTensorSpec& spec = layout.tensors()[k];
    check_spec(spec, tensors[k]);
    const torch::Tensor host = tensors[k].detach().to(torch::kCPU, torch::kFloat32).contiguous();
    std::memcpy(dst + spec.offset, host.data_ptr<float>(), spec.numel() * sizeof(float));
  }
}

void blob_to_tensors(const PolicyLayout& layout, const float* src, const std::vector<torch::Tensor>& tensors) {
  TORCH_CHECK(tensors.size() == layout.tensors().size(), "expected ", layout.tensors().size(), " tensors, got ",
              tensors.size());
  torch::NoGradGuard no_grad;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const PolicyTensorSpec& spec = layout.tensors()[k];
    check_spec(spec, tensors[k]);
    const torch::Tensor host =
        torch::from_blob(const_cast<float*>(src + spec.offset), tensors[k].sizes(), torch::kFloat32);
    tensors[k].copy_(host);
  }
}

void PolicyImpl::write_blob(float* dst) const { tensors_to_blob(layout_, blob_parameters(), dst); }

void PolicyImpl::read_blob(const float* src) { blob_to_tensors(layout_, src, blob_parameters()); }

}  // namespace ringrl::learner
