// FusedTd3: the CPU form of Td3Agent::update() (td3.h), with the backward passes written out
// by hand instead of taken from autograd.
//
// Contract:
// * It computes what td3.h's update contract says, on the agent's own parameter tensors (it
//   holds views of the modules' weights and writes them in place): the same target, the same
//   Huber loss and gradients, the same Adam arithmetic (either form of td3.h, no weight
//   decay) and zero-gradient actor steps, the same soft update. Results
//   agree with the autograd path to float rounding, not bit for bit (GEMMs sum in another
//   order); a given FusedTd3 is deterministic, so its own checkpoints resume bit-identically.
// * Why: at batch 100 the eager path spends a large share of an update in per-op dispatch,
//   autograd bookkeeping, allocation and the optimiser's per-tensor ops. Here every buffer is
//   allocated once per batch size, each linear layer is one GEMM with the bias folded in,
//   ReLU masks and bias gradients are single passes, and Adam and the soft update are one
//   loop per tensor. act() runs the actor over row chunks that stay in L2 (the relabel pass
//   feeds it B*K*c = 10,000 rows).
// * CPU only; float32, contiguous batches. One thread uses an instance.
// * AdamState keeps the per-parameter moments and a shared step count; save()/load() use the
//   per-parameter layout of Td3Agent's autograd path (flag, step, m, v), so checkpoints move
//   between the two paths. Its moments are flushed to 0 below FLT_MIN (the .cc says why).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "common/byte_codec.h"
#include "learner/td3/td3.h"

namespace ringrl::td3 {

/// Adam over a fixed list of CPU parameter tensors, in either form of td3.h.
class AdamState {
 public:
  AdamState(std::vector<torch::Tensor> params, double lr, AdamForm form);
  /// One step with `grads` (same order and shapes as the parameters).
  void step(const std::vector<torch::Tensor>& grads);
  /// One step with a zero gradient: the moments decay, the count advances, the parameters
  /// move by the decayed first moment (the reference's off-step actor update, td3.h).
  void step_zero();
  std::int64_t steps() const noexcept { return step_; }
  /// A copy of the step count and the moments.
  AdamSnapshot snapshot() const;
  void save(ByteWriter& out) const;
  void load(ByteReader& in);

 private:
  std::vector<torch::Tensor> params_, m_, v_;
  double lr_;
  AdamForm form_;
  std::int64_t step_ = 0;
};

class FusedTd3 {
 public:
  /// Views of the agent's networks; the modules must outlive this object.
  FusedTd3(const Td3Options& options, Actor& actor, Critic& q1, Critic& q2, Actor& actor_target, Critic& q1_target,
           Critic& q2_target);

  /// Critic step on `b` with standard-normal draws `eps` [B, act] (host): returns the loss.
  float critic_step(const Td3Batch& b, const torch::Tensor& eps);
  /// Actor step on b.x through the (just updated) Q1: returns -mean Q1(x, mu(x)).
  float actor_step(const torch::Tensor& x);
  /// The off-step actor update of actor_zero_grad_steps: one Adam step with a zero gradient.
  void actor_zero_grad_step() { actor_adam_.step_zero(); }
  /// theta_targ <- (1 - tau) theta_targ + tau theta for the actor and both critics.
  void soft_update();
  /// The online actor on [N, input_dim] rows: [N, act], no autograd.
  torch::Tensor act(const torch::Tensor& x);

  AdamState& actor_adam() noexcept { return actor_adam_; }
  AdamState& critic_adam() noexcept { return critic_adam_; }
  const AdamState& actor_adam() const noexcept { return actor_adam_; }
  const AdamState& critic_adam() const noexcept { return critic_adam_; }

 private:
  struct Layer {
    torch::Tensor w, b;  // [out, in], [out]
  };
  struct Net {
    Layer l1, l2, l3;
    std::vector<torch::Tensor> tensors() const { return {l1.w, l1.b, l2.w, l2.b, l3.w, l3.b}; }
  };
  struct CriticWork {
    torch::Tensor in2, h2, q, dq, dz2, dz1;  // [B, H1+act], [B, H2], [B, 1], [B, 1], [B, H2], [B, H1]
  };
  struct ActorWork {
    torch::Tensor xin, h1, h2, t, mu, dz3, dz2, dz1;  // xin: masked input; t: tanh of the output layer
  };

  static Net view_of(torch::nn::Linear& fc1, torch::nn::Linear& fc2, torch::nn::Linear& out);
  static Net grads_like(const Net& n);
  void ensure_batch(std::int64_t rows);
  // in1 <- [x with the masked columns 0, a]: the critics' first-layer input.
  void critic_input(const torch::Tensor& x, const torch::Tensor& a, torch::Tensor& in1) const;
  // The actor on ws.xin (already masked) into ws.h1, ws.h2, ws.t, ws.mu.
  void actor_forward(const Net& n, ActorWork& ws) const;
  // One critic on in1; activations kept in ws; Q into ws.q.
  void critic_forward(const Net& n, const torch::Tensor& in1, CriticWork& ws) const;
  // Backward from ws.dq: weight gradients into `g` when not null, dQ/da into `d_action` when
  // not null.
  void critic_backward(const Net& n, const torch::Tensor& in1, CriticWork& ws, Net* g, torch::Tensor* d_action) const;

  Td3Options options_;
  int in_, act_, h1_, h2_, masked_;
  Net actor_, q1_, q2_, actor_t_, q1_t_, q2_t_;
  Net actor_g_, q1_g_, q2_g_;
  std::vector<float> mid_, half_;  // the action box
  AdamState actor_adam_, critic_adam_;
  std::int64_t rows_ = -1;
  torch::Tensor in1_, d_action_, y_;
  CriticWork w1_, w2_;
  ActorWork aw_;
};

}  // namespace ringrl::td3
