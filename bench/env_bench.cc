#include "bench/env_bench.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "common/errors.h"
#include "envs/env.h"
#include "envs/maze/bare_physics.h"
#include "envs/maze/factory.h"

namespace ringrl::bench {
namespace {

constexpr int kActionTableSize = 4096;    // pre-drawn random actions, cycled
constexpr std::int64_t kFirstBatch = 16;  // steps between the first clock reads
constexpr std::int64_t kMaxBatch = 1 << 20;
constexpr double kBatchSeconds = 1e-3;                  // grow batches until a batch takes this
constexpr std::uint64_t kActionStream = 0xA5A5A5A5ULL;  // decorrelates actions from resets
constexpr double kMinSeconds = 0.01;
constexpr double kMaxSeconds = 600.0;
constexpr int kMaxRounds = 100;

// Seconds on the chosen clock, from an arbitrary origin.
double now(BenchClock clock) {
  if (clock == BenchClock::kWall)
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Runs `body(steps)` in growing batches for about `seconds`, or exactly `fixed` times when
// fixed > 0; returns {steps, elapsed}.
template <class Body>
std::pair<std::int64_t, double> timed(BenchClock clock, double seconds, std::int64_t fixed, Body&& body) {
  if (fixed > 0) {
    const double t0 = now(clock);
    for (std::int64_t k = 0; k < fixed; ++k) body(k);
    return {fixed, now(clock) - t0};
  }
  std::int64_t steps = 0;
  std::int64_t batch = kFirstBatch;
  const double t0 = now(clock);
  double last = t0;
  for (;;) {
    for (std::int64_t k = 0; k < batch; ++k, ++steps) body(steps);
    const double t = now(clock);
    if (t - t0 >= seconds) return {steps, t - t0};
    if (t - last < kBatchSeconds && batch < kMaxBatch) batch *= 2;
    last = t;
  }
}

// Random actions, uniform in the action box, laid out back to back.
std::vector<float> action_table(const envs::EnvSpec& spec, std::uint64_t seed) {
  Rng rng(seed ^ kActionStream);
  std::vector<float> table(static_cast<size_t>(kActionTableSize * spec.action_dim));
  for (int k = 0; k < kActionTableSize; ++k)
    for (int i = 0; i < spec.action_dim; ++i)
      table[static_cast<size_t>(k * spec.action_dim + i)] = static_cast<float>(
          rng.uniform(spec.action.low[static_cast<size_t>(i)], spec.action.high[static_cast<size_t>(i)]));
  return table;
}

envs::Span<const float> action_at(const std::vector<float>& table, int dim, std::int64_t k) {
  const size_t row = static_cast<size_t>(k % kActionTableSize);
  return envs::Span<const float>(table.data() + row * static_cast<size_t>(dim), static_cast<size_t>(dim));
}

// Env steps for about `seconds`; returns {steps, elapsed}. Resets at episode ends (timed:
// actors pay for them too).
std::pair<std::int64_t, double> time_env(envs::Env& env, const std::vector<float>& actions, std::uint64_t seed,
                                         BenchClock clock, double seconds, std::int64_t fixed) {
  const envs::EnvSpec& spec = env.spec();
  std::vector<float> obs(static_cast<size_t>(spec.obs_dim));
  std::uint64_t episode = 0;
  env.reset(seed + episode, obs);
  return timed(clock, seconds, fixed, [&](std::int64_t step) {
    const envs::StepResult r = env.step(action_at(actions, spec.action_dim, step), obs);
    if (r.done()) env.reset(seed + ++episode, obs);
  });
}

// Bare mj_steps for about `seconds` on the same episodes as the env phase: each episode
// starts from the env's reset state for that seed, the same actions are held for frame_skip
// steps. (The env reset inside the loop costs about one mj_forward per 2,500 mj_steps.)
std::pair<std::int64_t, double> time_bare(envs::maze::BarePhysics& physics, envs::Env& env,
                                          const std::vector<float>& actions, std::uint64_t seed, BenchClock clock,
                                          double seconds, std::int64_t fixed) {
  const envs::EnvSpec& spec = env.spec();
  const std::int64_t episode_steps = static_cast<std::int64_t>(spec.episode_length) * spec.frame_skip;
  std::vector<float> obs(static_cast<size_t>(spec.obs_dim));
  std::uint64_t episode = 0;
  const auto begin_episode = [&] {
    env.reset(seed + episode++, obs);
    physics.reset();
  };
  begin_episode();
  return timed(clock, seconds, fixed * spec.frame_skip, [&](std::int64_t step) {
    if (step % spec.frame_skip == 0) physics.set_ctrl(action_at(actions, spec.action_dim, step / spec.frame_skip));
    physics.step();
    if ((step + 1) % episode_steps == 0) begin_episode();
  });
}

}  // namespace

EnvBenchResult run_env_bench(const EnvBenchOptions& o) {
  if (!(o.seconds >= kMinSeconds && o.seconds <= kMaxSeconds))
    throw UsageError("bench env: --seconds must be in [0.01, 600], got " + std::to_string(o.seconds));
  if (o.steps < 0) throw UsageError("bench env: --steps must be >= 0, got " + std::to_string(o.steps));
  if (o.rounds < 1 || o.rounds > kMaxRounds)
    throw UsageError("bench env: --rounds must be in [1, 100], got " + std::to_string(o.rounds));
  std::unique_ptr<envs::Env> env = envs::maze::make_maze_env(o.env);
  std::unique_ptr<envs::maze::BarePhysics> physics = envs::maze::make_bare_physics(*env);
  const envs::EnvSpec& spec = env->spec();
  const std::vector<float> actions = action_table(spec, o.seed);

  const int phases = physics ? 2 : 1;
  const double phase_seconds = o.seconds / (o.rounds * phases);
  EnvBenchResult result;
  result.env = o.env;
  result.clock = o.clock;
  result.frame_skip = spec.frame_skip;
  double best_env = 0.0;
  double best_bare = 0.0;
  for (int round = 0; round < o.rounds; ++round) {
    const auto [env_steps, env_s] = time_env(*env, actions, o.seed, o.clock, phase_seconds, o.steps);
    best_env = std::max(best_env, env_steps / env_s);
    result.env_steps += env_steps;
    if (physics) {
      const auto [bare_steps, bare_s] = time_bare(*physics, *env, actions, o.seed, o.clock, phase_seconds, o.steps);
      best_bare = std::max(best_bare, bare_steps / bare_s);
      result.physics_steps += bare_steps;
    }
  }
  result.env_steps_per_s = best_env;
  if (physics) {
    result.bare_physics_steps_per_s = best_bare;
    result.efficiency = best_env * spec.frame_skip / best_bare;
  }
  return result;
}

nlohmann::ordered_json to_json(const EnvBenchResult& r) {
  nlohmann::ordered_json j;
  j["bench"] = "env";
  j["env"] = r.env;
  j["env_steps_per_s"] = r.env_steps_per_s;
  j["bare_physics_steps_per_s"] =
      r.bare_physics_steps_per_s ? nlohmann::ordered_json(*r.bare_physics_steps_per_s) : nlohmann::ordered_json();
  j["frame_skip"] = r.frame_skip;
  j["efficiency"] = r.efficiency ? nlohmann::ordered_json(*r.efficiency) : nlohmann::ordered_json();
  j["clock"] = r.clock == BenchClock::kWall ? "wall" : "thread_cpu";
  return j;
}

}  // namespace ringrl::bench
