// bench_learner_step: updates/s of PqtLearner::step vs a bare LibTorch forward + backward +
// optimizer step on the same batch, measured in one process, interleaved in rounds.
//
// Two bare baselines, both with the same loss formula, autograd backward and
// torch::optim::RMSprop (dense), and without batch building, clipping, sparse rows,
// baselines, queue or stats:
// * bare: the plain LibTorch LSTM (per-step autograd ops, Policy::forward_reference);
// * bare_fused: the same fused LSTM layer function PqtLearner's eager path uses.
// And PqtLearner itself with policy_kernel eager (autograd, the per-ISA LSTM layer kernels),
// against ours at the options' policy_kernel (auto: the fused pass on the CPU).
// With learner.batches_per_update k > 1, ours and eager take k copies of the batch per call
// (PqtLearner::step(batches), one pass over k B rows) and count k updates per call; the bare
// baselines stay one batch per update, so ratio compares updates (batches) per second.
// Torch-free header (for `ringrl bench npe` / `ringrl profile learner`).
// Sets torch to `threads` intra-op threads for the duration (restored afterwards).
#pragma once

#include <string>

#include "learner/pqt/pqt_update.h"

namespace ringrl::learner {

struct LearnerBenchOptions {
  LearnerOptions learner = LearnerOptions::paper(TrainMode::kPqt);  // B=64, T=100, auto device, k=1
  double seconds = 3.0;                                             // per side, split over rounds
  int rounds = 3;  // alternating ours / bare, to share any background drift
  int warmup_steps = 3;
  int threads = 1;
  PhaseProfiler* profiler = nullptr;  // optional: phases of our step
};

struct LearnerBenchResult {
  double ours_updates_per_s = 0.0;
  double bare_updates_per_s = 0.0;
  double ours_ms_per_update = 0.0;
  double bare_ms_per_update = 0.0;
  double bare_fused_updates_per_s = 0.0;
  double eager_updates_per_s = 0.0;  // PqtLearner, policy_kernel eager
  double flops_per_update = 0.0;     // forward + backward GEMM FLOPs (pqt_update_flops)
  double ours_gflop_per_s = 0.0;
  double ratio = 0.0;           // ours / bare (plain LibTorch) updates per second
  double overhead_ratio = 0.0;  // ours / bare_fused (1.0 = nothing around fwd/bwd costs)
  long ours_steps = 0;
  long bare_steps = 0;
  long bare_fused_steps = 0;
  long eager_steps = 0;
  std::string device;
};

LearnerBenchResult bench_learner_step(const LearnerBenchOptions& options);

/// FLOPs of one update's GEMMs (forward, and backward to inputs and weights: 3x the forward)
/// over `rows` programs of T steps: per position 2 (in_l + h_l) 4 h_l per layer and 2 h V for
/// the output. The elementwise work is left out.
double pqt_update_flops(const PolicyShape& shape, int rows, int steps);

}  // namespace ringrl::learner
