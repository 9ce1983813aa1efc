// The program-synthesis run configuration (configs/pqt.json plus presets and --set
// overrides) turned into the options of the learner, the trainer and the actors. Both the
// learner process and every actor process read the same resolved config file through here,
// so the two sides can never disagree about shapes or scoring.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/pqt/pqt_actor.h"
#include "learner/pqt/pqt_trainer.h"

namespace ringrl::config {

/// The directory of the shipped configs: $RINGRL_CONFIG_DIR, else the source tree's configs/.
std::string config_dir();
/// Loads `file` (default: config_dir()/pqt.json), applies preset `mode` (if not empty), then
/// each "key=value" of `overrides`. Throws UsageError naming the bad key or value.
nlohmann::json resolve_pqt_config(const std::string& file, const std::string& mode,
                                  const std::vector<std::string>& overrides);

learner::LearnerOptions learner_options_from(const nlohmann::json& cfg);
learner::PqtTrainOptions train_options_from(const nlohmann::json& cfg);
/// "learner_threads": 0 (auto, see learner::resolve_learner_threads) or a count up to 256.
std::uint32_t learner_threads_from(const nlohmann::json& cfg);
actors::PqtActorOptions actor_options_from(const nlohmann::json& cfg);

}  // namespace ringrl::config
