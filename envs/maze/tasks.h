// Navigation tasks of spec hiro.md §2 (env gin table), §6.4 and §10.6: training samplers for
// the context G, evaluation targets and the success threshold, for each maze.
//
// Pure functions returning immutable TaskSpec values; safe from any thread.
#pragma once

#include <string>

#include "envs/env.h"
#include "envs/maze/layout.h"

namespace ringrl::envs::maze {

/// Training target of Push/Fall: fixed at the eval target (`*_single`, the paper's setting)
/// or uniform over a box (`*_multi`). AntMaze and PointMaze always train on uniform targets.
enum class TaskMode { kSingle, kMulti };

/// "single" -> kSingle, "multi" -> kMulti; anything else throws UsageError naming `what` and
/// the value (the one parser of the word: CLI, configs, Python).
TaskMode parse_task_mode(const std::string& word, const std::string& what);
/// The word parse_task_mode reads.
const char* task_mode_name(TaskMode mode) noexcept;

/// Success iff the final-step task distance is below this (§10.6).
inline constexpr float kSuccessThreshold = 5.0f;
/// Steps per episode N (all maze envs).
inline constexpr int kEpisodeLength = 500;
/// Time feature obs[last] = t * this (0 at reset, 0.5 at the end of an episode).
inline constexpr double kTimeFeatureScale = 0.001;

/// ant_maze: G uniform in [-4, 20]^2; eval (16, 0), (16, 16), (0, 16); paper metric (0, 16).
TaskSpec ant_maze_task();
/// ant_push_single / ant_push_multi: eval (0, 19); multi trains on x in [-16, 16],
/// y in [-4, 20].
TaskSpec ant_push_task(TaskMode mode);
/// ant_fall_single / ant_fall_multi: 3-D, eval (0, 27, 4.5); multi trains on x in [-4, 12],
/// y in [-4, 28], z in [0, 5].
TaskSpec ant_fall_task(TaskMode mode);
/// point_maze: G uniform in [-2, 10]^2; eval (8, 0), (8, 8), (0, 8). The primary target is
/// (0, 8), the end of the corridor (the PointMaze analogue of AntMaze's (0, 16)).
TaskSpec point_maze_task();

/// The task that goes with a layout kind at a cell size (Maze at S = 4 is PointMaze's task).
/// Throws UsageError for Push/Fall at any cell size other than 8.
TaskSpec task_for(MazeKind kind, double scale, TaskMode mode);

}  // namespace ringrl::envs::maze
