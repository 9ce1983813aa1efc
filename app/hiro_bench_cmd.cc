// `ringrl bench hiro`: HIRO end to end against the actors' ceiling, the learner alone against
// plain LibTorch, and the learner's FLOP bound on one core and on every core (spec hiro.md §3,
// §9, §13), at the configured learner threads (auto) and at one thread, in one invocation.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli_numbers.h"
#include "app/commands.h"
#include "config/hiro_config.h"
#include "bench/hiro/hiro_bench.h"
#include "common/errors.h"
#include "common/run_segment.h"
#include "common/runfiles/config.h"
#include "common/runfiles/run_files.h"
#include "learner/threads.h"

namespace ringrl::app {
using namespace ringrl::config;  // the config mappers
namespace {

namespace fs = std::filesystem;

constexpr double kMaxSideSeconds = 5.0;  // actor-only and each learner side: at most this long
constexpr double kSideFraction = 0.25;   // ... or this fraction of --seconds
constexpr double kMetricsEveryS = 0.5;   // metrics rows of the end-to-end run (its rate's resolution)
constexpr int kGemmSize = 2048;          // the peak GEMM: n x n fp32 (and bf16 with learner_precision bf16)
constexpr int kGemmReps = 3;
constexpr double kGiga = 1e9;

struct HiroBenchCli {
  std::string env = "kinematic-maze", config;
  std::vector<std::string> sets;
  std::uint32_t actors = 1;
  double seconds = 20;
  bool json = false;
};

// One end-to-end run: collectors + rings + the rate-limited learner + weight broadcast, for
// `t.max_seconds`, in a scratch run directory removed afterwards.
struct EndToEnd {
  learner::DriverSummary summary;
  bench::PostInitialRate rate;
  nlohmann::json result;  // the results line (empty object if none)
};

EndToEnd run_end_to_end(hiro::HiroTrainOptions t, const nlohmann::json& cfg) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("ringrl-bench-hiro-{}", getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  t.run_dir = dir.string();
  t.config_path = runfiles::write_resolved(cfg, dir).string();
  t.quiet = true;
  EndToEnd e;
  try {
    e.summary = hiro::run_hiro_training(t);
    e.rate = bench::post_initial_rate((dir / runfiles::kMetricsFileName).string(), t.initial_steps);
  } catch (...) {
    fs::remove_all(dir);
    throw;
  }
  fs::remove_all(dir);
  e.result = e.summary.results.empty() ? nlohmann::json::object() : e.summary.results.front();
  return e;
}

nlohmann::json timing_json(const bench::Td3Timing& x) {
  return nlohmann::json{{"low_update_ms", x.low_ms},
                        {"high_update_ms", x.high_ms},
                        {"relabel_ms", x.relabel_ms},
                        {"low_updates", x.low_updates},
                        {"high_updates", x.high_updates}};
}

void run_hiro_bench(const HiroBenchCli& c) {
  if (!(c.seconds > 0)) throw UsageError(fmt::format("--seconds {}: expected a positive number", c.seconds));
  std::vector<std::string> sets{"env=" + c.env,
                                fmt::format("actors={}", c.actors),
                                "max_env_steps=0",
                                "stop_on_success=false",
                                "repetitions=1",
                                fmt::format("max_seconds={}", c.seconds),
                                "checkpoint_every_s=0",
                                fmt::format("metrics_every_s={}", kMetricsEveryS),
                                "eval=false"};
  sets.insert(sets.end(), c.sets.begin(), c.sets.end());
  const nlohmann::json cfg = resolve_hiro_config(c.config, sets);
  const hiro::HiroTrainOptions t = hiro_train_options_from(cfg);  // learner_threads resolved
  const actors::HiroActorOptions ao = hiro_actor_options_from(cfg);
  const int threads = t.learner.threads;
  // The same run on one learner thread.
  hiro::HiroTrainOptions t1 = t;
  t1.learner_threads = 1;
  t1.learner.threads = 1;
  nlohmann::json cfg1 = cfg;
  cfg1["learner_threads"] = 1;

  // 1. End to end at the configured (auto) threads, then at one thread.
  const EndToEnd e2e = run_end_to_end(t, cfg);
  const EndToEnd e2e1 = threads == 1 ? e2e : run_end_to_end(t1, cfg1);

  // 2. Actor-only ceiling: the same collectors with the initial weights, no learner, no rings.
  const double side = std::min(kMaxSideSeconds, kSideFraction * c.seconds);
  hiro::HiroLearner fresh(t.learner);
  std::vector<std::byte> blob(fresh.blob_bytes());
  fresh.write_blob(blob.data());
  const double actor_only = bench::hiro_actor_only_steps_per_s(ao, blob, c.actors, side);

  // 3. The learner alone against plain LibTorch, on the same replay rows; then alone on one
  //    thread.
  bench::HiroLearnerBenchOptions lb;
  lb.learner = t.learner;
  lb.actor = ao;
  lb.data_steps = t.initial_steps;
  lb.high_every = t.high_every;
  lb.seconds = side;
  const bench::HiroLearnerBenchResult lr = bench::bench_hiro_learner(lb);
  bench::HiroLearnerBenchResult lr1 = lr;
  if (threads != 1) {
    lb.learner = t1.learner;
    lb.plain = false;
    lr1 = bench::bench_hiro_learner(lb);
  }

  // 4. The FLOP bound of one core, and of every core this process may use.
  const bench::HiroFlops flops = bench::hiro_flops(t.learner, t.high_every);
  const double peak = bench::gemm_peak_flops(kGemmSize, kGemmReps);
  const double bound = peak / flops.per_env_step;
  const int cores = learner::available_cpus();
  const double cores_bound = cores * bound;
  // learner_precision bf16: the bound again at one core's bfloat16 GEMM rate, the peak of the
  // products that run in bfloat16 (the thin layers stay float32, so neither bound is exact).
  const bool bf16 = t.learner.precision == "bf16";
  const double peak_bf16 = bf16 ? bench::gemm_peak_flops(kGemmSize, kGemmReps, /*bf16=*/true) : 0.0;
  const double cores_bound_bf16 = cores * peak_bf16 / flops.per_env_step;

  const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  // What a thread setting gave end to end and alone.
  const auto setting = [&](const EndToEnd& e, const bench::HiroLearnerBenchResult& l, int n) {
    return nlohmann::json{
        {"learner_threads", n},
        {"env_steps_per_s", e.rate.env_steps_per_s},
        {"env_steps_per_s_measured_over", {{"env_steps", e.rate.env_steps}, {"seconds", e.rate.seconds}}},
        {"low_updates_per_env_step", e.result.value("low_updates_per_env_step", 0.0)},
        {"high_updates_per_env_step", e.result.value("high_updates_per_env_step", 0.0)},
        {"lag_p50", e.summary.lag_p50},
        {"learner_env_steps_per_s", l.ours_env_steps_per_s},
        {"learner", timing_json(l.ours)},
        {"end_to_end_vs_learner_alone", ratio(e.rate.env_steps_per_s, l.ours_env_steps_per_s)},
        {"fraction_of_cores_bound", ratio(e.rate.env_steps_per_s, cores_bound)},
        {"learner_fraction_of_cores_bound", ratio(l.ours_env_steps_per_s, cores_bound)}};
  };
  nlohmann::json out = {
      {"bench", "hiro"},
      {"env", t.env},
      {"goal_space", hiro::goal_space_name(t.learner.goal_space.kind)},
      {"actors", c.actors},
      {"hidden", t.learner.hidden},
      {"batch_size", t.learner.batch_size},
      {"device", lr.device},
      {"td3_kernel", t.learner.td3_kernel},
      {"learner_precision", t.learner.precision},
      {"seconds", c.seconds},
      {"learner_threads", threads},
      // The configured (auto) threads, as before the thread settings were compared.
      {"env_steps", e2e.result.value("env_steps", std::uint64_t{0})},
      {"env_steps_per_s", e2e.rate.env_steps_per_s},
      {"env_steps_per_s_measured_over", {{"env_steps", e2e.rate.env_steps}, {"seconds", e2e.rate.seconds}}},
      {"actor_only_env_steps_per_s", actor_only},
      {"learner_env_steps_per_s", lr.ours_env_steps_per_s},
      {"plain_libtorch_env_steps_per_s", lr.plain_env_steps_per_s},
      {"learner_vs_plain_libtorch", lr.ratio},
      {"learner", timing_json(lr.ours)},
      {"plain_libtorch", timing_json(lr.plain)},
      {"low_updates_per_env_step", e2e.result.value("low_updates_per_env_step", 0.0)},
      {"high_updates_per_env_step", e2e.result.value("high_updates_per_env_step", 0.0)},
      {"learner_steps_per_s_in_run", e2e.summary.updates_per_s},
      {"lag_p50", e2e.summary.lag_p50},
      {"lag_max", e2e.summary.lag_max},
      {"end_to_end_vs_learner_alone", ratio(e2e.rate.env_steps_per_s, lr.ours_env_steps_per_s)},
      // Both thread settings side by side, and what the threads gave.
      {"threads", {{"auto", setting(e2e, lr, threads)}, {"one", setting(e2e1, lr1, 1)}}},
      {"threads_speedup_end_to_end", ratio(e2e.rate.env_steps_per_s, e2e1.rate.env_steps_per_s)},
      {"threads_speedup_learner_alone", ratio(lr.ours_env_steps_per_s, lr1.ours_env_steps_per_s)},
      {"gflop_per_env_step",
       {{"low", flops.low_per_env_step / kGiga},
        {"relabel", flops.relabel_per_env_step / kGiga},
        {"high", flops.high_per_env_step / kGiga},
        {"total", flops.per_env_step / kGiga}}},
      {"core_gemm_gflops", peak / kGiga},
      {"flop_bound_env_steps_per_s", bound},
      {"fraction_of_bound", ratio(e2e.rate.env_steps_per_s, bound)},
      {"learner_fraction_of_bound", ratio(lr.ours_env_steps_per_s, bound)},
      {"cores", cores},
      {"cores_flop_bound_env_steps_per_s", cores_bound},
      {"fraction_of_cores_bound", ratio(e2e.rate.env_steps_per_s, cores_bound)}};
  if (bf16) {
    out["core_gemm_gflops_bf16"] = peak_bf16 / kGiga;
    out["cores_flop_bound_env_steps_per_s_bf16"] = cores_bound_bf16;
    out["fraction_of_cores_bound_bf16"] = ratio(e2e.rate.env_steps_per_s, cores_bound_bf16);
  }
  if (c.json) {
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf(
        "hiro: %s (%s, hidden %d, batch %d), %u collector(s), %s, td3_kernel %s\n"
        "  end to end      %8.1f env steps/s after the initial %llu (%llu steps over %.1f s) on %d learner threads;"
        " lag p50 %llu max %llu\n"
        "                  %8.1f on 1 learner thread; threads x%.2f\n"
        "  updates per env step after the initial steps: low %.3f, high %.4f (1 thread: %.3f, %.4f)\n"
        "  actor only      %8.1f env steps/s\n"
        "  learner alone   %8.1f env steps/s  (low %.2f ms, high %.2f ms + relabel %.2f ms)\n"
        "                  %8.1f on 1 thread  (low %.2f ms, high %.2f ms + relabel %.2f ms); threads x%.2f\n"
        "  end to end / learner alone: %.3f (1 thread: %.3f)\n"
        "  plain LibTorch  %8.1f env steps/s  (low %.2f ms, high %.2f ms + relabel %.2f ms); ours / plain %.2f\n"
        "  FLOP bound      %8.1f env steps/s  (%.3f GFLOP per env step: low %.3f, relabel %.3f, high %.3f;\n"
        "                  one core's fp32 GEMM %.1f GFLOP/s); end to end at %.1f%%, learner alone at %.1f%%\n"
        "  %d-core bound   %8.1f env steps/s; end to end at %.1f%% (1 thread: %.1f%%)\n",
        t.env.c_str(), hiro::goal_space_name(t.learner.goal_space.kind), t.learner.hidden, t.learner.batch_size,
        c.actors, lr.device.c_str(), t.learner.td3_kernel.c_str(), e2e.rate.env_steps_per_s,
        static_cast<unsigned long long>(t.initial_steps), static_cast<unsigned long long>(e2e.rate.env_steps),
        e2e.rate.seconds, threads, static_cast<unsigned long long>(e2e.summary.lag_p50),
        static_cast<unsigned long long>(e2e.summary.lag_max), e2e1.rate.env_steps_per_s,
        ratio(e2e.rate.env_steps_per_s, e2e1.rate.env_steps_per_s), e2e.result.value("low_updates_per_env_step", 0.0),
        e2e.result.value("high_updates_per_env_step", 0.0), e2e1.result.value("low_updates_per_env_step", 0.0),
        e2e1.result.value("high_updates_per_env_step", 0.0), actor_only, lr.ours_env_steps_per_s, lr.ours.low_ms,
        lr.ours.high_ms, lr.ours.relabel_ms, lr1.ours_env_steps_per_s, lr1.ours.low_ms, lr1.ours.high_ms,
        lr1.ours.relabel_ms, ratio(lr.ours_env_steps_per_s, lr1.ours_env_steps_per_s),
        ratio(e2e.rate.env_steps_per_s, lr.ours_env_steps_per_s),
        ratio(e2e1.rate.env_steps_per_s, lr1.ours_env_steps_per_s), lr.plain_env_steps_per_s, lr.plain.low_ms,
        lr.plain.high_ms, lr.plain.relabel_ms, lr.ratio, bound, flops.per_env_step / kGiga,
        flops.low_per_env_step / kGiga, flops.relabel_per_env_step / kGiga, flops.high_per_env_step / kGiga,
        peak / kGiga, 100 * ratio(e2e.rate.env_steps_per_s, bound), 100 * ratio(lr.ours_env_steps_per_s, bound), cores,
        cores_bound, 100 * ratio(e2e.rate.env_steps_per_s, cores_bound),
        100 * ratio(e2e1.rate.env_steps_per_s, cores_bound));
    if (bf16)
      std::printf("  learner_precision bf16: one core's bf16 GEMM %.1f GFLOP/s; %d-core bound %.1f env steps/s, end to "
                  "end at %.1f%%\n",
                  peak_bf16 / kGiga, cores, cores_bound_bf16, 100 * ratio(e2e.rate.env_steps_per_s, cores_bound_bf16));
  }
  std::fflush(stdout);
}

void add_hiro_bench_command(CommandTree& tree) {
  auto h = std::make_shared<HiroBenchCli>();
  CLI::App* cmd = tree.bench.add_subcommand(
      "hiro",
      "HIRO env steps/s end to end (auto and 1 learner thread) vs actor-only, the learner vs plain LibTorch, and the "
      "FLOP bounds");
  cmd->add_option("--env", h->env, "Maze env")->capture_default_str();
  add_unsigned(*cmd, "--actors", h->actors, "Collector processes", 1, kMaxActors - 1)->capture_default_str();
  add_real(*cmd, "--seconds", h->seconds,
           "Seconds of each end-to-end run (auto threads, then 1; the other parts take a quarter, <= 5 s)", 0)
      ->capture_default_str();
  cmd->add_option("--config", h->config, "Config file (default: configs/hiro.json)");
  cmd->add_option("--set", h->sets, "Override a config key: --set key=value (repeatable)");
  cmd->add_flag("--json", h->json, "Print one JSON object");
  cmd->callback([h] { run_hiro_bench(*h); });
}

const CommandFamily kRegistration(kOrderBench, add_hiro_bench_command);

}  // namespace
}  // namespace ringrl::app
