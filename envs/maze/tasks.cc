#include "envs/maze/tasks.h"

#include <string>

#include "common/errors.h"

namespace ringrl::envs::maze {
namespace {

const std::vector<int> kXy = {0, 1};
const std::vector<int> kXyz = {0, 1, 2};

TaskSpec make_task(std::string name, std::vector<int> indices, Box sampler, std::vector<std::vector<float>> evals,
                   int primary) {
  TaskSpec t;
  t.name = std::move(name);
  t.goal_indices = std::move(indices);
  t.train_sampler = std::move(sampler);
  t.eval_targets = std::move(evals);
  t.primary_eval = primary;
  t.success_threshold = kSuccessThreshold;
  return t;
}

}  // namespace

TaskSpec ant_maze_task() {
  return make_task("ant_maze", kXy, Box{{-4.0f, -4.0f}, {20.0f, 20.0f}}, {{16.0f, 0.0f}, {16.0f, 16.0f}, {0.0f, 16.0f}},
                   /*primary=*/2);
}

TaskSpec ant_push_task(TaskMode mode) {
  const std::vector<float> target = {0.0f, 19.0f};
  if (mode == TaskMode::kSingle) return make_task("ant_push_single", kXy, Box{target, target}, {target}, 0);
  return make_task("ant_push_multi", kXy, Box{{-16.0f, -4.0f}, {16.0f, 20.0f}}, {target}, 0);
}

TaskSpec ant_fall_task(TaskMode mode) {
  const std::vector<float> target = {0.0f, 27.0f, 4.5f};
  if (mode == TaskMode::kSingle) return make_task("ant_fall_single", kXyz, Box{target, target}, {target}, 0);
  return make_task("ant_fall_multi", kXyz, Box{{-4.0f, -4.0f, 0.0f}, {12.0f, 28.0f, 5.0f}}, {target}, 0);
}

TaskSpec point_maze_task() {
  return make_task("point_maze", kXy, Box{{-2.0f, -2.0f}, {10.0f, 10.0f}}, {{8.0f, 0.0f}, {8.0f, 8.0f}, {0.0f, 8.0f}},
                   /*primary=*/2);
}

TaskMode parse_task_mode(const std::string& word, const std::string& what) {
  if (word == task_mode_name(TaskMode::kSingle)) return TaskMode::kSingle;
  if (word == task_mode_name(TaskMode::kMulti)) return TaskMode::kMulti;
  throw UsageError(what + " '" + word + "': expected single or multi");
}

const char* task_mode_name(TaskMode mode) noexcept { return mode == TaskMode::kSingle ? "single" : "multi"; }

TaskSpec task_for(MazeKind kind, double scale, TaskMode mode) {
  const bool ant_scale = scale == kAntScale;
  switch (kind) {
    case MazeKind::kMaze:
      if (ant_scale) return ant_maze_task();
      if (scale == kPointScale) return point_maze_task();
      break;
    case MazeKind::kPush:
      if (ant_scale) return ant_push_task(mode);
      break;
    case MazeKind::kFall:
      if (ant_scale) return ant_fall_task(mode);
      break;
  }
  throw UsageError("no task is defined for this maze at cell size " + std::to_string(scale) +
                   " (Maze: 8 or 4; Push, Fall: 8)");
}

}  // namespace ringrl::envs::maze
