// `ringrl bench hiro`: HIRO end to end against the actors' ceiling, the learner alone against
// plain LibTorch, and the learner's FLOP bound on one core (spec hiro.md §3, §9, §13).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cli_numbers.h"
#include "app/commands.h"
#include "app/hiro_config.h"
#include "bench/hiro/hiro_bench.h"
#include "common/errors.h"
#include "common/run_segment.h"
#include "common/runfiles/config.h"

namespace ringrl::app {
namespace {

namespace fs = std::filesystem;

constexpr double kMaxSideSeconds = 5.0;  // actor-only and each learner side: at most this long
constexpr double kSideFraction = 0.25;   // ... or this fraction of --seconds
constexpr double kMetricsEveryS = 0.5;   // metrics rows of the end-to-end run (its rate's resolution)
constexpr int kGemmSize = 2048;          // the peak GEMM: n x n fp32
constexpr int kGemmReps = 3;
constexpr double kGiga = 1e9;

struct HiroBenchCli {
  std::string env = "kinematic-maze", config;
  std::vector<std::string> sets;
  std::uint32_t actors = 1;
  double seconds = 20;
  bool json = false;
};

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
  hiro::HiroTrainOptions t = hiro_train_options_from(cfg);
  const actors::HiroActorOptions ao = hiro_actor_options_from(cfg);

