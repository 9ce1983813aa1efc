#include "config/ga_config.h"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string_view>

#include "config/pqt_config.h"
#include "common/run_segment.h"
#include "common/runfiles/config.h"

namespace ringrl::config {
namespace {

using runfiles::get;

constexpr std::uint64_t kU32Max = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

// Every unsigned setting of configs/ga.json and the whole numbers it accepts: --set, the
// file and the getters below all go through this table.
const runfiles::UnsignedKeys& unsigned_keys() {
  static const runfiles::UnsignedKeys keys = {
      {"population", 1, ga::kMaxPopulation},
      {"timestep_limit", 1, static_cast<std::uint64_t>(ga::kMaxGenomeLength)},
      {"hall_of_fame", 1, kU32Max},
      {"check_every", 1, kU64Max},
      {"cache_size", 0, kU64Max},
      {"learner_threads", 1, ga::kMaxLearnerThreads},
      {"max_npe", 0, kU64Max},  // 0 = unlimited
      {"actors", 1, kMaxActors},
      {"seed", 0, kU64Max},
      {"repetitions", 1, kU32Max},
  };
  return keys;
}

template <class T>
T get_count(const nlohmann::json& cfg, std::string_view key) {
  return runfiles::get_listed_unsigned<T>(cfg, unsigned_keys(), key, "ga config");
}

}  // namespace

nlohmann::json resolve_ga_config(const std::string& file, const std::vector<std::string>& overrides) {
  nlohmann::json cfg = runfiles::load_config(file.empty() ? config_dir() + "/ga.json" : file);
  runfiles::check_unsigned(cfg, unsigned_keys());  // the file as written
  runfiles::apply_overrides(cfg, overrides, unsigned_keys());
  runfiles::check_unsigned(cfg, unsigned_keys());
  return cfg;
}

ga::GaOptions ga_options_from(const nlohmann::json& cfg) {
  ga::GaOptions o;
  o.task = get<std::string>(cfg, "task");
  o.population = get_count<std::uint32_t>(cfg, "population");
  o.crossover_rate = get<double>(cfg, "crossover_rate");
  o.mutation_rate = get<double>(cfg, "mutation_rate");
  o.genome_length = get_count<int>(cfg, "timestep_limit");
  o.hall_of_fame = get_count<std::uint32_t>(cfg, "hall_of_fame");
  o.check_every = get_count<std::uint64_t>(cfg, "check_every");
  o.cache_size = get_count<std::uint64_t>(cfg, "cache_size");
  o.evaluator = ga::parse_evaluator(get<std::string>(cfg, "evaluator"));
  o.learner_threads = get_count<std::uint32_t>(cfg, "learner_threads");
  o.max_npe = get_count<std::uint64_t>(cfg, "max_npe");
  o.stop_on_success = get<bool>(cfg, "stop_on_success");
  o.actors = get_count<std::uint32_t>(cfg, "actors");
  o.seed = get_count<std::uint64_t>(cfg, "seed");
  o.repetitions = get_count<std::uint32_t>(cfg, "repetitions");
  o.checkpoint_every_s = get<double>(cfg, "checkpoint_every_s");
  o.max_seconds = get<double>(cfg, "max_seconds");
  o.metrics_every_s = get<double>(cfg, "metrics_every_s");
  return o;
}

actors::GaActorOptions ga_actor_options_from(const nlohmann::json& cfg) {
  actors::GaActorOptions a;
  a.task = get<std::string>(cfg, "task");
  a.actors = get_count<std::uint32_t>(cfg, "actors");
  a.population = get_count<std::uint32_t>(cfg, "population");
  a.genome_length = get_count<int>(cfg, "timestep_limit");
  return a;
}

}  // namespace ringrl::config
