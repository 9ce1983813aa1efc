// Measurement helpers of `ringrl bench hiro` and `ringrl profile learner --algo hiro` (spec
// hiro.md §3, §9, §13): realistic replay data for the learner alone, the actors' ceiling, the
// learner against the same work written in plain LibTorch, and the FLOP bound of one core.
//
// Contract:
// * fill_replays() runs the collector loop (actors/hiro/hiro_actor.h) with the learner's
//   current actor weights and exploration noise, in-process, and stores every record it makes
//   in the learner's two replays: real kinematic/MuJoCo data of the right shapes.
// * hiro_actor_only_steps_per_s() forks `n` processes that each run the collector loop with
//   fixed weights into a sink that discards the records (no learner, no rings).
// * bench_hiro_learner() times, in one process and interleaved in rounds, HiroLearner's low
//   and high updates (relabelling timed apart through the phase profiler) and, unless asked
//   not to, a plain LibTorch TD3 written with torch::nn::Linear and torch::optim::Adam (eager,
//   same shapes, same replay rows, the same sample-gather-copy per update). Both sides get
//   learner.threads threads: ours on its arena with torch's intra-op threads as the wing sets
//   them (hiro_torch_threads), the plain one on torch's intra-op threads; the previous count
//   comes back afterwards. One env step of work = 1 low update + 1/high_every high update +
//   1/high_every relabel pass.
// * hiro_flops() counts the multiply-adds of the linear layers from the shapes (2 FLOP each;
//   a trained pass = forward + input gradient + weight gradient = 3 x forward; elementwise
//   ops and Adam are left out). gemm_peak_flops() is the best of `reps` torch::mm of n x n
//   matrices on one thread of the CPU, in float32 or (learner_precision bf16) bfloat16.
// * Torch stays out of this header. One thread uses these functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "actors/hiro/hiro_actor.h"
#include "learner/hiro/hiro_learner.h"

namespace ringrl::bench {

/// The learner's device ("cpu", "cuda:0").
std::string hiro_learner_device(hiro::HiroLearner& learner);
/// A hook that waits for the work queued on the learner's device (a no-op on the CPU): the
/// PhaseProfiler's device sync.
std::function<void()> hiro_device_sync(hiro::HiroLearner& learner);

/// Runs `ao`'s collector with `learner`'s current actor weights for whole episodes totalling at
/// least `env_steps` steps; every Transition / MetaTransition goes into the learner's replays.
void fill_replays(hiro::HiroLearner& learner, const actors::HiroActorOptions& ao, std::uint64_t env_steps);

/// Actor-only ceiling: `n` forked collectors with the channel blob `blob` (fixed weights) for
/// `seconds` each at once; their summed env steps per second.
double hiro_actor_only_steps_per_s(const actors::HiroActorOptions& ao, const std::vector<std::byte>& blob,
                                   std::uint32_t n, double seconds);

struct HiroLearnerBenchOptions {
  hiro::HiroOptions learner;        // shapes, hyperparameters, device, seed
  actors::HiroActorOptions actor;   // the collector that makes the replay data
  std::uint64_t data_steps = 2500;  // env steps of replay data (§3's initial collection)
  std::uint32_t high_every = 10;    // env steps per high-level update (§3)
  double seconds = 4.0;             // per side (ours / plain), split over rounds and levels
  int rounds = 2;                   // alternating ours / plain, to share background drift
  int warmup_updates = 3;           // per level and side, untimed
  bool plain = true;                // time the plain LibTorch side too
};

/// Milliseconds per update of one side.
struct Td3Timing {
  double low_ms = 0;      // one low-level update (sample + TD3)
  double high_ms = 0;     // one high-level update without its relabel pass
  double relabel_ms = 0;  // one relabel pass (B x K x c low-actor rows)
  long low_updates = 0, high_updates = 0;
  /// Learner time per env step: low + (high + relabel) / high_every, in ms.
  double ms_per_env_step(std::uint32_t high_every) const {
    return low_ms + (high_ms + relabel_ms) / static_cast<double>(high_every);
  }
};

struct HiroLearnerBenchResult {
  Td3Timing ours, plain;
  double ours_env_steps_per_s = 0;  // 1000 / ours.ms_per_env_step
  double plain_env_steps_per_s = 0;
  double ratio = 0;  // ours / plain env-step equivalents per second (0 without the plain side)
  std::string device;
  int threads = 1;  // the learner's (its arena's)
};

HiroLearnerBenchResult bench_hiro_learner(const HiroLearnerBenchOptions& options);

/// FLOP of the learner's work (see the file comment).
struct HiroFlops {
  double low_update = 0;   // one low-level TD3 update
  double high_update = 0;  // one high-level TD3 update
  double relabel = 0;      // one relabel pass
  double low_per_env_step = 0, high_per_env_step = 0, relabel_per_env_step = 0;
  double per_env_step = 0;
};
HiroFlops hiro_flops(const hiro::HiroOptions& options, std::uint32_t high_every);

/// Env steps per second of a training run after its initial collection, from the run's
/// metrics.csv (step,wall_s,...,env_steps,...): between the first row past `initial_steps`
/// and the last row. Zero rates when fewer than two rows are past it.
struct PostInitialRate {
  double env_steps_per_s = 0;
  std::uint64_t env_steps = 0;  // env steps between the two rows
  double seconds = 0;           // wall time between them
};
PostInitialRate post_initial_rate(const std::string& metrics_csv, std::uint64_t initial_steps);

/// GEMM FLOP/s of one CPU thread: best of `reps` timed n x n torch::mm (after one warm-up), in
/// float32 or, with `bf16`, bfloat16.
double gemm_peak_flops(int n, int reps, bool bf16 = false);

}  // namespace ringrl::bench
