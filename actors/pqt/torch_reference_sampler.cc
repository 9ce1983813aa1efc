#include "actors/pqt/torch_reference_sampler.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cstring>
#include <string>

#include "common/errors.h"

namespace ringrl::actors {

namespace {

/// TF gate block (i, j, f, o) -> LSTMCell gate block (i, f, g, o).
constexpr int kTfToTorchGate[4] = {0, 2, 1, 3};
constexpr int kTorchForgetBlock = 1;

}  // namespace

struct TorchReferenceSampler::Impl {
  PolicyLayout layout;
  SamplerOptions options;
  torch::Tensor embedding;  // [V, E]
  std::vector<torch::nn::LSTMCell> cells;
  torch::Tensor output;  // [h_top, V]
  bool has_weights = false;

  Impl(const PolicyShape& shape, const SamplerOptions& o) : layout(shape), options(o) {
    for (int l = 0; l < shape.num_layers(); ++l) {
      cells.emplace_back(torch::nn::LSTMCellOptions(shape.layer_input(l), shape.lstm_sizes[l]));
    }
  }

  /// Runs one token step of all layers; returns logits [B, V] (EOS masked if configured).
  torch::Tensor step(const torch::Tensor& input, std::vector<torch::Tensor>* h, std::vector<torch::Tensor>* c) {
    torch::Tensor x = embedding.index_select(0, input);
    for (std::size_t l = 0; l < cells.size(); ++l) {
      auto hc = cells[l]->forward(x, std::make_tuple((*h)[l], (*c)[l]));
      (*h)[l] = std::get<0>(hc);
      (*c)[l] = std::get<1>(hc);
      x = (*h)[l];
    }
    torch::Tensor logits = torch::mm(x, output);
    if (!options.eos_token) logits.select(1, kPolicyEosToken).fill_(kPolicyEosMaskedLogit);
    return logits;
  }

