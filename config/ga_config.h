// The GA run configuration (configs/ga.json plus --set overrides) turned into the options of
// the learner wing and of the evaluator actors. Both processes read the same resolved config
// file through here, so they cannot disagree about the population, the genome length or the
// task.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/ga/ga_actor.h"
#include "learner/ga/ga_algorithm.h"

namespace ringrl::config {

/// Loads `file` (default: config_dir()/ga.json), then applies each "key=value" of
/// `overrides`. Throws UsageError naming the bad key or value; unsigned settings are checked
/// as every command's are (common/runfiles/config.h).
nlohmann::json resolve_ga_config(const std::string& file, const std::vector<std::string>& overrides);

/// The learner's options (run_dir, resume and config_path are the caller's).
ga::GaOptions ga_options_from(const nlohmann::json& cfg);
/// An actor's options (segment and slot are the caller's).
actors::GaActorOptions ga_actor_options_from(const nlohmann::json& cfg);

}  // namespace ringrl::config
