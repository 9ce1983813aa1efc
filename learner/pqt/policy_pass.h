// PolicyPass: the policy's training pass on the CPU without autograd (spec brain_coder §5.1,
// §5.3): the teacher-forced forward, the log-softmax head, and a hand-written backward to the
// gradient of every parameter. The eager path (Policy::forward, losses.h, autograd) computes
// the same numbers; tests/learner/pqt/policy_pass_test.cc holds them together.
//
// Contract:
// * forward(tokens, groups): tokens [G n, T] int64 on the CPU, n = rows / groups; rows
//   [g n, (g + 1) n) are group g. Inputs are the tokens shifted right with EOS first (as
//   Policy::forward). Afterwards action_log_probs() and entropy_steps() are [G n, T]:
//   log pi(a_it) and -sum_a pi log pi (clamped at kEntropyLogFloor, as losses.h), EOS masked as
//   the policy's options say.
// * backward(ca, ce): for a loss whose derivative is ca = dL/dlog pi(a_it) and
//   ce = dL/dH_it (both [G n, T], constants), writes each group's gradient of L restricted to
//   that group's rows, in blob order (embedding, (kernel, bias) per layer, output), into
//   group_grads(g); the embedding gradient is dense (rows not looked up are 0). lookup_sq(g)
//   is the sum of squares of the per-lookup embedding gradients (how TF's global norm counts an
//   IndexedSlices gradient). One group gives the gradient of the whole batch.
// * group_input_tokens(g): the embedding rows group g looked up, one per position, in no
//   particular order.
// * Every buffer is allocated on the first pass of a shape and kept; a pass allocates nothing
//   else of that size. The LSTM layers and the head run learner/pqt/policy_kernels.h; GEMMs run
//   through LibTorch (MKL).
// * Threads: forward() reads torch's intra-op thread count N (the learner's threads). With
//   N = 1 the pass runs on the calling thread. With N > 1 every group's rows are cut into
//   S = min(rows per group, kShardsPerThread N) shards of near-equal size. Rows never mix (the
//   recurrence, the head and the loss are row by row), so each shard is a pass of its own, and
//   the shards run as oneTBB tasks on N threads, taken as threads come free: a thread that an
//   actor process preempts holds up only the shard it has. BLAS runs single-threaded inside
//   them, and each task runs in the caller's floating-point mode (subnormals flushed or not).
//   A group's gradient is the sum of its shards' in shard order, so the numbers do not depend
//   on the scheduling; they differ from one shard's by float summation order only.
// * The policy's parameters are read at each call (no copy); the pass never writes them.
// * CPU and float32 only (PolicyPass::supports says whether a policy qualifies).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "learner/pqt/policy.h"

namespace ringrl::learner {

class PolicyPass {
 public:
  /// Shards per learner thread: enough that a preempted thread leaves the others work.
  static constexpr int kShardsPerThread = 2;

  explicit PolicyPass(Policy policy);
  ~PolicyPass();
  PolicyPass(const PolicyPass&) = delete;
  PolicyPass& operator=(const PolicyPass&) = delete;

  static bool supports(const Policy& policy);

  void forward(const torch::Tensor& tokens, int groups = 1);
  /// [G n, T] (safe to keep across passes).
  torch::Tensor action_log_probs() const;
  torch::Tensor entropy_steps() const;
  torch::Tensor group_input_tokens(int g) const;

  void backward(const torch::Tensor& ca, const torch::Tensor& ce);
  const std::vector<torch::Tensor>& group_grads(int g) const;
  double lookup_sq(int g) const;

  /// Shards of the last forward (1 on one thread).
  int shards() const { return static_cast<int>(active_); }

 private:
  class Shard;    // the pass over one row range (policy_pass.cc)
  struct Threads;  // the shards' TaskArena (learner/task_arena.h)
  template <typename Fn>
  void run_shards(const Fn& fn);

  Policy policy_;
  std::vector<std::unique_ptr<Shard>> shards_;
  std::vector<torch::Tensor> shard_rows_;  // int64 indices into the [G n] rows, per shard
  std::size_t active_ = 0;                 // shards of the last forward
  std::unique_ptr<Threads> threads_;
  int groups_ = 0, n_ = 0, steps_ = 0;
  // Merged results (S > 1).
  torch::Tensor alp_, ent_;                        // [G n, T]
  std::vector<std::vector<torch::Tensor>> grads_;  // [G][blob tensor]
  std::vector<double> lookup_sq_;
};

}  // namespace ringrl::learner