  void zero_state(int b, std::vector<torch::Tensor>* h, std::vector<torch::Tensor>* c) const {
    h->clear();
    c->clear();
    for (int s : layout.shape().lstm_sizes) {
      h->push_back(torch::zeros({b, s}));
      c->push_back(torch::zeros({b, s}));
    }
  }
};

TorchReferenceSampler::TorchReferenceSampler(const PolicyShape& shape, const SamplerOptions& options)
    : impl_(std::make_unique<Impl>(shape, options)) {
  if (options.batch_size < 1 || options.max_len < 1) {
    throw UsageError("sampler batch_size and max_len must be >= 1");
  }
}

TorchReferenceSampler::~TorchReferenceSampler() = default;

void TorchReferenceSampler::set_weights(const float* blob, std::size_t num_floats) {
  Impl& m = *impl_;
  if (num_floats != m.layout.num_floats()) {
    throw UsageError("policy blob has " + std::to_string(num_floats) + " floats, layout needs " +
                     std::to_string(m.layout.num_floats()));
  }
  torch::NoGradGuard no_grad;
  auto view = [blob](const PolicyTensorSpec& s) {
    return torch::from_blob(const_cast<float*>(blob + s.offset), {s.rows, s.cols}, torch::kFloat32).clone();
  };
  m.embedding = view(m.layout.embedding());
  m.output = view(m.layout.output());
  const PolicyShape& shape = m.layout.shape();
  for (int l = 0; l < shape.num_layers(); ++l) {
    const int in = shape.layer_input(l);
    const int h = shape.lstm_sizes[l];
    const torch::Tensor k = view(m.layout.lstm_kernel(l));           // [in + h, 4h]
    const torch::Tensor b = view(m.layout.lstm_bias(l)).view({-1});  // [4h]
    auto& cell = m.cells[l];
    for (int tf = 0; tf < kLstmGates; ++tf) {
      const int dst = kTfToTorchGate[tf];
      const torch::Tensor cols = k.narrow(1, tf * h, h);  // [in + h, h]
      cell->weight_ih.narrow(0, dst * h, h).copy_(cols.narrow(0, 0, in).t());
      cell->weight_hh.narrow(0, dst * h, h).copy_(cols.narrow(0, in, h).t());
      torch::Tensor bias = b.narrow(0, tf * h, h).clone();
      if (dst == kTorchForgetBlock) bias.add_(kPolicyForgetBias);
      cell->bias_ih.narrow(0, dst * h, h).copy_(bias);
    }
    cell->bias_hh.zero_();
  }
  m.has_weights = true;
}

void TorchReferenceSampler::sample(std::uint64_t seed, SampledBatch* out) {
  Impl& m = *impl_;
  if (!m.has_weights) throw UsageError("TorchReferenceSampler::sample before set_weights");
  c10::InferenceMode guard;
  const int b = m.options.batch_size;
  const int t_max = m.options.max_len;
  if (out->batch_size != b || out->max_len != t_max) out->resize(b, t_max);
  at::Generator gen = at::detail::createCPUGenerator(seed);
  std::vector<torch::Tensor> h, c;
  m.zero_state(b, &h, &c);
  torch::Tensor input = torch::zeros({b}, torch::kInt64);
  torch::Tensor done = torch::zeros({b}, torch::kBool);
  std::vector<torch::Tensor> toks, lps;
  for (int t = 0; t < t_max; ++t) {
    torch::Tensor logits = m.step(input, &h, &c);
    if (m.options.softmax_tr != 1.0f) logits = logits * m.options.softmax_tr;
    const torch::Tensor logp = torch::log_softmax(logits, 1);
    torch::Tensor tok = torch::multinomial(logp.exp(), 1, /*replacement=*/true, gen).squeeze(1);
    torch::Tensor lp = logp.gather(1, tok.unsqueeze(1)).squeeze(1);
    tok = tok.masked_fill(done, 0);
    lp = lp.masked_fill(done, 0.0);
    toks.push_back(tok);
    lps.push_back(lp);
    if (m.options.eos_token) {
      done = done.logical_or(tok == kPolicyEosToken);
      if (done.all().item<bool>()) break;
    }
    input = tok;
  }
  const torch::Tensor all_tok = torch::stack(toks, 1).to(torch::kInt32).contiguous();  // [B, t]
  const torch::Tensor all_lp = torch::stack(lps, 1).contiguous();
  const int steps = static_cast<int>(all_tok.size(1));
  std::fill(out->tokens.begin(), out->tokens.end(), 0);
  std::fill(out->log_probs.begin(), out->log_probs.end(), 0.0f);
  const std::int32_t* tp = all_tok.data_ptr<std::int32_t>();
  const float* lp = all_lp.data_ptr<float>();
  for (int i = 0; i < b; ++i) {
    int len = t_max;
    for (int t = 0; t < steps; ++t) {
      const std::int32_t tok = tp[i * steps + t];
      out->tokens[static_cast<std::size_t>(i) * t_max + t] = tok;
      out->log_probs[static_cast<std::size_t>(i) * t_max + t] = lp[i * steps + t];
      if (m.options.eos_token && tok == kPolicyEosToken) {
        len = t + 1;
        break;
      }
    }
    out->lengths[i] = len;
  }
}

void TorchReferenceSampler::teacher_forced_logits(const std::int32_t* tokens, int b, int t, float* out) {
  Impl& m = *impl_;
  if (!m.has_weights) throw UsageError("teacher_forced_logits before set_weights");
  c10::InferenceMode guard;
  std::vector<torch::Tensor> h, c;
  m.zero_state(b, &h, &c);
  const int v = m.layout.shape().vocab;
  torch::Tensor input = torch::zeros({b}, torch::kInt64);
  for (int s = 0; s < t; ++s) {
    const torch::Tensor logits = m.step(input, &h, &c).contiguous();
    const float* lg = logits.data_ptr<float>();
    auto next = torch::empty({b}, torch::kInt64);
    for (int i = 0; i < b; ++i) {
      std::memcpy(out + (static_cast<std::size_t>(i) * t + s) * v, lg + i * v, sizeof(float) * v);
      next[i] = tokens[static_cast<std::size_t>(i) * t + s];
    }
    input = next;
  }
}

const PolicyLayout& TorchReferenceSampler::layout() const { return impl_->layout; }

}  // namespace ringrl::actors
