// `ringrl bench td3-update`: the HIRO learner's TD3 updates alone (the low update, the high
// update and the relabel pass; spec hiro.md §3, §5, §9) under each kernel of the device, in
// one invocation on the same replay rows: on CUDA the graph kernel with its phases captured
// as CUDA graphs against the same kernel uncaptured and the eager kernel; on the CPU the fused
// kernel against the eager and the (uncaptured) graph kernel; with learner_precision=bf16 the
// fused kernel in bfloat16 first, against all of those in float32. scripts/gpu_check.sh runs it.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli_numbers.h"
#include "app/commands.h"
#include "config/hiro_config.h"
#include "bench/hiro/hiro_bench.h"
#include "common/errors.h"
#include "learner/devices.h"

namespace ringrl::app {
using namespace ringrl::config;  // the config mappers
namespace {

constexpr double kGiga = 1e9;
// Untimed updates per level and setting: the graph kernel's phases are captured after
// GraphTd3::kGraphWarmup direct calls, and the actor phase runs every second update.
constexpr int kWarmupUpdates = 10;
constexpr int kGemmSize = 2048;  // the peak GEMM: n x n
constexpr int kGemmReps = 3;

struct Td3BenchCli {
  std::string env = "ant-maze", device = "auto", config;
  std::vector<std::string> sets;
  double seconds = 4;
  bool json = false;
};

struct Setting {
  std::string kernel, cuda_graphs, precision;
};

void run_td3_bench(const Td3BenchCli& c) {
  if (!(c.seconds > 0)) throw UsageError(fmt::format("--seconds {}: expected a positive number", c.seconds));
  std::vector<std::string> sets{"env=" + c.env, "device=" + c.device};
  sets.insert(sets.end(), c.sets.begin(), c.sets.end());
  const nlohmann::json cfg = resolve_hiro_config(c.config, sets);
  const hiro::HiroTrainOptions t = hiro_train_options_from(cfg);
  const std::string& d = t.learner.device;
  const bool cuda = d == "auto" ? learner::cuda_device_count() > 0 : d.rfind("cuda", 0) == 0;
  // learner_precision bf16 (the fused CPU kernel only) runs first, against the same kernel in
  // float32 and then the others; every other setting is float32.
  std::vector<Setting> settings;
  if (t.learner.precision != "fp32") settings.push_back(Setting{"fused", "off", t.learner.precision});
  settings.push_back(cuda ? Setting{"graph", "on", "fp32"} : Setting{"fused", "off", "fp32"});
  settings.push_back(Setting{"graph", "off", "fp32"});
  settings.push_back(Setting{"eager", "off", "fp32"});
  const bench::HiroFlops flops = bench::hiro_flops(t.learner, t.high_every);
  // The peak beside each figure: one core's GEMM on 2048 x 2048 matrices in this invocation,
  // in float32 and, when a setting runs in bfloat16, in bfloat16; a setting's share of it is
  // its GFLOP/s over (learner threads x that peak). CPU only (0 on CUDA).
  const bool any_bf16 = t.learner.precision == "bf16";
  const double peak = cuda ? 0.0 : bench::gemm_peak_flops(kGemmSize, kGemmReps);
  const double peak_bf16 = any_bf16 && !cuda ? bench::gemm_peak_flops(kGemmSize, kGemmReps, /*bf16=*/true) : 0.0;

  nlohmann::json rows = nlohmann::json::array();
  std::vector<bench::Td3Timing> timings;
  std::string device;
  for (const Setting& s : settings) {
    bench::HiroLearnerBenchOptions lb;
    lb.learner = t.learner;
    lb.learner.td3_kernel = s.kernel;
    lb.learner.cuda_graphs = s.cuda_graphs;
    lb.learner.precision = s.precision;
    lb.actor = hiro_actor_options_from(cfg);
    lb.data_steps = t.initial_steps;
    lb.high_every = t.high_every;
    lb.seconds = c.seconds;
    lb.warmup_updates = kWarmupUpdates;
    lb.plain = false;
    const bench::HiroLearnerBenchResult r = bench::bench_hiro_learner(lb);
    device = r.device;
    timings.push_back(r.ours);
    const auto per_s = [](double ms) { return ms > 0 ? 1000.0 / ms : 0.0; };
    // FLOP/s of an update over the learner threads' peak in its precision.
    const auto share = [&](double flop, double ms, const std::string& precision) {
      const double p = (precision == "bf16" ? peak_bf16 : peak) * t.learner.threads;
      return ms > 0 && p > 0 ? flop / (ms * 1e-3) / p : 0.0;
    };
    rows.push_back({{"td3_kernel", s.kernel},
                    {"cuda_graphs", s.cuda_graphs},
                    {"learner_precision", s.precision},
                    {"low_update_ms", r.ours.low_ms},
                    {"high_update_ms", r.ours.high_ms},
                    {"relabel_ms", r.ours.relabel_ms},
                    {"low_updates_per_s", per_s(r.ours.low_ms)},
                    {"high_updates_per_s", per_s(r.ours.high_ms)},
                    {"low_gflop_per_s", r.ours.low_ms > 0 ? flops.low_update / (r.ours.low_ms * 1e-3) / kGiga : 0.0},
                    {"high_gflop_per_s", r.ours.high_ms > 0 ? flops.high_update / (r.ours.high_ms * 1e-3) / kGiga : 0.0},
                    {"learner_env_steps_per_s", r.ours_env_steps_per_s},
                    {"peak_gflops", (s.precision == "bf16" ? peak_bf16 : peak) / kGiga},
                    {"low_fraction_of_threads_peak", share(flops.low_update, r.ours.low_ms, s.precision)},
                    {"high_fraction_of_threads_peak", share(flops.high_update, r.ours.high_ms, s.precision)},
                    {"low_updates", r.ours.low_updates},
                    {"high_updates", r.ours.high_updates}});
  }
  // The first setting against the others: how much faster each update is with it.
  const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  nlohmann::json speedups = nlohmann::json::object();
  for (std::size_t i = 1; i < settings.size(); ++i)
    speedups[settings[i].kernel + "_cuda_graphs_" + settings[i].cuda_graphs +
             (settings[i].precision == "fp32" ? "" : "_" + settings[i].precision)] = {
        {"low", ratio(timings[i].low_ms, timings[0].low_ms)}, {"high", ratio(timings[i].high_ms, timings[0].high_ms)}};
  const nlohmann::json out = {{"bench", "td3-update"},
                              {"env", t.env},
                              {"device", device},
                              {"hidden", t.learner.hidden},
                              {"batch_size", t.learner.batch_size},
                              {"learner_threads", t.learner.threads},
                              {"seconds_per_setting", c.seconds},
                              {"gflop_per_update", {{"low", flops.low_update / kGiga}, {"high", flops.high_update / kGiga},
                                                    {"relabel", flops.relabel / kGiga}}},
                              {"core_gemm_gflops", peak / kGiga},
                              {"settings", rows},
                              {"first_setting_speedup_over", speedups}};
  if (c.json) {
    std::printf("%s\n", out.dump().c_str());
    return;
  }
  std::printf("td3-update: %s on %s (hidden %d, batch %d, %d learner thread(s)); %.3f / %.3f GFLOP per low / high update\n",
              t.env.c_str(), device.c_str(), t.learner.hidden, t.learner.batch_size, t.learner.threads,
              flops.low_update / kGiga, flops.high_update / kGiga);
  for (std::size_t i = 0; i < settings.size(); ++i) {
    std::string versus;
    if (i > 0)
      versus = fmt::format("; first setting x{:.2f} / x{:.2f}", ratio(timings[i].low_ms, timings[0].low_ms),
                           ratio(timings[i].high_ms, timings[0].high_ms));
    std::string of_peak;
    if (!cuda)
      of_peak = fmt::format(" = {:.1f}% / {:.1f}% of the peak", 100 * rows[i]["low_fraction_of_threads_peak"].get<double>(),
                            100 * rows[i]["high_fraction_of_threads_peak"].get<double>());
    std::printf("  %-6s %-4s cuda_graphs %-3s  low %7.3f ms  high %7.3f ms  relabel %7.3f ms  (%.1f / %.1f GFLOP/s%s)%s\n",
                settings[i].kernel.c_str(), settings[i].precision.c_str(), settings[i].cuda_graphs.c_str(),
                timings[i].low_ms, timings[i].high_ms, timings[i].relabel_ms, rows[i]["low_gflop_per_s"].get<double>(),
                rows[i]["high_gflop_per_s"].get<double>(), of_peak.c_str(), versus.c_str());
  }
  if (cuda) {
    std::fflush(stdout);
    return;
  }
  std::printf("  peak: %d thread(s) x one core's GEMM (2048^2), fp32 %.1f GFLOP/s", t.learner.threads, peak / kGiga);
  if (any_bf16) std::printf(", bf16 %.1f GFLOP/s (for the bf16 setting)", peak_bf16 / kGiga);
  std::printf("\n");
  std::fflush(stdout);
}

void add_td3_bench_command(CommandTree& tree) {
  auto h = std::make_shared<Td3BenchCli>();
  CLI::App* cmd = tree.bench.add_subcommand(
      "td3-update",
      "HIRO's TD3 updates alone (low, high, relabel) under each kernel of the device: on CUDA with and without "
      "CUDA graphs");
  cmd->add_option("--env", h->env, "Maze env (its shapes)")->capture_default_str();
  cmd->add_option("--device", h->device, "auto, cpu or cuda:N")->capture_default_str();
  add_real(*cmd, "--seconds", h->seconds, "Timed seconds per setting", 0)->capture_default_str();
  cmd->add_option("--config", h->config, "Config file (default: configs/hiro.json)");
  cmd->add_option("--set", h->sets, "Override a config key: --set key=value (repeatable)");
  cmd->add_flag("--json", h->json, "Print one JSON object");
  cmd->callback([h] { run_td3_bench(*h); });
}

const CommandFamily kRegistration(kOrderBench, add_td3_bench_command);

}  // namespace
}  // namespace ringrl::app
