// GraphTd3: Td3Agent::update() (td3.h) as a fixed sequence of tensor operations on buffers
// allocated once per batch size, so that on CUDA each phase of the update is captured once as
// a CUDA graph (learner/cuda_support.h: CudaGraph) and then replayed: one launch per phase
// instead of a few hundred kernel launches, each with its dispatch and autograd bookkeeping.
//
// Contract:
// * It computes what td3.h's update contract says, on the agent's own modules: the critic
//   loss and the actor loss are Td3Agent's (target_q, critic_loss, actor_loss), the gradients
//   come from autograd, and Adam is DeviceAdam below (either form of td3.h). Results agree
//   with the eager kernel to float rounding.
// * Three phases, each its own graph: critic (target, loss, backward, Adam on both critics),
//   actor (loss through the just-updated Q1, backward, Adam, then the soft update of all three
//   targets) and zero (the off-step actor update of actor_zero_grad_steps). The caller decides
//   which phases an update runs (Td3Agent::update: the period); no host value that changes
//   between updates enters a graph.
// * Inputs: critic_step() copies the batch into the phase buffers (device to device) and the
//   smoothing draws `eps` from the host (one blocking copy of B x act floats per update: the
//   draws come from the agent's Rng, so the random stream is the one the CPU kernels use);
//   actor_step() uses the x of the last critic_step(). A batch of another size reallocates
//   the buffers and drops the captured graphs (they are captured again).
// * Capture: with `capture` (a CUDA device), each phase runs directly for its first
//   kGraphWarmup calls (real updates, on a side stream), is captured on the next call and
//   replayed from then on; a failed capture throws std::runtime_error naming the phase (the
//   run stops; cuda_graphs=off runs without graphs). Without `capture` (the CPU: tests) the
//   same sequence runs directly every time.
// * The losses come back as device scalars (copies, so a later replay does not change them).
// * DeviceAdam keeps m, v and the step count on the device: a step's constants (lr_t and
//   eps_t of the form) are computed there from the step count, so a captured step stays
//   right at every later step. save()/load() use the per-parameter layout (flag, step, m, v)
//   of the other kernels, so checkpoints move between kernels and devices.
// * One thread uses an instance.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "common/byte_codec.h"
#include "learner/td3/td3.h"

namespace ringrl::learner {
class CudaGraph;
}

namespace ringrl::td3 {

/// Adam over a fixed list of parameter tensors (any one device), with its state on that device.
class DeviceAdam {
 public:
  DeviceAdam(std::vector<torch::Tensor> params, double lr, AdamForm form);
  /// One step from the parameters' .grad(), or with a zero gradient when `zero_gradient`
  /// (then .grad() is not read). Device operations only (capturable).
  void step(bool zero_gradient);
  std::int64_t steps() const noexcept { return step_; }
  /// A copy of the step count and the moments, on the host.
  AdamSnapshot snapshot() const;
  void save(ByteWriter& out) const;
  void load(ByteReader& in);

 private:
  std::vector<torch::Tensor> params_, m_, v_;
  torch::Tensor t_;  // the step count, double [1] on the device (advanced inside step())
  double lr_;
  AdamForm form_;
  std::int64_t step_ = 0;  // the host's copy of t_
};

class GraphTd3 {
 public:
  /// Calls of a phase that run directly before it is captured.
  static constexpr int kGraphWarmup = 3;

  /// `agent` owns the modules and must outlive this object; `capture` needs a CUDA device.
  GraphTd3(const Td3Options& options, Td3Agent& agent, bool capture);
  ~GraphTd3();

  /// The critic phase on `b` with standard-normal draws `eps` [B, act] (any device): the loss.
  torch::Tensor critic_step(const Td3Batch& b, const torch::Tensor& eps);
  /// The actor phase on the last critic_step()'s x, then the soft update: the actor loss.
  torch::Tensor actor_step();
  /// The zero phase: one actor Adam step with a zero gradient.
  void actor_zero_grad_step();

  /// True when the phases are captured as CUDA graphs (after their warm-up).
  bool captures() const noexcept { return capture_; }
  /// Phases captured so far (0 to 3).
  int graphs_captured() const noexcept;

  DeviceAdam& actor_adam() noexcept { return actor_adam_; }
  DeviceAdam& critic_adam() noexcept { return critic_adam_; }
  const DeviceAdam& actor_adam() const noexcept { return actor_adam_; }
  const DeviceAdam& critic_adam() const noexcept { return critic_adam_; }

 private:
  enum Phase { kCriticPhase, kActorPhase, kZeroPhase, kPhases };
  void ensure_batch(std::int64_t rows);
  void run(Phase phase, const std::function<void()>& work);

  Td3Options options_;
  Td3Agent& agent_;
  bool capture_;
  int device_index_;
  DeviceAdam actor_adam_, critic_adam_;
  std::int64_t rows_ = -1;
  torch::Tensor x_, a_, r_, x_next_, eps_;    // phase inputs
  torch::Tensor critic_loss_, actor_loss_;  // phase outputs (device scalars)
  std::unique_ptr<learner::CudaGraph> graphs_[kPhases];
};

}  // namespace ringrl::td3
