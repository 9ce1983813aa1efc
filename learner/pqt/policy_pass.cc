#include "learner/pqt/policy_pass.h"

#include <ATen/Parallel.h>

#include <algorithm>

#include "common/errors.h"
#include "learner/pqt/losses.h"
#include "learner/task_arena.h"

namespace ringrl::learner {

namespace {

torch::Tensor floats(std::vector<int64_t> shape) { return torch::empty(shape, torch::kFloat32); }

}  // namespace

// The pass over one row range: the whole pass of the contract for a [G m, T] batch, on the
// calling thread.
class PolicyPass::Shard {
 public:
  explicit Shard(Policy policy) : policy_(std::move(policy)) {}
  void forward(const torch::Tensor& tokens, int groups);
  torch::Tensor action_log_probs() const { return to_row_order(alp_); }
  torch::Tensor entropy_steps() const { return to_row_order(ent_); }
  torch::Tensor group_input_tokens(int g) const {
    const int64_t block = static_cast<int64_t>(t_) * n_;
    return input_tokens_.narrow(0, g * block, block);
  }
  void backward(const torch::Tensor& ca, const torch::Tensor& ce);
  const std::vector<torch::Tensor>& group_grads(int g) const { return grads_[static_cast<std::size_t>(g)]; }
  double lookup_sq(int g) const { return lookup_sq_[static_cast<std::size_t>(g)]; }

 private:
  struct Layer {
    torch::Tensor pre, acts, cs, tcs, hs, dg, dx;  // [G, T, n, *] (time-major inside a group)
  };
  void resize(int groups, int rows_per_group, int steps);
  /// [G n, T] (row-major by row) -> [G, T, n] and back.
  torch::Tensor to_position_order(const torch::Tensor& by_row) const;
  torch::Tensor to_row_order(const torch::Tensor& by_position) const;

