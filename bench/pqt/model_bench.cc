// model_bench: runs bench_sampler, bench_policy_kernels and bench_learner_step once, serially,
// and prints JSON.
// Not a ctest; `ringrl bench npe` / `ringrl profile learner` call the same functions.
//   model_bench [sampler_seconds] [learner_seconds] [trace.json] [learner_threads] [device]
//               [batches_per_update]
// device (default cpu; auto, cuda:N) and batches_per_update k (default 1) apply to the learner
// step; the sampler and the kernels always run on the CPU. With k > 1 one learner call is k
// updates over k copies of the batch, and updates/s counts each of them (the bare LibTorch
// baselines stay one batch per update). scripts/gpu_check.sh times cuda:0 at k = 1 and 8.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "bench/pqt/kernel_bench.h"
#include "bench/pqt/learner_bench.h"
#include "bench/pqt/sampler_bench.h"

namespace {

int run(int argc, char** argv) {
  const double sampler_s = argc > 1 ? std::atof(argv[1]) : 6.0;
  const double learner_s = argc > 2 ? std::atof(argv[2]) : 20.0;
  const std::string trace = argc > 3 ? argv[3] : "";
  const int threads = argc > 4 ? std::atoi(argv[4]) : 1;
  const std::string device = argc > 5 ? argv[5] : "cpu";
  const int batches_per_update = argc > 6 ? std::atoi(argv[6]) : 1;

  ringrl::actors::SamplerBenchOptions so;  // B=64, T=100, eos off
  so.seconds = sampler_s;
  so.rounds = 3;
  so.all_isas = true;
  const auto s = ringrl::actors::bench_sampler(so);
  std::printf(
      "{\"sampler\": {\"B\": %d, \"T\": %d, \"isa\": \"%s\", "
      "\"dedicated_programs_per_s\": %.0f, \"torch_programs_per_s\": %.0f, "
      "\"dedicated_ms_per_batch\": %.3f, \"torch_ms_per_batch\": %.3f, \"speedup\": %.2f",
      so.sampler.batch_size, so.sampler.max_len, s.isa.c_str(), s.dedicated_programs_per_s, s.torch_programs_per_s,
      s.dedicated_ms_per_batch, s.torch_ms_per_batch, s.speedup);
  for (const auto& [isa, pps] : s.per_isa_programs_per_s) {
    std::printf(", \"%s_programs_per_s\": %.0f", isa.c_str(), pps);
  }
  std::printf("},\n");
  std::fflush(stdout);

  ringrl::learner::LearnerBenchOptions lo;  // paper PQT, B=64, T=100
  lo.learner.device = device;
  lo.learner.batches_per_update = batches_per_update;
  // A PQT update runs B sampled rows and the queue's rows through the kernels.
  const auto kernels = ringrl::learner::bench_policy_kernels(
      lo.learner.shape, lo.learner.batch_size + lo.learner.topk_batch_size, lo.learner.max_len, learner_s / 4);
  std::printf(" \"learner_kernels\": {\"note\": \"ms per update, one thread, LSTM layers and head only\"");
  for (const auto& k : kernels) {
    std::printf(", \"%s_ms\": %.3f", k.isa.c_str(), k.ms_per_update);
    if (k.chosen) std::printf(", \"chosen\": \"%s\"", k.isa.c_str());
  }
  std::printf("},\n");
  std::fflush(stdout);

  ringrl::learner::PhaseProfiler profiler;
  lo.seconds = learner_s;
  lo.rounds = 4;
  lo.threads = threads;
  lo.profiler = trace.empty() ? nullptr : &profiler;
  const auto l = ringrl::learner::bench_learner_step(lo);
  std::printf(
      " \"learner\": {\"mode\": \"pqt\", \"threads\": %d, \"device\": \"%s\", \"batches_per_update\": %d, "
      "\"ours_updates_per_s\": %.3f, "
      "\"bare_updates_per_s\": %.3f, \"bare_fused_updates_per_s\": %.3f, "
      "\"ours_ms\": %.2f, \"bare_ms\": %.2f, \"ratio\": %.3f, \"overhead_ratio\": %.3f, "
      "\"eager_updates_per_s\": %.3f, \"gflop_per_update\": %.4f, \"ours_gflop_per_s\": %.1f, "
      "\"ours_steps\": %ld, \"bare_steps\": %ld, \"bare_fused_steps\": %ld, \"eager_steps\": %ld}}\n",
      threads, l.device.c_str(), batches_per_update, l.ours_updates_per_s, l.bare_updates_per_s, l.bare_fused_updates_per_s,
      l.ours_ms_per_update, l.bare_ms_per_update, l.ratio, l.overhead_ratio, l.eager_updates_per_s,
      l.flops_per_update * 1e-9, l.ours_gflop_per_s, l.ours_steps, l.bare_steps, l.bare_fused_steps, l.eager_steps);
  if (!trace.empty()) {
    profiler.write_chrome_trace(trace);
    std::fputs(profiler.summary_table().c_str(), stderr);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "model_bench: %s\n", e.what());
    return 2;
  }
}
