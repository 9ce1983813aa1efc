// bench_sampler: programs/s on one core of the dedicated LstmSampler vs the plain LibTorch
// TorchReferenceSampler, same random blob, same B/T/eos, measured in one process in
// alternating rounds. Torch-free header (for `ringrl bench npe`). Sets torch to 1 thread.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "actors/pqt/lstm_sampler.h"

namespace ringrl::actors {

struct SamplerBenchOptions {
  PolicyShape shape{};
  SamplerOptions sampler{};  // B=64, T=100, eos off
  double seconds = 2.0;      // per sampler, split over rounds
  int rounds = 3;
  bool all_isas = false;  // also time every available ISA variant of LstmSampler
};

struct SamplerBenchResult {
  std::string isa;                      // variant used for `dedicated`
  double dedicated_programs_per_s = 0;  // LstmSampler
  double torch_programs_per_s = 0;      // TorchReferenceSampler
  double dedicated_ms_per_batch = 0;
  double torch_ms_per_batch = 0;
  double speedup = 0;                                                  // dedicated / torch
  std::vector<std::pair<std::string, double>> per_isa_programs_per_s;  // with all_isas
};

/// Runs the benchmark for `seconds` per side (see options for the rest).
SamplerBenchResult bench_sampler(double seconds);
SamplerBenchResult bench_sampler(const SamplerBenchOptions& options);

}  // namespace ringrl::actors
