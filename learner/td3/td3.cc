#include "learner/td3/td3.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "common/errors.h"
#include "common/float_block.h"
#include "common/td3_state_format.h"
#include "learner/td3/td3_fused.h"
#include "learner/td3/td3_graph.h"

namespace ringrl::td3 {

namespace {


// Leading `masked` entries 0, the rest 1.
torch::Tensor input_mask(int input_dim, int masked) {
  auto m = torch::ones({input_dim});
  if (masked > 0) m.narrow(0, 0, masked).zero_();
  return m;
}

// Weights U(-bound, bound) from the host stream (device-independent), bias 0.
void init_linear(torch::nn::Linear& layer, double bound, Rng& rng) {
  torch::NoGradGuard no_grad;
  auto w = torch::empty(layer->weight.sizes(), torch::kFloat);
  float* p = w.data_ptr<float>();
  for (std::int64_t i = 0; i < w.numel(); ++i) p[i] = static_cast<float>(rng.uniform(-bound, bound));
  layer->weight.copy_(w);
  layer->bias.zero_();
}

void init_mlp(torch::nn::Linear& fc1, torch::nn::Linear& fc2, torch::nn::Linear& out, Rng& rng) {
  init_linear(fc1, 1.0 / std::sqrt(static_cast<double>(fc1->weight.size(1))), rng);
  init_linear(fc2, 1.0 / std::sqrt(static_cast<double>(fc2->weight.size(1))), rng);
  init_linear(out, kOutputInitRange, rng);
}

void hard_copy(torch::nn::Module& dst, const torch::nn::Module& src) {
  torch::NoGradGuard no_grad;
  auto d = dst.parameters();
  const auto s = src.parameters();
  for (std::size_t i = 0; i < d.size(); ++i) d[i].copy_(s[i]);
}

void soft_copy(torch::nn::Module& dst, const torch::nn::Module& src, double tau) {
  torch::NoGradGuard no_grad;
  auto d = dst.parameters();
  const auto s = src.parameters();
  for (std::size_t i = 0; i < d.size(); ++i) d[i].mul_(1.0 - tau).add_(s[i], tau);
}

void save_params(ByteWriter& out, const torch::nn::Module& m) {
  for (const auto& p : m.parameters()) save_tensor(out, p);
}
// Loads module `m`'s parameters, the blocks `specs` names (td3_format::td3_tensors), from `*next` on.
void load_params(ByteReader& in, torch::nn::Module& m, const std::vector<td3_format::TensorSpec>& specs,
                 std::size_t* next) {
  for (auto& p : m.parameters()) {
    const td3_format::TensorSpec& spec = specs.at((*next)++);
    if (static_cast<std::size_t>(p.numel()) != spec.numel())
      in.fail("td3 parameter " + spec.network + "." + spec.name + " has " + std::to_string(spec.numel()) +
              " values in the format, " + std::to_string(p.numel()) + " in this agent");
    load_tensor(in, p, spec.network + "." + spec.name);
  }
}

void save_adam(ByteWriter& out, const torch::optim::Adam& opt) {
  for (const auto& p : opt.param_groups().at(0).params()) {
    const auto it = opt.state().find(p.unsafeGetTensorImpl());
    if (it == opt.state().end()) {
      td3_format::write_adam_step(out, 0);
      continue;
    }
    const auto& st = static_cast<const torch::optim::AdamParamState&>(*it->second);
    td3_format::write_adam_step(out, st.step());
    save_tensor(out, st.exp_avg());
    save_tensor(out, st.exp_avg_sq());
  }
}

void load_adam(ByteReader& in, torch::optim::Adam& opt) {
  for (const auto& p : opt.param_groups().at(0).params()) {
    void* key = p.unsafeGetTensorImpl();
    opt.state().erase(key);
    const std::int64_t step = td3_format::read_adam_step(in);
    if (step == 0) continue;
    auto st = std::make_unique<torch::optim::AdamParamState>();
    st->step(step);
    st->exp_avg(torch::zeros_like(p));
    st->exp_avg_sq(torch::zeros_like(p));
    load_tensor(in, st->exp_avg(), "Adam first moment");
    load_tensor(in, st->exp_avg_sq(), "Adam second moment");
    opt.state()[key] = std::move(st);
  }
}

// Steps `opt` has taken: every parameter steps together, so the first one's count.
std::int64_t adam_steps(const torch::optim::Adam& opt) {
  const auto& params = opt.param_groups().at(0).params();
  if (params.empty()) return 0;
  const auto it = opt.state().find(params.front().unsafeGetTensorImpl());
  if (it == opt.state().end()) return 0;
  return static_cast<const torch::optim::AdamParamState&>(*it->second).step();
}

// Sets `opt`'s epsilon for its next step t. torch::optim::Adam adds it to sqrt(v / (1 - b2^t))
// (the PyTorch form); eps / sqrt(1 - b2^t) there is eps added to sqrt(v) with the step size
// lr sqrt(1 - b2^t) / (1 - b1^t): the TensorFlow form (td3.h).
void prepare_adam_step(torch::optim::Adam& opt, AdamForm form) {
  auto& o = static_cast<torch::optim::AdamOptions&>(opt.param_groups().at(0).options());
  if (form == AdamForm::kPyTorch) {
    o.eps(kAdamEpsilon);
    return;
  }
  const double t = static_cast<double>(adam_steps(opt) + 1);
  o.eps(kAdamEpsilon / std::sqrt(1.0 - std::pow(kAdamBeta2, t)));
}

AdamSnapshot snapshot_adam(const torch::optim::Adam& opt) {
  AdamSnapshot s;
  s.steps = adam_steps(opt);
  for (const auto& p : opt.param_groups().at(0).params()) {
    const auto it = opt.state().find(p.unsafeGetTensorImpl());
    if (it == opt.state().end()) {
      s.m.push_back(torch::zeros_like(p, torch::kCPU));
      s.v.push_back(torch::zeros_like(p, torch::kCPU));
      continue;
    }
    const auto& st = static_cast<const torch::optim::AdamParamState&>(*it->second);
    s.m.push_back(st.exp_avg().detach().to(torch::kCPU).clone());
    s.v.push_back(st.exp_avg_sq().detach().to(torch::kCPU).clone());
  }
  return s;
}

std::string shape_text(const Td3Shape& s) {
  return "in " + std::to_string(s.input_dim) + ", act " + std::to_string(s.action_dim) + ", hidden " +
         std::to_string(s.hidden1) + "-" + std::to_string(s.hidden2) + ", masked " + std::to_string(s.masked_inputs);
}

}  // namespace

Td3Kernel parse_td3_kernel(const std::string& name) {
  if (name == "auto") return Td3Kernel::kAuto;
  if (name == "eager") return Td3Kernel::kEager;
  if (name == "fused") return Td3Kernel::kFused;
  if (name == "graph") return Td3Kernel::kGraph;
  throw UsageError("td3 kernel '" + name + "': expected auto, eager, fused or graph");
}

const char* td3_kernel_name(Td3Kernel k) noexcept {
  switch (k) {
    case Td3Kernel::kAuto:
      return "auto";
    case Td3Kernel::kEager:
      return "eager";
    case Td3Kernel::kFused:
      return "fused";
    case Td3Kernel::kGraph:
      return "graph";
  }
  return "?";
}

CudaGraphs parse_cuda_graphs(const std::string& name) {
  if (name == "auto") return CudaGraphs::kAuto;
  if (name == "on") return CudaGraphs::kOn;
  if (name == "off") return CudaGraphs::kOff;
  throw UsageError("cuda_graphs '" + name + "': expected auto, on or off");
}

AdamForm parse_adam_form(const std::string& name) {
  if (name == "tf") return AdamForm::kTensorFlow;
  if (name == "torch") return AdamForm::kPyTorch;
  throw UsageError("adam form '" + name + "': expected tf (TensorFlow, the reference) or torch (PyTorch)");
}

Td3Precision parse_td3_precision(const std::string& name) {
  if (name == "fp32") return Td3Precision::kFloat32;
  if (name == "bf16") return Td3Precision::kBfloat16;
  throw UsageError("learner precision '" + name + "': expected fp32 (the reference) or bf16 (a departure, fused CPU kernel)");
}

void Td3Options::validate() const {
  const Td3Shape& s = shape;
  if (s.input_dim < 1) throw UsageError("td3: input_dim must be >= 1, got " + std::to_string(s.input_dim));
  if (s.action_dim < 1) throw UsageError("td3: action_dim must be >= 1, got " + std::to_string(s.action_dim));
  if (s.hidden1 < 1 || s.hidden2 < 1)
    throw UsageError("td3: hidden sizes must be >= 1, got " + std::to_string(s.hidden1) + "-" +
                     std::to_string(s.hidden2));
  if (s.masked_inputs < 0 || s.masked_inputs > s.input_dim)
    throw UsageError("td3: masked_inputs must be in [0, " + std::to_string(s.input_dim) + "], got " +
                     std::to_string(s.masked_inputs));
  if (s.action_low.size() != static_cast<std::size_t>(s.action_dim) || s.action_high.size() != s.action_low.size())
    throw UsageError("td3: action box has " + std::to_string(s.action_low.size()) + "/" +
                     std::to_string(s.action_high.size()) + " bounds, expected " + std::to_string(s.action_dim));
  for (std::size_t j = 0; j < s.action_low.size(); ++j)
    if (!std::isfinite(s.action_low[j]) || !std::isfinite(s.action_high[j]) || s.action_low[j] > s.action_high[j])
      throw UsageError("td3: action box dim " + std::to_string(j) + " is [" + std::to_string(s.action_low[j]) + ", " +
                       std::to_string(s.action_high[j]) + "], expected finite low <= high");
  if (!(actor_lr >= 0.0)) throw UsageError("td3: actor_lr must be >= 0, got " + std::to_string(actor_lr));
  if (!(critic_lr >= 0.0)) throw UsageError("td3: critic_lr must be >= 0, got " + std::to_string(critic_lr));
  if (!(tau >= 0.0 && tau <= 1.0)) throw UsageError("td3: tau must be in [0, 1], got " + std::to_string(tau));
  if (!(gamma >= 0.0 && gamma <= 1.0)) throw UsageError("td3: gamma must be in [0, 1], got " + std::to_string(gamma));
  if (update_period < 1) throw UsageError("td3: update_period must be >= 1, got " + std::to_string(update_period));
  if (threads < 1 || threads > kMaxTaskThreads)
    throw UsageError("td3: threads must be in [1, " + std::to_string(kMaxTaskThreads) + "], got " +
                     std::to_string(threads));
  if (!(target_noise >= 0.0)) throw UsageError("td3: target_noise must be >= 0, got " + std::to_string(target_noise));
  if (!(target_noise_clip >= 0.0))
    throw UsageError("td3: target_noise_clip must be >= 0, got " + std::to_string(target_noise_clip));
}

ActorImpl::ActorImpl(const Td3Shape& s)
    : fc1(register_module("fc1", torch::nn::Linear(s.input_dim, s.hidden1))),
      fc2(register_module("fc2", torch::nn::Linear(s.hidden1, s.hidden2))),
      out(register_module("out", torch::nn::Linear(s.hidden2, s.action_dim))) {
  mask = register_buffer("mask", input_mask(s.input_dim, s.masked_inputs));
  const auto low = torch::tensor(s.action_low);
  const auto high = torch::tensor(s.action_high);
  mid = register_buffer("mid", (high + low) / 2);
  half_range = register_buffer("half_range", (high - low) / 2);
}

torch::Tensor ActorImpl::forward(const torch::Tensor& x) {
  auto h = torch::relu(fc1(x * mask));
  h = torch::relu(fc2(h));
  return mid + half_range * torch::tanh(out(h));
}

CriticImpl::CriticImpl(const Td3Shape& s)
    : fc1(register_module("fc1", torch::nn::Linear(s.input_dim + s.action_dim, s.hidden1))),
      fc2(register_module("fc2", torch::nn::Linear(s.hidden1 + s.action_dim, s.hidden2))),
      out(register_module("out", torch::nn::Linear(s.hidden2, 1))) {
  mask = register_buffer("mask", input_mask(s.input_dim, s.masked_inputs));
}

torch::Tensor CriticImpl::forward(const torch::Tensor& x, const torch::Tensor& a) {
  auto h = torch::relu(fc1(torch::cat({x * mask, a}, 1)));
  h = torch::relu(fc2(torch::cat({h, a}, 1)));
  return out(h).squeeze(1);
}

torch::Tensor huber(const torch::Tensor& diff) {
  const auto ad = diff.abs();
  return torch::where(ad <= kHuberDelta, 0.5 * diff * diff, kHuberDelta * (ad - 0.5 * kHuberDelta));
}

Td3Agent::Td3Agent(const Td3Options& options, torch::Device device, std::shared_ptr<TaskArena> arena)
    : options_(options), device_(device), rng_(options.seed), arena_(std::move(arena)) {
  options_.validate();
  if (!arena_) arena_ = std::make_shared<TaskArena>(options_.threads);
  const Td3Shape& s = options_.shape;
  actor_ = Actor(s);
  critic1_ = Critic(s);
  critic2_ = Critic(s);
  actor_target_ = Actor(s);
  critic1_target_ = Critic(s);
  critic2_target_ = Critic(s);
  // Initial weights from the host stream, in a fixed order: actor, Q1, Q2 (layer by layer).
  init_mlp(actor_->fc1, actor_->fc2, actor_->out, rng_);
  init_mlp(critic1_->fc1, critic1_->fc2, critic1_->out, rng_);
  init_mlp(critic2_->fc1, critic2_->fc2, critic2_->out, rng_);
  hard_copy(*actor_target_, *actor_);
  hard_copy(*critic1_target_, *critic1_);
  hard_copy(*critic2_target_, *critic2_);
  actor_->to(device_);
  critic1_->to(device_);
  critic2_->to(device_);
  for (torch::nn::Module* target :
       {static_cast<torch::nn::Module*>(actor_target_.get()), static_cast<torch::nn::Module*>(critic1_target_.get()),
        static_cast<torch::nn::Module*>(critic2_target_.get())}) {
    target->to(device_);
    for (auto& p : target->parameters()) p.set_requires_grad(false);
  }
  critic_params_ = critic1_->parameters();
  for (auto& p : critic2_->parameters()) critic_params_.push_back(p);
  if (options_.kernel == Td3Kernel::kFused && !device_.is_cpu())
    throw UsageError("td3: the fused kernel runs on the CPU only, not on " + device_.str() + " (use auto or eager)");
  if (options_.kernel == Td3Kernel::kFused || (options_.kernel == Td3Kernel::kAuto && device_.is_cpu())) {
    if (options_.cuda_graphs == CudaGraphs::kOn)
      throw UsageError("td3: cuda_graphs=on needs the graph kernel on a CUDA device, not the fused kernel on " +
                       device_.str());
    fused_ = std::make_unique<FusedTd3>(options_, actor_, critic1_, critic2_, actor_target_, critic1_target_,
                                        critic2_target_, *arena_);
    return;
  }
  if (options_.precision != Td3Precision::kFloat32)
    throw UsageError("td3: learner precision bf16 needs the fused CPU kernel, not the " +
                     std::string(td3_kernel_name(options_.kernel)) +
                     " kernel on " + device_.str());
  const bool graph_kernel = options_.kernel == Td3Kernel::kGraph ||
                            (options_.kernel == Td3Kernel::kAuto && options_.cuda_graphs != CudaGraphs::kOff);
  if (options_.cuda_graphs == CudaGraphs::kOn && !(graph_kernel && device_.is_cuda()))
    throw UsageError(std::string("td3: cuda_graphs=on needs the graph kernel on a CUDA device, not the ") +
                     (graph_kernel ? "graph" : "eager") + " kernel on " + device_.str());
  if (graph_kernel) {
    graph_ = std::make_unique<GraphTd3>(options_, *this, device_.is_cuda() && options_.cuda_graphs != CudaGraphs::kOff);
    return;
  }
  const auto adam = [](double lr) {
    return torch::optim::AdamOptions(lr).betas({kAdamBeta1, kAdamBeta2}).eps(kAdamEpsilon);
  };
  actor_opt_ = std::make_unique<torch::optim::Adam>(actor_->parameters(), adam(options_.actor_lr));
  critic_opt_ = std::make_unique<torch::optim::Adam>(critic_params_, adam(options_.critic_lr));
}

Td3Agent::~Td3Agent() = default;

Td3Kernel Td3Agent::kernel() const noexcept {
  if (fused_) return Td3Kernel::kFused;
  return graph_ ? Td3Kernel::kGraph : Td3Kernel::kEager;
}

bool Td3Agent::captures_cuda_graphs() const noexcept { return graph_ && graph_->captures(); }

torch::Tensor Td3Agent::draw_normal(std::int64_t rows) {
  const std::int64_t act = options_.shape.action_dim;
  auto host = torch::empty({rows, act}, torch::kFloat);
  float* p = host.data_ptr<float>();
  for (std::int64_t i = 0; i < rows * act; ++i) p[i] = static_cast<float>(rng_.normal());
  return host.to(device_);
}

torch::Tensor Td3Agent::target_q(const torch::Tensor& r, const torch::Tensor& x_next, const torch::Tensor& eps) {
  torch::NoGradGuard no_grad;
  const auto noise = (eps * options_.target_noise).clamp(-options_.target_noise_clip, options_.target_noise_clip);
  const auto a_next = actor_target_->forward(x_next) + noise;  // not clipped to the box (§5.1)
  const auto q = torch::min(critic1_target_->forward(x_next, a_next), critic2_target_->forward(x_next, a_next));
  return r + options_.gamma * q;
}

torch::Tensor Td3Agent::critic_loss(const torch::Tensor& x, const torch::Tensor& a, const torch::Tensor& y) {
  return (huber(critic1_->forward(x, a) - y).mean() + huber(critic2_->forward(x, a) - y).mean()) / 2;
}

torch::Tensor Td3Agent::actor_loss(const torch::Tensor& x) { return -critic1_->forward(x, actor_->forward(x)).mean(); }

torch::Tensor Td3Agent::act(const torch::Tensor& x) {
  torch::NoGradGuard no_grad;
  if (fused_) return fused_->act(x);
  return actor_->forward(x);
}

torch::Tensor Td3Agent::act_on_sums(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& ia,
                                     const torch::Tensor& ib) {
  torch::NoGradGuard no_grad;
  if (fused_) return fused_->act_on_sums(a, b, ia, ib);
  return actor_->forward(a.index_select(0, ia) + b.index_select(0, ib));
}

Td3Stats Td3Agent::update(const Td3Batch& batch, learner::PhaseProfiler* profiler) {
  return update(batch, torch::Tensor(), profiler);
}

Td3Stats Td3Agent::update(const Td3Batch& batch, const torch::Tensor& eps, learner::PhaseProfiler* profiler) {
  Td3Stats stats;
  if (fused_) {
    torch::NoGradGuard no_grad;
    {
      auto scope = learner::profile_scope(profiler, learner::Phase::kCritic);
      arena_->set_phase(learner::Phase::kCritic);
      const auto e = eps.defined() ? eps.to(torch::kCPU, torch::kFloat) : draw_normal(batch.x.size(0));
      stats.critic_loss = torch::scalar_tensor(fused_->critic_step(batch, e));
    }
    if (counter_ % options_.update_period == 0) {
      {
        auto scope = learner::profile_scope(profiler, learner::Phase::kActor);
        arena_->set_phase(learner::Phase::kActor);
        stats.actor_loss = torch::scalar_tensor(fused_->actor_step(batch.x));
      }
      auto scope = learner::profile_scope(profiler, learner::Phase::kTarget);
      arena_->set_phase(learner::Phase::kTarget);
      fused_->soft_update();
      stats.actor_step = stats.actor_changed = true;
    } else if (options_.actor_zero_grad_steps) {
      stats.actor_changed = true;
      auto scope = learner::profile_scope(profiler, learner::Phase::kActor);
      arena_->set_phase(learner::Phase::kActor);
      fused_->actor_zero_grad_step();
    }
    ++counter_;
    return stats;
  }
  if (graph_) {
    {
      auto scope = learner::profile_scope(profiler, learner::Phase::kCritic);
      stats.critic_loss = graph_->critic_step(batch, eps.defined() ? eps : draw_normal(batch.x.size(0)));
    }
    auto scope = learner::profile_scope(profiler, learner::Phase::kActor);  // the target phase is in it
    if (counter_ % options_.update_period == 0) {
      stats.actor_loss = graph_->actor_step();
      stats.actor_step = stats.actor_changed = true;
    } else if (options_.actor_zero_grad_steps) {
      stats.actor_changed = true;
      graph_->actor_zero_grad_step();
    }
    ++counter_;
    return stats;
  }
  // Critics: one Adam step on the mean Huber loss of both against the shared target.
  {
    auto scope = learner::profile_scope(profiler, learner::Phase::kCritic);
    const auto y = target_q(batch.r, batch.x_next, eps.defined() ? eps : draw_normal(batch.x.size(0)));
    const auto closs = critic_loss(batch.x, batch.a, y);
    critic_opt_->zero_grad();
    closs.backward();
    prepare_adam_step(*critic_opt_, options_.adam_form);
    critic_opt_->step();
    stats.critic_loss = closs.detach();
  }
  // Actor and targets: every update_period-th update from counter 0; a true skip otherwise.
  if (counter_ % options_.update_period == 0) {
    {
      auto scope = learner::profile_scope(profiler, learner::Phase::kActor);
      const auto aloss = actor_loss(batch.x);
      actor_opt_->zero_grad();
      aloss.backward();
      prepare_adam_step(*actor_opt_, options_.adam_form);
      actor_opt_->step();
      stats.actor_loss = aloss.detach();
    }
    auto scope = learner::profile_scope(profiler, learner::Phase::kTarget);
    soft_update();
    stats.actor_step = stats.actor_changed = true;
  } else if (options_.actor_zero_grad_steps) {
    stats.actor_changed = true;
    // The reference's off step: its actor loss times 0, so Adam steps with a zero gradient.
    auto scope = learner::profile_scope(profiler, learner::Phase::kActor);
    for (auto& p : actor_->parameters()) p.mutable_grad() = torch::zeros_like(p);
    prepare_adam_step(*actor_opt_, options_.adam_form);
    actor_opt_->step();
  }
  ++counter_;
  return stats;
}

AdamSnapshot Td3Agent::actor_adam() const {
  if (fused_) return fused_->actor_adam().snapshot();
  return graph_ ? graph_->actor_adam().snapshot() : snapshot_adam(*actor_opt_);
}

AdamSnapshot Td3Agent::critic_adam() const {
  if (fused_) return fused_->critic_adam().snapshot();
  return graph_ ? graph_->critic_adam().snapshot() : snapshot_adam(*critic_opt_);
}

void Td3Agent::soft_update() {
  soft_copy(*actor_target_, *actor_, options_.tau);
  soft_copy(*critic1_target_, *critic1_, options_.tau);
  soft_copy(*critic2_target_, *critic2_, options_.tau);
}

void Td3Agent::save(ByteWriter& out) const {
  const Td3Shape& s = options_.shape;
  td3_format::write_td3_head(out, {s.input_dim, s.action_dim, s.hidden1, s.hidden2, s.masked_inputs, counter_,
                                    rng_.state()});
  save_params(out, *actor_);
  save_params(out, *critic1_);
  save_params(out, *critic2_);
  save_params(out, *actor_target_);
  save_params(out, *critic1_target_);
  save_params(out, *critic2_target_);
  if (fused_) {
    fused_->actor_adam().save(out);
    fused_->critic_adam().save(out);
  } else if (graph_) {
    graph_->actor_adam().save(out);
    graph_->critic_adam().save(out);
  } else {
    save_adam(out, *actor_opt_);
    save_adam(out, *critic_opt_);
  }
}

void Td3Agent::load(ByteReader& in) {
  const Td3Shape& s = options_.shape;
  const td3_format::Td3Head h = td3_format::read_td3_head(in);
  Td3Shape got;
  got.input_dim = h.input_dim;
  got.action_dim = h.action_dim;
  got.hidden1 = h.hidden1;
  got.hidden2 = h.hidden2;
  got.masked_inputs = h.masked_inputs;
  if (got.input_dim != s.input_dim || got.action_dim != s.action_dim || got.hidden1 != s.hidden1 ||
      got.hidden2 != s.hidden2 || got.masked_inputs != s.masked_inputs)
    in.fail("td3 agent of shape (" + shape_text(got) + "), expected (" + shape_text(s) + ")");
  const std::vector<td3_format::TensorSpec> specs = td3_format::td3_tensors(h);
  std::size_t next = 0;
  load_params(in, *actor_, specs, &next);
  load_params(in, *critic1_, specs, &next);
  load_params(in, *critic2_, specs, &next);
  load_params(in, *actor_target_, specs, &next);
  load_params(in, *critic1_target_, specs, &next);
  load_params(in, *critic2_target_, specs, &next);
  if (fused_) {
    fused_->actor_adam().load(in);
    fused_->critic_adam().load(in);
    fused_->weights_changed();
  } else if (graph_) {
    graph_->actor_adam().load(in);
    graph_->critic_adam().load(in);
  } else {
    load_adam(in, *actor_opt_);
    load_adam(in, *critic_opt_);
  }
  counter_ = h.counter;
  rng_.set_state(h.rng);
}

void save_adam_moments(ByteWriter& out, std::int64_t steps, const std::vector<torch::Tensor>& m,
                       const std::vector<torch::Tensor>& v) {
  for (std::size_t k = 0; k < m.size(); ++k) {
    td3_format::write_adam_step(out, steps);
    if (steps == 0) continue;
    save_tensor(out, m[k]);
    save_tensor(out, v[k]);
  }
}

std::int64_t load_adam_moments(ByteReader& in, std::vector<torch::Tensor>& m, std::vector<torch::Tensor>& v) {
  std::int64_t step = -1;
  for (std::size_t k = 0; k < m.size(); ++k) {
    const std::int64_t s = td3_format::read_adam_step(in);
    if (s > 0) {
      load_tensor(in, m[k], "Adam first moment");
      load_tensor(in, v[k], "Adam second moment");
    } else {
      torch::NoGradGuard no_grad;
      m[k].zero_();
      v[k].zero_();
    }
    if (step >= 0 && s != step)
      in.fail("Adam steps differ between parameters (" + std::to_string(step) + " and " + std::to_string(s) + ")");
    step = s;
  }
  return std::max<std::int64_t>(step, 0);
}

void save_tensor(ByteWriter& out, const torch::Tensor& t) {
  const auto host = t.detach().to(torch::kCPU, torch::kFloat).contiguous();
  put_floats(out, host.data_ptr<float>(), static_cast<std::size_t>(host.numel()));
}

void load_tensor(ByteReader& in, torch::Tensor& t, const std::string& what) {
  auto host = torch::empty(t.sizes(), torch::kFloat);
  get_floats(in, host.data_ptr<float>(), static_cast<std::size_t>(t.numel()), what);
  torch::NoGradGuard no_grad;
  t.copy_(host);
}

}  // namespace ringrl::td3
