// FusedTd3: the CPU form of Td3Agent::update() (td3.h), with the backward passes written out
// by hand instead of taken from autograd, on the learner's threads (task_arena.h).
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
//   allocated once per batch size, each linear layer is one GEMM per task (BLAS's sgemm_
//   called directly, without torch's per-call dispatch) with the bias folded in, ReLU masks and bias gradients are single passes, and Adam and the soft update
//   are one loop per parameter range. act() runs the actor over row chunks that stay in L2
//   (the relabel pass feeds it B*K*c = 10,000 rows).
// * Threads: every pass is cut into tasks that the arena runs on its threads, and the cut
//   depends on the shapes only, never on the thread count, so 1 and N threads give the same
//   bits (each output element is computed by one task, in the same summation order):
//     - rows: the forward passes and the input-side backward (dQ -> dz2 -> dz1, dQ/da, the
//       actor's dz3 -> dz2 -> dz1) are row by row, so the batch is cut into R row blocks
//       (R = the largest power of two <= rows / kBlockRows, at most kMaxRowBlocks) and each
//       block runs the whole chain, one GEMM per layer, in one task;
//     - units: a weight gradient sums over the rows, so it is cut by output unit instead:
//       U = min(hidden1, hidden2) / kUnitsPerBlock (at least 1) blocks of each hidden
//       layer's units (the rows of its weight matrix and its bias entries; the output layer
//       goes with block 0), one task per (network, block) computing those gradient rows and
//       then their Adam step;
//     - chunks: the soft update and the zero-gradient Adam step are elementwise, cut into
//       near-equal chunks of about kChunkFloats parameters;
//     - act(): chunks of kActChunkRows rows, the scratch per thread.
//   Losses are summed on the calling thread in row order, as before the cut.
// * Precision bf16 (td3.h): the products with inner and output dimensions >= 64 go to MKL's
//   cblas_gemm_bf16bf16f32 with float32 sums. Their activation operands are rounded to
//   bfloat16 (to nearest even) per product, in the calling task's scratch; each network's
//   hidden-to-hidden weight, the one weight such a product reads, has a bfloat16 copy, made
//   where the weight changes: by the task that takes the Adam step on a block of its rows
//   (or a chunk of its zero-gradient step), by the soft update's chunk, and in full at
//   construction and by weights_changed(), which whoever writes the networks' weights from
//   outside (Td3Agent::load) calls. Still deterministic and independent of the thread count.
// * CPU only; float32, contiguous batches. One thread calls an instance (its tasks run on the
//   arena's threads).
// * AdamState keeps the per-parameter moments and a shared step count; save()/load() use the
//   per-parameter layout of Td3Agent's autograd path (flag, step, m, v), so checkpoints move
//   between the two paths. Its moments are flushed to 0 below FLT_MIN (the .cc says why).
#pragma once

#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "common/byte_codec.h"
#include "learner/task_arena.h"
#include "learner/td3/td3.h"

namespace ringrl::td3 {

using learner::TaskArena;


namespace fused_detail {
/// The constants of one Adam step (td3_fused.cc: adam_constants).
struct AdamConstants {
  float b1, b2, one_b1, one_b2, sqrt_bc2, eps, step_size;
};
/// A bfloat16 copy of one float32 weight (precision bf16), in the weight's layout.
struct Bf16Mirror {
  torch::Tensor src;
  std::vector<std::uint16_t> bf;
};
using Bf16Mirrors = std::vector<Bf16Mirror>;
}  // namespace fused_detail

/// Adam over a fixed list of CPU parameter tensors, in either form of td3.h. A step is
/// begin_step() once, then apply() over every parameter element once (in any order, from any
/// thread, each element from one).
class AdamState {
 public:
  AdamState(std::vector<torch::Tensor> params, double lr, AdamForm form);
  /// Advances the step count; the constants of the new step.
  fused_detail::AdamConstants begin_step();
  /// The step on elements [begin, end) of parameter k, with `grad` their gradient (grad[0]
  /// belongs to element `begin`), or a zero gradient when `grad` is null (the reference's
  /// off-step actor update, td3.h).
  void apply(const fused_detail::AdamConstants& c, std::size_t k, std::int64_t begin, std::int64_t end,
             const float* grad) const;
  std::size_t size() const noexcept { return params_.size(); }
  const torch::Tensor& param(std::size_t k) const { return params_[k]; }
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
  /// Rows per row block, at least (contract: the row cut).
  static constexpr std::int64_t kBlockRows = 50;
  static constexpr int kMaxRowBlocks = 16;
  /// Hidden units per unit block, at least (contract: the unit cut).
  static constexpr int kUnitsPerBlock = 128;
  /// Parameters per elementwise chunk (soft update, zero-gradient Adam), about: ~40 us of work.
  static constexpr std::int64_t kChunkFloats = 131072;
  /// Rows of act() per chunk: a [chunk, 300] activation is 300 KB, so both stay in L2.
  static constexpr std::int64_t kActChunkRows = 256;

  /// Views of the agent's networks; the modules and `arena` must outlive this object.
  FusedTd3(const Td3Options& options, Actor& actor, Critic& q1, Critic& q2, Actor& actor_target, Critic& q1_target,
           Critic& q2_target, TaskArena& arena);

