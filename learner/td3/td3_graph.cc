#include "learner/td3/td3_graph.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "common/errors.h"
#include "learner/cuda_support.h"

namespace ringrl::td3 {

namespace {

const char* phase_name(int phase) {
  static const char* const kNames[] = {"critic", "actor", "zero-gradient actor"};
  return kNames[phase];
}

std::vector<torch::Tensor> zeros_like_all(const std::vector<torch::Tensor>& params) {
  std::vector<torch::Tensor> out;
  out.reserve(params.size());
  for (const auto& p : params) out.push_back(torch::zeros_like(p).detach());
  return out;
}

void zero_grads(const std::vector<torch::Tensor>& params) {
  for (const auto& p : params)
    if (p.grad().defined()) p.grad().zero_();  // in place: the buffers a graph captured stay
}

}  // namespace

// ------------------------------------------------------------------------------ DeviceAdam

DeviceAdam::DeviceAdam(std::vector<torch::Tensor> params, double lr, AdamForm form)
    : params_(std::move(params)), lr_(lr), form_(form) {
  m_ = zeros_like_all(params_);
  v_ = zeros_like_all(params_);
  const torch::Device device = params_.empty() ? torch::Device(torch::kCPU) : params_.front().device();
  t_ = torch::zeros({1}, torch::TensorOptions().dtype(torch::kDouble).device(device));
}

void DeviceAdam::step(bool zero_gradient) {
  torch::NoGradGuard no_grad;
  // Step t's constants, on the device in double: alpha_t = lr sqrt(1 - b2^t) / (1 - b1^t) in
  // both forms; eps_t = eps (TensorFlow) or eps sqrt(1 - b2^t) (PyTorch's form rewritten with
  // sqrt(v) in the denominator, td3.h).
  t_.add_(1.0);
  const auto bc1 = 1.0 - torch::pow(kAdamBeta1, t_);
  const auto sqrt_bc2 = torch::sqrt(1.0 - torch::pow(kAdamBeta2, t_));
  const auto alpha = (lr_ * sqrt_bc2 / bc1).to(torch::kFloat);
  const auto eps = (form_ == AdamForm::kTensorFlow ? torch::full_like(sqrt_bc2, kAdamEpsilon) : kAdamEpsilon * sqrt_bc2)
                       .to(torch::kFloat);
  for (std::size_t k = 0; k < params_.size(); ++k) {
    m_[k].mul_(kAdamBeta1);
    v_[k].mul_(kAdamBeta2);
    if (!zero_gradient) {
      const auto& g = params_[k].grad();
      m_[k].add_(g, 1.0 - kAdamBeta1);
      v_[k].addcmul_(g, g, 1.0 - kAdamBeta2);
    }
    params_[k].sub_(alpha * m_[k] / (v_[k].sqrt() + eps));
  }
  ++step_;
}

AdamSnapshot DeviceAdam::snapshot() const {
  AdamSnapshot s;
  s.steps = step_;
  for (std::size_t k = 0; k < params_.size(); ++k) {
    s.m.push_back(m_[k].to(torch::kCPU).clone());
    s.v.push_back(v_[k].to(torch::kCPU).clone());
  }
  return s;
}

void DeviceAdam::save(ByteWriter& out) const { save_adam_moments(out, step_, m_, v_); }

void DeviceAdam::load(ByteReader& in) {
  step_ = load_adam_moments(in, m_, v_);
  t_.fill_(static_cast<double>(step_));
}

// -------------------------------------------------------------------------------- GraphTd3

GraphTd3::GraphTd3(const Td3Options& options, Td3Agent& agent, bool capture)
    : options_(options),
      agent_(agent),
      capture_(capture),
      device_index_(agent.device().is_cuda() ? agent.device().index() : -1),
      actor_adam_(agent.actor()->parameters(), options.actor_lr, options.adam_form),
      critic_adam_(
          [&agent] {
            auto p = agent.critic1()->parameters();
            for (auto& q : agent.critic2()->parameters()) p.push_back(q);
            return p;
          }(),
          options.critic_lr, options.adam_form) {
  if (capture_ && !agent.device().is_cuda())
    throw UsageError("td3: CUDA graphs need a CUDA device, not " + agent.device().str());
  if (capture_ && device_index_ < 0) device_index_ = 0;
}

GraphTd3::~GraphTd3() = default;

int GraphTd3::graphs_captured() const noexcept {
  int n = 0;
  for (const auto& g : graphs_) n += g && g->captured() ? 1 : 0;
  return n;
}

void GraphTd3::ensure_batch(std::int64_t rows) {
  if (rows == rows_) return;
  const auto f = torch::TensorOptions().dtype(torch::kFloat).device(agent_.device());
  const auto& s = options_.shape;
  x_ = torch::zeros({rows, s.input_dim}, f);
  a_ = torch::zeros({rows, s.action_dim}, f);
  r_ = torch::zeros({rows}, f);
  x_next_ = torch::zeros({rows, s.input_dim}, f);
  eps_ = torch::zeros({rows, s.action_dim}, f);
  critic_loss_ = torch::zeros({}, f);
  actor_loss_ = torch::zeros({}, f);
  for (auto& g : graphs_) g.reset();  // they captured the old buffers
  rows_ = rows;
}

void GraphTd3::run(Phase phase, const std::function<void()>& work) {
  if (!capture_) {
    work();
    return;
  }
  auto& g = graphs_[phase];
  if (!g) g = std::make_unique<learner::CudaGraph>(device_index_, kGraphWarmup);
  try {
    g->run(work);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("td3: the ") + phase_name(phase) + " phase as a CUDA graph: " + e.what() +
                             " (cuda_graphs=off runs without graphs)");
  }
}

torch::Tensor GraphTd3::critic_step(const Td3Batch& b, const torch::Tensor& eps) {
  ensure_batch(b.x.size(0));
  {
    torch::NoGradGuard no_grad;
    x_.copy_(b.x);
    a_.copy_(b.a);
    r_.copy_(b.r);
    x_next_.copy_(b.x_next);
    eps_.copy_(eps);
  }
  run(kCriticPhase, [this] {
    const auto y = agent_.target_q(r_, x_next_, eps_);
    zero_grads(agent_.critic1()->parameters());
    zero_grads(agent_.critic2()->parameters());
    const auto loss = agent_.critic_loss(x_, a_, y);
    loss.backward();
    critic_adam_.step(false);
    torch::NoGradGuard no_grad;
    critic_loss_.copy_(loss.detach());
  });
  return critic_loss_.clone();
}

torch::Tensor GraphTd3::actor_step() {
  run(kActorPhase, [this] {
    zero_grads(agent_.actor()->parameters());
    const auto loss = agent_.actor_loss(x_);
    loss.backward();
    actor_adam_.step(false);
    torch::NoGradGuard no_grad;
    actor_loss_.copy_(loss.detach());
    agent_.soft_update();
  });
  return actor_loss_.clone();
}

void GraphTd3::actor_zero_grad_step() {
  run(kZeroPhase, [this] { actor_adam_.step(true); });
}

}  // namespace ringrl::td3