  Policy policy_;
  int groups_ = 0, n_ = 0, t_ = 0;
  std::vector<Layer> layers_;
  torch::Tensor embedded_;      // [P, E] float, P = G T n positions
  torch::Tensor input_tokens_;  // [P] int64
  torch::Tensor inputs32_;      // [P] int32 (input tokens)
  torch::Tensor actions32_;     // [P] int32 (drawn tokens)
  torch::Tensor logits_t_;      // [V, P]
  torch::Tensor log_probs_t_;   // [V, P]
  torch::Tensor alp_, ent_;     // [P]
  torch::Tensor dlogits_t_;     // [V, P]
  torch::Tensor dh_top_;        // [P, h_top]
  std::vector<float> scratch_;  // the LSTM kernels' scratch
  std::vector<std::vector<torch::Tensor>> grads_;  // [G][blob tensor]
  std::vector<double> lookup_sq_;
};

void PolicyPass::Shard::resize(int groups, int rows_per_group, int steps) {
  if (groups == groups_ && rows_per_group == n_ && steps == t_) return;
  groups_ = groups;
  n_ = rows_per_group;
  t_ = steps;
  const PolicyShape& s = policy_->layout().shape();
  const int64_t p = static_cast<int64_t>(groups) * steps * rows_per_group;
  layers_.assign(static_cast<std::size_t>(s.num_layers()), Layer{});
  for (int l = 0; l < s.num_layers(); ++l) {
    const int64_t h = s.lstm_sizes[static_cast<std::size_t>(l)];
    Layer& y = layers_[static_cast<std::size_t>(l)];
    y.pre = floats({p, 4 * h});
    y.acts = floats({p, 4 * h});
    y.cs = floats({p, h});
    y.tcs = floats({p, h});
    y.hs = floats({p, h});
    y.dg = floats({p, 4 * h});
    y.dx = floats({p, s.layer_input(l)});
  }
  embedded_ = floats({p, s.embedding});
  input_tokens_ = torch::empty({p}, torch::kInt64);
  inputs32_ = torch::empty({p}, torch::kInt32);
  actions32_ = torch::empty({p}, torch::kInt32);
  logits_t_ = floats({s.vocab, p});
  log_probs_t_ = floats({s.vocab, p});
  dlogits_t_ = floats({s.vocab, p});
  alp_ = floats({p});
  ent_ = floats({p});
  dh_top_ = floats({p, s.top_size()});
  grads_.assign(static_cast<std::size_t>(groups), {});
  for (auto& g : grads_) {
    for (const torch::Tensor& param : policy_->blob_parameters()) g.push_back(torch::zeros_like(param));
  }
  lookup_sq_.assign(static_cast<std::size_t>(groups), 0.0);
  int scratch = 0;
  for (const int h : s.lstm_sizes) {
    scratch = std::max({scratch, lstm_forward_scratch(h), lstm_backward_scratch(rows_per_group, h)});
  }
  scratch_.assign(static_cast<std::size_t>(scratch), 0.0f);
}

torch::Tensor PolicyPass::Shard::to_position_order(const torch::Tensor& by_row) const {
  return by_row.to(torch::kFloat32).view({groups_, n_, t_}).permute({0, 2, 1}).contiguous().view({-1});
}

torch::Tensor PolicyPass::Shard::to_row_order(const torch::Tensor& by_position) const {
  return by_position.view({groups_, t_, n_}).permute({0, 2, 1}).reshape({groups_ * n_, t_});
}

// The caller (PolicyPass) has checked the arguments of both.
void PolicyPass::Shard::forward(const torch::Tensor& tokens, int groups) {
  resize(groups, static_cast<int>(tokens.size(0)) / groups, static_cast<int>(tokens.size(1)));
  torch::NoGradGuard no_grad;
  const PolicyShape& s = policy_->layout().shape();
  const PolicyOptions& po = policy_->options();

  // Positions in (group, step, row) order: each group is a time-major block of its own.
  const torch::Tensor tok = tokens.contiguous();
  const int64_t* src = tok.data_ptr<int64_t>();
  int64_t* in64 = input_tokens_.data_ptr<int64_t>();
  int* in32 = inputs32_.data_ptr<int>();
  int* act32 = actions32_.data_ptr<int>();
  std::size_t p = 0;
  for (int g = 0; g < groups_; ++g) {
    for (int t = 0; t < t_; ++t) {
      for (int i = 0; i < n_; ++i, ++p) {
        const int64_t* row = src + static_cast<std::size_t>(g * n_ + i) * t_;
        in64[p] = t == 0 ? kPolicyEosToken : row[t - 1];
        in32[p] = static_cast<int>(in64[p]);
        act32[p] = static_cast<int>(row[t]);
      }
    }
  }
  at::index_select_out(embedded_, policy_->embedding, 0, input_tokens_);

  const LstmLayerDims dims_template{t_, n_, 0};
  const std::size_t block = static_cast<std::size_t>(t_) * n_;  // positions per group
  for (int l = 0; l < s.num_layers(); ++l) {
    Layer& y = layers_[static_cast<std::size_t>(l)];
    const int64_t in = s.layer_input(l);
    const int h = s.lstm_sizes[static_cast<std::size_t>(l)];
    const torch::Tensor& x = l == 0 ? embedded_ : layers_[static_cast<std::size_t>(l - 1)].hs;
    const torch::Tensor& kernel = policy_->kernels[static_cast<std::size_t>(l)];
    at::mm_out(y.pre, x, kernel.narrow(0, 0, in));  // the kernel adds the bias
    const float* bias = policy_->biases[static_cast<std::size_t>(l)].data_ptr<float>();
    const float* kh = kernel.data_ptr<float>() + in * 4 * h;
    LstmLayerDims d = dims_template;
    d.hidden = h;
    for (int g = 0; g < groups_; ++g) {
      const std::size_t gates = g * block * 4 * h, state = g * block * h;
      policy_kernels().forward(d, 0, n_, y.pre.data_ptr<float>() + gates, kh, bias, kPolicyForgetBias,
                               y.acts.data_ptr<float>() + gates, y.cs.data_ptr<float>() + state,
                               y.tcs.data_ptr<float>() + state, y.hs.data_ptr<float>() + state, scratch_.data());
    }
  }
  at::mm_out(logits_t_, policy_->output.t(), layers_.back().hs.t());
  policy_kernels().head_forward(static_cast<int>(alp_.numel()), s.vocab, !po.eos_token, kPolicyEosMaskedLogit,
                                static_cast<float>(kEntropyLogFloor), logits_t_.data_ptr<float>(), act32,
                                log_probs_t_.data_ptr<float>(), alp_.data_ptr<float>(), ent_.data_ptr<float>());
}

void PolicyPass::Shard::backward(const torch::Tensor& ca, const torch::Tensor& ce) {
  torch::NoGradGuard no_grad;
  const PolicyShape& s = policy_->layout().shape();
  const PolicyOptions& po = policy_->options();
  const torch::Tensor ca_p = to_position_order(ca), ce_p = to_position_order(ce);
  const auto positions = static_cast<int>(alp_.numel());
  policy_kernels().head_backward(positions, s.vocab, !po.eos_token, static_cast<float>(kEntropyLogFloor),
                                 log_probs_t_.data_ptr<float>(), actions32_.data_ptr<int>(), ca_p.data_ptr<float>(),
                                 ce_p.data_ptr<float>(), ent_.data_ptr<float>(), dlogits_t_.data_ptr<float>());

  const int64_t block = static_cast<int64_t>(t_) * n_;  // positions per group
  const auto group_rows = [&](const torch::Tensor& t, int g) { return t.narrow(0, g * block, block); };
  for (int g = 0; g < groups_; ++g) {
    at::mm_out(grads_[static_cast<std::size_t>(g)].back(), group_rows(layers_.back().hs, g).t(),
               dlogits_t_.narrow(1, g * block, block).t());
  }
  at::mm_out(dh_top_, dlogits_t_.t(), policy_->output.t());

  for (int l = s.num_layers() - 1; l >= 0; --l) {
    Layer& y = layers_[static_cast<std::size_t>(l)];
    const int64_t in = s.layer_input(l);
    const int h = s.lstm_sizes[static_cast<std::size_t>(l)];
    const torch::Tensor& kernel = policy_->kernels[static_cast<std::size_t>(l)];
    const torch::Tensor& dh = l == s.num_layers() - 1 ? dh_top_ : layers_[static_cast<std::size_t>(l + 1)].dx;
    const torch::Tensor& x = l == 0 ? embedded_ : layers_[static_cast<std::size_t>(l - 1)].hs;
    const float* kh = kernel.data_ptr<float>() + in * 4 * h;
    const LstmLayerDims d{t_, n_, h};
    for (int g = 0; g < groups_; ++g) {
      const std::size_t gates = static_cast<std::size_t>(g * block) * 4 * h, state = static_cast<std::size_t>(g * block) * h;
      std::vector<torch::Tensor>& gr = grads_[static_cast<std::size_t>(g)];
      torch::Tensor& dkernel = gr[static_cast<std::size_t>(1 + 2 * l)];
      torch::Tensor& dbias = gr[static_cast<std::size_t>(2 + 2 * l)];
      dbias.zero_();
      policy_kernels().backward(d, 0, n_, kh, y.acts.data_ptr<float>() + gates, y.cs.data_ptr<float>() + state,
                                y.tcs.data_ptr<float>() + state, dh.data_ptr<float>() + state,
                                y.dg.data_ptr<float>() + gates, dbias.data_ptr<float>(), scratch_.data());
      const torch::Tensor dg = group_rows(y.dg, g);
      // dKh = sum_t h_{t-1}^T dG_t (h_{-1} = 0); dKx = x^T dG (db came with the kernel).
      torch::Tensor dkh = dkernel.narrow(0, in, h), dkx = dkernel.narrow(0, 0, in);
      at::mm_out(dkh, group_rows(y.hs, g).narrow(0, 0, block - n_).t(), dg.narrow(0, n_, block - n_));
      at::mm_out(dkx, group_rows(x, g).t(), dg);
    }
    at::mm_out(y.dx, y.dg, kernel.narrow(0, 0, in).t());
  }

  // The embedding: one gradient row per lookup, summed into the looked-up rows.
  const int64_t e = s.embedding;
  const float* de = layers_[0].dx.data_ptr<float>();
  const int* in32 = inputs32_.data_ptr<int>();
  for (int g = 0; g < groups_; ++g) {
    torch::Tensor& demb = grads_[static_cast<std::size_t>(g)][0];
    demb.zero_();
    float* dst = demb.data_ptr<float>();
    double sq = 0.0;
    for (int64_t p = g * block; p < (g + 1) * block; ++p) {
      const float* row = de + p * e;
      float* out = dst + static_cast<int64_t>(in32[p]) * e;
      for (int64_t k = 0; k < e; ++k) {
        out[k] += row[k];
        sq += static_cast<double>(row[k]) * row[k];
      }
    }
    lookup_sq_[static_cast<std::size_t>(g)] = sq;
  }
}

// --- PolicyPass: the shards and their threads ------------------------------------------------

struct PolicyPass::Threads {
  explicit Threads(int n) : count(n), arena(n) {}
  int count;
  TaskArena arena;  // runs each task in the caller's floating-point mode, BLAS serial
};

PolicyPass::PolicyPass(Policy policy) : policy_(std::move(policy)) {
  if (!supports(policy_)) throw UsageError("the fused policy pass runs on the CPU in float32 only");
}

PolicyPass::~PolicyPass() = default;

bool PolicyPass::supports(const Policy& policy) {
  return policy->embedding.device().is_cpu() && policy->embedding.scalar_type() == torch::kFloat32;
}

template <typename Fn>
void PolicyPass::run_shards(const Fn& fn) {
  if (active_ == 1) {
    fn(std::size_t{0});
    return;
  }
  threads_->arena.run(static_cast<int>(active_), [&](int shard, int /*slot*/) { fn(static_cast<std::size_t>(shard)); });
}

void PolicyPass::forward(const torch::Tensor& tokens, int groups) {
  if (tokens.dim() != 2 || tokens.scalar_type() != torch::kInt64 || !tokens.device().is_cpu())
    throw UsageError("policy pass: tokens must be a CPU int64 [rows, T] tensor");
  const auto rows = static_cast<int>(tokens.size(0));
  if (groups < 1 || rows % groups != 0)
    throw UsageError("policy pass: " + std::to_string(rows) + " rows do not split into " + std::to_string(groups) +
                     " groups");
  const int threads = std::max(1, at::get_num_threads());
  const int n = rows / groups;
  const auto count = static_cast<std::size_t>(threads == 1 ? 1 : std::min(n, kShardsPerThread * threads));
  while (shards_.size() < count) shards_.push_back(std::make_unique<Shard>(policy_));
  if (count > 1 && (threads_ == nullptr || threads_->count != threads)) threads_ = std::make_unique<Threads>(threads);
  steps_ = static_cast<int>(tokens.size(1));
  if (count != active_ || groups != groups_ || n != n_) {
    active_ = count;
    groups_ = groups;
    n_ = n;
    shard_rows_.clear();
    for (std::size_t k = 0; k < count; ++k) {
      const int begin = static_cast<int>(n * k / count), end = static_cast<int>(n * (k + 1) / count);
      std::vector<int64_t> index;
      for (int g = 0; g < groups; ++g) {
        for (int r = begin; r < end; ++r) index.push_back(static_cast<int64_t>(g) * n + r);
      }
      shard_rows_.push_back(torch::tensor(index, torch::kInt64));
    }
  }
  if (active_ == 1) {
    shards_[0]->forward(tokens, groups);
    return;
  }
  const torch::Tensor tok = tokens.contiguous();
  run_shards([&](std::size_t k) { shards_[k]->forward(tok.index_select(0, shard_rows_[k]), groups); });
  torch::NoGradGuard no_grad;
  alp_ = torch::empty({rows, tokens.size(1)}, torch::kFloat32);
  ent_ = torch::empty({rows, tokens.size(1)}, torch::kFloat32);
  for (std::size_t k = 0; k < active_; ++k) {
    alp_.index_copy_(0, shard_rows_[k], shards_[k]->action_log_probs());
    ent_.index_copy_(0, shard_rows_[k], shards_[k]->entropy_steps());
  }
}

torch::Tensor PolicyPass::action_log_probs() const {
  return active_ == 1 ? shards_[0]->action_log_probs() : alp_;
}

torch::Tensor PolicyPass::entropy_steps() const { return active_ == 1 ? shards_[0]->entropy_steps() : ent_; }

torch::Tensor PolicyPass::group_input_tokens(int g) const {
  if (active_ == 1) return shards_[0]->group_input_tokens(g);
  std::vector<torch::Tensor> parts;
  for (std::size_t k = 0; k < active_; ++k) parts.push_back(shards_[k]->group_input_tokens(g));
  return torch::cat(parts);
}

void PolicyPass::backward(const torch::Tensor& ca, const torch::Tensor& ce) {
  if (active_ == 0) throw UsageError("policy pass: backward before forward");
  const int64_t rows = static_cast<int64_t>(groups_) * n_;
  if (ca.sizes() != torch::IntArrayRef({rows, steps_}) || ce.sizes() != torch::IntArrayRef({rows, steps_}))
    throw UsageError("policy pass: loss coefficients must be [" + std::to_string(rows) + ", " +
                     std::to_string(steps_) + "], as the forward's tokens");
  if (active_ == 1) {
    shards_[0]->backward(ca, ce);
    return;
  }
  run_shards([&](std::size_t k) {
    shards_[k]->backward(ca.index_select(0, shard_rows_[k]), ce.index_select(0, shard_rows_[k]));
  });
  torch::NoGradGuard no_grad;
  grads_.resize(static_cast<std::size_t>(groups_));
  lookup_sq_.assign(static_cast<std::size_t>(groups_), 0.0);
  for (int g = 0; g < groups_; ++g) {
    std::vector<torch::Tensor>& sum = grads_[static_cast<std::size_t>(g)];
    const std::vector<torch::Tensor>& first = shards_[0]->group_grads(g);
    if (sum.size() != first.size()) {
      sum.clear();
      for (const torch::Tensor& t : first) sum.push_back(torch::empty_like(t));
    }
    for (std::size_t q = 0; q < sum.size(); ++q) sum[q].copy_(first[q]);
    for (std::size_t k = 1; k < active_; ++k) {
      const std::vector<torch::Tensor>& part = shards_[k]->group_grads(g);
      for (std::size_t q = 0; q < sum.size(); ++q) sum[q].add_(part[q]);
    }
    for (std::size_t k = 0; k < active_; ++k) lookup_sq_[static_cast<std::size_t>(g)] += shards_[k]->lookup_sq(g);
  }
}

const std::vector<torch::Tensor>& PolicyPass::group_grads(int g) const {
  return active_ == 1 ? shards_[0]->group_grads(g) : grads_[static_cast<std::size_t>(g)];
}

double PolicyPass::lookup_sq(int g) const {
  return active_ == 1 ? shards_[0]->lookup_sq(g) : lookup_sq_[static_cast<std::size_t>(g)];
}

}  // namespace ringrl::learner
