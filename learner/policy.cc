#include "learner/policy.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstring>

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
  TORCH_CHECK(static_cast<std::size_t>(t.numel()) == spec.numel(), "tensor for ", spec.name,
              " has ", t.numel(), " elements, layout needs ", spec.numel());
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

PolicyImpl::PolicyImpl(const PolicyOptions& options)
    : options_(options), layout_(options.shape) {
  const PolicyShape& s = layout_.shape();
  at::Generator gen = at::detail::createCPUGenerator(options.seed);
  embedding = register_parameter(
      "embedding", uniform(gen, {s.vocab, s.embedding}, kEmbeddingInitLimit));
  for (int l = 0; l < s.num_layers(); ++l) {
    const PolicyTensorSpec& k = layout_.lstm_kernel(l);
    const double limit = variance_scaling_limit(k.rows, k.cols, options.param_init_factor);
    kernels.push_back(register_parameter("lstm" + std::to_string(l) + "_kernel",
                                         uniform(gen, {k.rows, k.cols}, limit)));
    biases.push_back(register_parameter("lstm" + std::to_string(l) + "_bias",
                                        torch::zeros({k.cols}, torch::kFloat32)));
  }
  const PolicyTensorSpec& o = layout_.output();
  output = register_parameter(
      "output", uniform(gen, {o.rows, o.cols},
                        variance_scaling_limit(o.rows, o.cols, options.param_init_factor)));
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

PolicyForward PolicyImpl::forward(const torch::Tensor& actions, bool retain_embedding_grad) {
  const PolicyShape& s = layout_.shape();
  const int64_t n = actions.size(0);
  const int64_t t = actions.size(1);
  PolicyForward f;
  f.input_tokens = shift_right(actions);
  f.embedded = embedding.index_select(0, f.input_tokens.reshape({-1})).view({n, t, s.embedding});
  if (retain_embedding_grad && f.embedded.requires_grad()) f.embedded.retain_grad();

  // Layer by layer: one GEMM for all input projections, then the recurrence per step.
  torch::Tensor x = f.embedded;
  for (int l = 0; l < s.num_layers(); ++l) {
    const int64_t in = s.layer_input(l);
    const int64_t h = s.lstm_sizes[l];
    const torch::Tensor kx = kernels[l].narrow(0, 0, in);
    const torch::Tensor kh = kernels[l].narrow(0, in, h);
    const torch::Tensor bias = biases[l] + forget_bias_vector(static_cast<int>(h), x.device());
    const torch::Tensor pre = torch::addmm(bias, x.reshape({n * t, in}), kx).view({n, t, 4 * h});
    torch::Tensor hs = torch::zeros({n, h}, x.options().requires_grad(false));
    torch::Tensor cs = torch::zeros({n, h}, x.options().requires_grad(false));
    std::vector<torch::Tensor> outs;
    outs.reserve(static_cast<std::size_t>(t));
    for (int64_t step = 0; step < t; ++step) {
      const torch::Tensor g = torch::addmm(pre.select(1, step), hs, kh);
      const torch::Tensor sg = torch::sigmoid(g);  // the j block is recomputed with tanh below
      const torch::Tensor i = sg.narrow(1, 0, h);
      const torch::Tensor j = torch::tanh(g.narrow(1, h, h));
      const torch::Tensor fg = sg.narrow(1, 2 * h, h);
      const torch::Tensor o = sg.narrow(1, 3 * h, h);
      cs = cs * fg + i * j;
      hs = torch::tanh(cs) * o;
      outs.push_back(hs);
    }
    x = torch::stack(outs, 1);
  }
  const int64_t top = s.top_size();
  torch::Tensor logits = torch::mm(x.reshape({n * t, top}), output).view({n, t, s.vocab});
  if (!options_.eos_token) {
    auto eos = torch::full({1}, kPolicyEosToken,
                           torch::TensorOptions().dtype(torch::kInt64).device(logits.device()));
    logits = logits.index_fill(2, eos, kPolicyEosMaskedLogit);
  }
  f.logits = logits;
  return f;
}

void tensors_to_blob(const PolicyLayout& layout, const std::vector<torch::Tensor>& tensors,
                     float* dst) {
  TORCH_CHECK(tensors.size() == layout.tensors().size(), "expected ", layout.tensors().size(),
              " tensors, got ", tensors.size());
  std::memset(dst, 0, layout.num_bytes());
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const PolicyTensorSpec& spec = layout.tensors()[k];
    check_spec(spec, tensors[k]);
    const torch::Tensor host =
        tensors[k].detach().to(torch::kCPU, torch::kFloat32).contiguous();
    std::memcpy(dst + spec.offset, host.data_ptr<float>(), spec.numel() * sizeof(float));
  }
}

void blob_to_tensors(const PolicyLayout& layout, const float* src,
                     const std::vector<torch::Tensor>& tensors) {
  TORCH_CHECK(tensors.size() == layout.tensors().size(), "expected ", layout.tensors().size(),
              " tensors, got ", tensors.size());
  torch::NoGradGuard no_grad;
  for (std::size_t k = 0; k < tensors.size(); ++k) {
    const PolicyTensorSpec& spec = layout.tensors()[k];
    check_spec(spec, tensors[k]);
    const torch::Tensor host =
        torch::from_blob(const_cast<float*>(src + spec.offset), tensors[k].sizes(),
                         torch::kFloat32);
    tensors[k].copy_(host);
  }
}

void PolicyImpl::write_blob(float* dst) const { tensors_to_blob(layout_, blob_parameters(), dst); }

void PolicyImpl::read_blob(const float* src) { blob_to_tensors(layout_, src, blob_parameters()); }

}  // namespace ringrl::learner
