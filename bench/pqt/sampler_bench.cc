#include "bench/pqt/sampler_bench.h"

#include <torch/torch.h>

#include <chrono>
#include <random>

#include "actors/pqt/torch_reference_sampler.h"

namespace ringrl::actors {

namespace {

using Clock = std::chrono::steady_clock;

/// A blob with the policy's init ranges (values only matter for realism, not timing).
std::vector<float> random_blob(const PolicyLayout& layout, std::uint64_t seed) {
  std::vector<float> blob(layout.num_floats(), 0.0f);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-0.3f, 0.3f);
  for (const auto& t : layout.tensors()) {
    for (std::size_t k = 0; k < t.numel(); ++k) blob[t.offset + k] = u(rng);
  }
  return blob;
}

/// Runs `fn` repeatedly for `seconds`; returns the number of calls and the time taken.
template <typename Fn>
std::pair<long, double> timed(double seconds, Fn&& fn) {
  const auto start = Clock::now();
  long n = 0;
  double elapsed = 0.0;
  do {
    fn();
    ++n;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  return {n, elapsed};
}

}  // namespace

SamplerBenchResult bench_sampler(double seconds) {
  SamplerBenchOptions o;
  o.seconds = seconds;
  return bench_sampler(o);
}

SamplerBenchResult bench_sampler(const SamplerBenchOptions& options) {
  const int saved_threads = torch::get_num_threads();
  torch::set_num_threads(1);
  SamplerBenchResult r;
  {
    const PolicyLayout layout(options.shape);
    const std::vector<float> blob = random_blob(layout, /*seed=*/12345);
    LstmSampler dedicated(options.shape, options.sampler);
    TorchReferenceSampler reference(options.shape, options.sampler);
    dedicated.set_weights(blob.data(), blob.size());
    reference.set_weights(blob.data(), blob.size());
    r.isa = sampler_isa_name(dedicated.isa());
    SampledBatch out;
    out.resize(options.sampler.batch_size, options.sampler.max_len);
    std::uint64_t seed = 1;
    // Warm up both (first-call allocations, caches).
    dedicated.sample(seed++, &out);
    reference.sample(seed++, &out);

    const int rounds = std::max(options.rounds, 1);
    const double slice = options.seconds / rounds;
    long nd = 0, nt = 0;
    double sd = 0.0, stt = 0.0;
    for (int round = 0; round < rounds; ++round) {
      auto d = timed(slice, [&] { dedicated.sample(seed++, &out); });
      auto t = timed(slice, [&] { reference.sample(seed++, &out); });
      nd += d.first;
      sd += d.second;
      nt += t.first;
      stt += t.second;
    }
    const double b = options.sampler.batch_size;
    r.dedicated_programs_per_s = nd * b / sd;
    r.torch_programs_per_s = nt * b / stt;
    r.dedicated_ms_per_batch = 1e3 * sd / nd;
    r.torch_ms_per_batch = 1e3 * stt / nt;
    r.speedup = r.dedicated_programs_per_s / r.torch_programs_per_s;

    if (options.all_isas) {
      for (SamplerIsa isa : available_sampler_isas()) {
        LstmSampler s(options.shape, options.sampler, isa);
        s.set_weights(blob.data(), blob.size());
        s.sample(seed++, &out);
        auto d = timed(slice, [&] { s.sample(seed++, &out); });
        r.per_isa_programs_per_s.emplace_back(sampler_isa_name(isa), d.first * b / d.second);
      }
    }
  }
  torch::set_num_threads(saved_threads);
  return r;
}

}  // namespace ringrl::actors
