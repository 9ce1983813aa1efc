// The HIRO run configuration (configs/hiro.json plus --set overrides) turned into the options
// of the learner wing (hiro::HiroTrainOptions) and of the actors (actors::HiroActorOptions).
// The learner process and every actor process read the same resolved config file through
// here, so the two sides can never disagree about the env, the goal space or the blob shape.
//
// "auto" choices (the paper's configuration, spec hiro.md §2): goal_space hiro_orig on the ant
// envs, hiro_xy on point-maze and the kinematic stand-ins; targets random (multi) on the
// Maze envs, fixed (single) on Push and Fall; kinematic envs take kinematic_max_step; the
// low-level noise is low_noise, or point_maze_low_noise on point-maze (§3).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/hiro/hiro_actor.h"
#include "learner/hiro/hiro_algorithm.h"

namespace ringrl::config {

/// Loads `file` (default: config_dir()/hiro.json), then applies each "key=value" of
/// `overrides`. Throws UsageError naming the bad key or value.
nlohmann::json resolve_hiro_config(const std::string& file, const std::vector<std::string>& overrides);

/// The env, goal space and target choice of a config, "auto" resolved.
struct HiroEnvChoice {
  std::string env;
  hiro::GoalSpaceKind goal_space = hiro::GoalSpaceKind::kXy;
  std::string targets;        // single | multi
  bool fixed_target = false;  // Maze kinds on single: the actor sets the target
  envs::maze::MazeEnvOptions env_options;
};
HiroEnvChoice hiro_env_choice(const nlohmann::json& cfg);

hiro::HiroTrainOptions hiro_train_options_from(const nlohmann::json& cfg);
actors::HiroActorOptions hiro_actor_options_from(const nlohmann::json& cfg);

}  // namespace ringrl::config