  /// Critic step on `b` with standard-normal draws `eps` [B, act] (host): returns the loss.
  float critic_step(const Td3Batch& b, const torch::Tensor& eps);
  /// Actor step on b.x through the (just updated) Q1: returns -mean Q1(x, mu(x)).
  float actor_step(const torch::Tensor& x);
  /// The off-step actor update of actor_zero_grad_steps: one Adam step with a zero gradient.
  void actor_zero_grad_step();
  /// theta_targ <- (1 - tau) theta_targ + tau theta for the actor and both critics.
  void soft_update();
  /// The online actor on [N, input_dim] rows: [N, act], no autograd.
  torch::Tensor act(const torch::Tensor& x);
  /// act() on the rows a[ia[r]] + b[ib[r]] (a [Na, input_dim], b [Nb, input_dim], ia and ib
  /// int64 [N] in range): the first layer is linear, so it runs once over a's rows and once
  /// over b's (two tasks), and each output row adds one of each before the bias and ReLU; the
  /// rest is act()'s chunked pass. HIRO's relabel pass has N = B*K*c = 10,000 rows from
  /// B*c + B*K = 2,000 table rows.
  torch::Tensor act_on_sums(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& ia,
                            const torch::Tensor& ib);

  /// After the networks' weights were written from outside (a checkpoint loaded): precision
  /// bf16 makes its bfloat16 copies anew; nothing with float32.
  void weights_changed();

  /// Row blocks of a batch of `rows` (the row cut).
  static int row_blocks(std::int64_t rows) noexcept;
  /// Unit blocks of the hidden layers (the unit cut).
  int unit_blocks() const noexcept { return units_; }

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
  // Views of the work buffers over rows [first, first + rows) (one row block).
  struct Block {
    std::int64_t first = 0, rows = 0;
    torch::Tensor in1, d_action;
    CriticWork w1, w2;
    ActorWork aw;
  };
  // Elements [begin, end) of tensor k of a list.
  struct Piece {
    std::size_t k;
    std::int64_t begin, end;
  };
  using Chunks = std::vector<std::vector<Piece>>;  // one task's pieces per entry

  static Net view_of(torch::nn::Linear& fc1, torch::nn::Linear& fc2, torch::nn::Linear& out);
  static Net grads_like(const Net& n);
  static Chunks chunks_of(const std::vector<torch::Tensor>& tensors);
  void ensure_batch(std::int64_t rows);
  // in1 <- [x with the masked columns 0, a]: the critics' first-layer input.
  void critic_input(const torch::Tensor& x, const torch::Tensor& a, torch::Tensor& in1) const;
  // The actor on ws.xin (already masked) into ws.h1, ws.h2, ws.t, ws.mu.
  void actor_forward(const Net& n, ActorWork& ws) const;
  // Its layers after the first: ws.h1 into ws.h2, ws.t, ws.mu.
  void actor_tail(const Net& n, ActorWork& ws) const;
  // act()'s per-slot scratch of kActChunkRows rows, and one chunk's views of it (mu: out's rows).
  void ensure_act_scratch();
  ActorWork act_chunk(int slot, std::int64_t first, std::int64_t n, torch::Tensor& out) const;
  // One critic on in1; activations kept in ws; Q into ws.q.
  void critic_forward(const Net& n, const torch::Tensor& in1, CriticWork& ws) const;
  // Row-wise backward from ws.dq to ws.dz2 and ws.dz1, and dQ/da into `d_action` when not null.
  void critic_backward_rows(const Net& n, CriticWork& ws, torch::Tensor* d_action) const;
  // Units [j-th block] of one network's weight gradients into `g`, then their Adam step
  // (tensors base .. base + 5 of `adam`): layer l gets d[:, units]^T in_l.
  void weight_block(int j, const Net& n, Net& g, const torch::Tensor& d1, const torch::Tensor& in1,
                    const torch::Tensor& d2, const torch::Tensor& in2, const torch::Tensor& d3,
                    const torch::Tensor& in3, const AdamState& adam, std::size_t base,
                    const fused_detail::AdamConstants& c);
  // Precision bf16: the copy of `w` when it has one (else null), and elements [begin, end) of
  // it made anew from `w`.
  fused_detail::Bf16Mirror* mirror_of(const torch::Tensor& w);
  void refresh_bf16(const torch::Tensor& w, std::int64_t begin, std::int64_t end);
  // The copies the products may read: null with float32.
  const fused_detail::Bf16Mirrors* bf16() const noexcept { return bf16_ ? &mirrors_ : nullptr; }
  // The critic step on one row block (everything before the weight gradients).
  void critic_rows(Block& bk, const Td3Batch& b, const float* eps, const float* r);
  // The actor step on one row block (everything before the weight gradients).
  void actor_rows(Block& bk, const torch::Tensor& x);

  Td3Options options_;
  TaskArena& arena_;
  int in_, act_, h1_, h2_, masked_, units_;
  Net actor_, q1_, q2_, actor_t_, q1_t_, q2_t_;
  Net actor_g_, q1_g_, q2_g_;
  std::vector<float> mid_, half_;  // the action box
  AdamState actor_adam_, critic_adam_;
  Chunks actor_chunks_;                             // the actor's parameters
  Chunks soft_chunks_;                              // targets (then online) of all three networks
  std::vector<torch::Tensor> soft_dst_, soft_src_;  // tensor k of soft_chunks_: target, online
  std::int64_t rows_ = -1;
  torch::Tensor in1_, d_action_, y_;
  std::vector<double> huber_;  // [2, B] Huber terms of the critic step, row order
  CriticWork w1_, w2_;
  ActorWork aw_;
  std::vector<Block> blocks_;
  std::vector<ActorWork> act_scratch_;  // act(): one per arena slot
  bool bf16_ = false;
  fused_detail::Bf16Mirrors mirrors_;  // precision bf16: the l2 weight of each of the six networks
};

}  // namespace ringrl::td3
