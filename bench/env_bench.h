// `ringrl bench env`: env steps per second on one core with random actions and, for the
// MuJoCo envs, the bare mj_step rate of the same model measured in the same run, so that
// efficiency = env_steps_per_s * frame_skip / bare_physics_steps_per_s shows the env's own
// overhead (1.0 = none).
//
// Single-threaded; runs on the calling thread. Rates are per core: by default steps per
// second of this thread's CPU time (so that other processes sharing the core do not distort
// them), or of wall-clock time with BenchClock::kWall. The phases alternate (env, bare, env, ...)
// and the best round of each counts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ringrl::bench {

enum class BenchClock { kThreadCpu, kWall };

struct EnvBenchOptions {
  std::string env;  // a maze env name (see `ringrl env list`)
  BenchClock clock = BenchClock::kThreadCpu;
  double seconds = 3.0;    // total measuring time, split over the rounds and phases
  std::int64_t steps = 0;  // > 0: fixed work instead: this many env steps per round (and
                           // steps * frame_skip mj_steps), e.g. for instruction counts
  int rounds = 3;          // alternations of the env and bare-physics phases
  std::uint64_t seed = 1;  // action table and episode seeds
};

struct EnvBenchResult {
  std::string env;
  BenchClock clock = BenchClock::kThreadCpu;
  double env_steps_per_s = 0.0;
  std::optional<double> bare_physics_steps_per_s;  // MuJoCo envs only
  int frame_skip = 1;
  std::optional<double> efficiency;  // MuJoCo envs only
  std::int64_t env_steps = 0;        // steps measured, all rounds
  std::int64_t physics_steps = 0;
};

/// Runs the benchmark. Throws UsageError for an unknown env or bad options.
EnvBenchResult run_env_bench(const EnvBenchOptions& options);

/// {"bench":"env","env":...,"env_steps_per_s":...,"bare_physics_steps_per_s":...,
///  "frame_skip":...,"efficiency":...,"clock":"thread_cpu"|"wall"} (null where not
///  applicable).
nlohmann::ordered_json to_json(const EnvBenchResult& result);

}  // namespace ringrl::bench