  // 1. End to end: collectors + rings + the rate-limited learner + weight broadcast.
  const fs::path dir = fs::temp_directory_path() / fmt::format("ringrl-bench-hiro-{}", getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  t.run_dir = dir.string();
  t.config_path = runfiles::write_resolved(cfg, dir).string();
  t.quiet = true;
  learner::DriverSummary e2e;
  bench::PostInitialRate post;
  try {
    e2e = hiro::run_hiro_training(t);
    post = bench::post_initial_rate((dir / "metrics.csv").string(), t.initial_steps);
  } catch (...) {
    fs::remove_all(dir);
    throw;
  }
  fs::remove_all(dir);
  const nlohmann::json result = e2e.results.empty() ? nlohmann::json::object() : e2e.results.front();

  // 2. Actor-only ceiling: the same collectors with the initial weights, no learner, no rings.
  const double side = std::min(kMaxSideSeconds, kSideFraction * c.seconds);
  hiro::HiroLearner fresh(t.learner);
  std::vector<std::byte> blob(fresh.blob_bytes());
  fresh.write_blob(blob.data());
  const double actor_only = bench::hiro_actor_only_steps_per_s(ao, blob, c.actors, side);

  // 3. The learner alone against plain LibTorch, on the same replay rows.
  bench::HiroLearnerBenchOptions lb;
  lb.learner = t.learner;
  lb.actor = ao;
  lb.data_steps = t.initial_steps;
  lb.high_every = t.high_every;
  lb.seconds = side;
  const bench::HiroLearnerBenchResult lr = bench::bench_hiro_learner(lb);

  // 4. The FLOP bound of one core.
  const bench::HiroFlops flops = bench::hiro_flops(t.learner, t.high_every);
  const double peak = bench::gemm_peak_flops(kGemmSize, kGemmReps);
  const double bound = peak / flops.per_env_step;

  const auto timing = [](const bench::Td3Timing& x) {
    return nlohmann::json{{"low_update_ms", x.low_ms},
                          {"high_update_ms", x.high_ms},
                          {"relabel_ms", x.relabel_ms},
                          {"low_updates", x.low_updates},
                          {"high_updates", x.high_updates}};
  };
  const nlohmann::json out = {
      {"bench", "hiro"},
      {"env", t.env},
      {"goal_space", hiro::goal_space_name(t.learner.goal_space.kind)},
      {"actors", c.actors},
      {"hidden", t.learner.hidden},
      {"batch_size", t.learner.batch_size},
      {"device", lr.device},
      {"td3_kernel", t.learner.td3_kernel},
      {"seconds", c.seconds},
      {"env_steps", result.value("env_steps", std::uint64_t{0})},
      {"env_steps_per_s", post.env_steps_per_s},
      {"env_steps_per_s_measured_over", {{"env_steps", post.env_steps}, {"seconds", post.seconds}}},
      {"actor_only_env_steps_per_s", actor_only},
      {"learner_env_steps_per_s", lr.ours_env_steps_per_s},
      {"plain_libtorch_env_steps_per_s", lr.plain_env_steps_per_s},
      {"learner_vs_plain_libtorch", lr.ratio},
      {"learner", timing(lr.ours)},
      {"plain_libtorch", timing(lr.plain)},
      {"low_updates_per_env_step", result.value("low_updates_per_env_step", 0.0)},
      {"high_updates_per_env_step", result.value("high_updates_per_env_step", 0.0)},
      {"learner_steps_per_s_in_run", e2e.updates_per_s},
      {"lag_p50", e2e.lag_p50},
      {"lag_max", e2e.lag_max},
      {"gflop_per_env_step",
       {{"low", flops.low_per_env_step / kGiga},
        {"relabel", flops.relabel_per_env_step / kGiga},
        {"high", flops.high_per_env_step / kGiga},
        {"total", flops.per_env_step / kGiga}}},
      {"core_gemm_gflops", peak / kGiga},
      {"flop_bound_env_steps_per_s", bound},
      {"fraction_of_bound", bound > 0 ? post.env_steps_per_s / bound : 0.0},
      {"learner_fraction_of_bound", bound > 0 ? lr.ours_env_steps_per_s / bound : 0.0}};
  if (c.json) {
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf(
        "hiro: %s (%s, hidden %d, batch %d), %u collector(s), %s, td3_kernel %s\n"
        "  end to end      %8.1f env steps/s after the initial %llu (%llu steps over %.1f s); lag p50 %llu max %llu\n"
        "  updates per env step after the initial steps: low %.3f, high %.4f\n"
        "  actor only      %8.1f env steps/s\n"
        "  learner alone   %8.1f env steps/s  (low %.2f ms, high %.2f ms + relabel %.2f ms)\n"
        "  plain LibTorch  %8.1f env steps/s  (low %.2f ms, high %.2f ms + relabel %.2f ms); ours / plain %.2f\n"
        "  FLOP bound      %8.1f env steps/s  (%.3f GFLOP per env step: low %.3f, relabel %.3f, high %.3f;\n"
        "                  one core's fp32 GEMM %.1f GFLOP/s); end to end at %.1f%%, learner alone at %.1f%%\n",
        t.env.c_str(), hiro::goal_space_name(t.learner.goal_space.kind), t.learner.hidden, t.learner.batch_size,
        c.actors, lr.device.c_str(), t.learner.td3_kernel.c_str(), post.env_steps_per_s, static_cast<unsigned long long>(t.initial_steps),
        static_cast<unsigned long long>(post.env_steps), post.seconds, static_cast<unsigned long long>(e2e.lag_p50),
        static_cast<unsigned long long>(e2e.lag_max), result.value("low_updates_per_env_step", 0.0),
        result.value("high_updates_per_env_step", 0.0), actor_only, lr.ours_env_steps_per_s, lr.ours.low_ms,
        lr.ours.high_ms, lr.ours.relabel_ms, lr.plain_env_steps_per_s, lr.plain.low_ms, lr.plain.high_ms,
        lr.plain.relabel_ms, lr.ratio, bound, flops.per_env_step / kGiga, flops.low_per_env_step / kGiga,
        flops.relabel_per_env_step / kGiga, flops.high_per_env_step / kGiga, peak / kGiga,
        bound > 0 ? 100 * post.env_steps_per_s / bound : 0.0, bound > 0 ? 100 * lr.ours_env_steps_per_s / bound : 0.0);
  }
  std::fflush(stdout);
}

void add_hiro_bench_command(CommandTree& tree) {
  auto h = std::make_shared<HiroBenchCli>();
  CLI::App* cmd = tree.bench.add_subcommand(
      "hiro", "HIRO env steps/s end to end vs actor-only, the learner vs plain LibTorch, and the FLOP bound");
  cmd->add_option("--env", h->env, "Maze env")->capture_default_str();
  add_unsigned(*cmd, "--actors", h->actors, "Collector processes", 1, kMaxActors - 1)->capture_default_str();
  add_real(*cmd, "--seconds", h->seconds, "Seconds of the end-to-end run (the other parts take a quarter, <= 5 s)", 0)
      ->capture_default_str();
  cmd->add_option("--config", h->config, "Config file (default: configs/hiro.json)");
  cmd->add_option("--set", h->sets, "Override a config key: --set key=value (repeatable)");
  cmd->add_flag("--json", h->json, "Print one JSON object");
  cmd->callback([h] { run_hiro_bench(*h); });
}

const CommandFamily kRegistration(kOrderBench, add_hiro_bench_command);

}  // namespace
}  // namespace ringrl::app
