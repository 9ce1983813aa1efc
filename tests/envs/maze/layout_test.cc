// Layouts (spec §10.1-§10.2), tasks (§2, §6.4, §10.6) and the env.h helpers.
#include "envs/maze/layout.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/errors.h"
#include "envs/env.h"
#include "envs/maze/tasks.h"

namespace ringrl::envs::maze {
namespace {

using XY = std::pair<double, double>;

std::set<XY> centres(const Layout& l, std::initializer_list<Cell> kinds) {
  std::set<XY> out;
  for (Cell k : kinds)
    for (const auto& [i, j] : l.cells_of(k)) out.emplace(l.cell_x(j), l.cell_y(i));
  return out;
}

TEST(MazeLayout, AntMazeFreeCellsMatchSpec) {
  const Layout l = make_layout(MazeKind::kMaze, kAntScale);
  EXPECT_EQ(centres(l, {Cell::kFree, Cell::kRobot}),
            (std::set<XY>{{0, 0}, {8, 0}, {16, 0}, {16, 8}, {16, 16}, {8, 16}, {0, 16}}));
  EXPECT_EQ(centres(l, {Cell::kRobot}), (std::set<XY>{{0, 0}}));
  EXPECT_FALSE(l.elevated());
  EXPECT_FALSE(l.has_block());
  const Rect b = l.bounds();
  EXPECT_EQ(b.x0, -12);  // x = -8 .. 24 cell centres
  EXPECT_EQ(b.x1, 28);
  EXPECT_EQ(b.y0, -12);
  EXPECT_EQ(b.y1, 28);
}

TEST(MazeLayout, AntPushCellsAndBlockMatchSpec) {
  const Layout l = make_layout(MazeKind::kPush, kAntScale);
  EXPECT_EQ(centres(l, {Cell::kFree, Cell::kRobot}), (std::set<XY>{{0, 0}, {-8, 0}, {-8, 8}, {8, 8}, {0, 16}}));
  ASSERT_TRUE(l.has_block());
  EXPECT_EQ(l.block_x(), 0);
  EXPECT_EQ(l.block_y(), 8);
  EXPECT_TRUE(l.block_rule().slide_x);
  EXPECT_TRUE(l.block_rule().slide_y);
  EXPECT_FALSE(l.block_rule().fall);
  // The code grid has a wall at (16, 8) (the paper lists it as free; §10.2 follows the code).
  EXPECT_TRUE(l.in_wall(16, 8));
}

TEST(MazeLayout, AntFallIsElevatedWithChasmAndBlock) {
  const Layout l = make_layout(MazeKind::kFall, kAntScale);
  EXPECT_EQ(centres(l, {Cell::kFree, Cell::kRobot}), (std::set<XY>{{0, 0}, {8, 0}, {0, 8}, {0, 24}, {8, 24}}));
  EXPECT_EQ(centres(l, {Cell::kChasm}), (std::set<XY>{{0, 16}, {8, 16}}));
  EXPECT_TRUE(l.elevated());
  EXPECT_EQ(l.floor_height(), 4.0);
  EXPECT_EQ(l.wall_height(), 4.0);
  ASSERT_TRUE(l.has_block());
  EXPECT_EQ(l.block_x(), 8);
  EXPECT_EQ(l.block_y(), 8);
  EXPECT_FALSE(l.block_rule().slide_x);
  EXPECT_TRUE(l.block_rule().slide_y);
  EXPECT_TRUE(l.block_rule().fall);
  // Chasm extent x in [-4, 12], y in [12, 20].
  int i = 0, j = 0;
  ASSERT_TRUE(l.locate(-3.9, 12.1, &i, &j));
  EXPECT_EQ(l.at(i, j), Cell::kChasm);
  ASSERT_TRUE(l.locate(11.9, 19.9, &i, &j));
  EXPECT_EQ(l.at(i, j), Cell::kChasm);
  ASSERT_TRUE(l.locate(0, 11.9, &i, &j));
  EXPECT_NE(l.at(i, j), Cell::kChasm);
}

TEST(MazeLayout, PointMazeIsAntMazeAtScaleFour) {
  const Layout l = make_layout(MazeKind::kMaze, kPointScale);
  EXPECT_EQ(centres(l, {Cell::kFree, Cell::kRobot}),
            (std::set<XY>{{0, 0}, {4, 0}, {8, 0}, {8, 4}, {8, 8}, {4, 8}, {0, 8}}));
  EXPECT_EQ(l.wall_height(), 2.0);
  EXPECT_TRUE(l.in_wall(12, 0));
  EXPECT_TRUE(l.in_wall(10, 0));  // border of the wall square counts
  EXPECT_FALSE(l.in_wall(9.99, 0));
}

TEST(MazeLayout, RowsRoundTripAndCellGeometry) {
  const std::vector<std::string> rows = {"#####", "#...#", "###.#", "#R..#", "#####"};
  const Layout l("t", rows, 8.0, BlockRule{});
  EXPECT_EQ(l.rows_top_down(), rows);
  const Rect r = l.cell_rect(1, 1);  // the robot cell
  EXPECT_EQ(r.x0, -4);
  EXPECT_EQ(r.x1, 4);
  EXPECT_EQ(r.y0, -4);
  EXPECT_EQ(r.y1, 4);
  EXPECT_EQ(l.wall_rects().size(), 18u);
  int i = 0, j = 0;
  EXPECT_FALSE(l.locate(-12.5, 0, &i, &j));
}

TEST(MazeLayout, RejectsBadGrids) {
  EXPECT_THROW(Layout("t", {"#.#", "##"}, 8, BlockRule{}), UsageError);
  EXPECT_THROW(Layout("t", {"#.#", "#x#"}, 8, BlockRule{}), UsageError);
  EXPECT_THROW(Layout("t", {"#.#", "#.#"}, 8, BlockRule{}), UsageError);  // no robot
  EXPECT_THROW(Layout("t", {"#RR#"}, 8, BlockRule{}), UsageError);        // two robots
  EXPECT_THROW(Layout("t", {"#R#"}, 0, BlockRule{}), UsageError);
}

TEST(MazeTasks, TableOfSpec) {
  const TaskSpec maze = ant_maze_task();
  EXPECT_EQ(maze.goal_indices, (std::vector<int>{0, 1}));
  EXPECT_EQ(maze.primary_target(), (std::vector<float>{0, 16}));
  EXPECT_EQ(maze.eval_targets.size(), 3u);
  EXPECT_EQ(maze.train_sampler.low, (std::vector<float>{-4, -4}));
  EXPECT_EQ(maze.train_sampler.high, (std::vector<float>{20, 20}));
  EXPECT_EQ(maze.success_threshold, 5.0f);

  const TaskSpec push = ant_push_task(TaskMode::kSingle);
  EXPECT_EQ(push.primary_target(), (std::vector<float>{0, 19}));
  EXPECT_EQ(push.train_sampler.low, push.train_sampler.high);
  EXPECT_EQ(ant_push_task(TaskMode::kMulti).train_sampler.low, (std::vector<float>{-16, -4}));

  const TaskSpec fall = ant_fall_task(TaskMode::kSingle);
  EXPECT_EQ(fall.goal_indices, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(fall.primary_target(), (std::vector<float>{0, 27, 4.5f}));
  EXPECT_EQ(ant_fall_task(TaskMode::kMulti).train_sampler.high, (std::vector<float>{12, 28, 5}));

  const TaskSpec point = point_maze_task();
  EXPECT_EQ(point.primary_target(), (std::vector<float>{0, 8}));
  EXPECT_EQ(point.train_sampler.low, (std::vector<float>{-2, -2}));

  EXPECT_EQ(task_for(MazeKind::kMaze, kPointScale, TaskMode::kSingle).name, "point_maze");
  EXPECT_THROW(task_for(MazeKind::kPush, kPointScale, TaskMode::kSingle), UsageError);
}

TEST(MazeTasks, DistanceRewardAndSuccess) {
  const TaskSpec maze = ant_maze_task();
  std::vector<float> obs(30, 0.0f);
  const std::vector<float> g = {0, 16};
  EXPECT_FLOAT_EQ(maze.distance(obs, g), 16.0f);
  EXPECT_FLOAT_EQ(maze.reward(obs, g), -16.0f);
  EXPECT_FALSE(maze.success(obs, g));
  obs[0] = 3.0f;
  obs[1] = 12.0f;   // distance exactly 5: not a success (strictly below)
  obs[2] = 100.0f;  // z is not part of the 2-D task
  EXPECT_FLOAT_EQ(maze.distance(obs, g), 5.0f);
  EXPECT_FALSE(maze.success(obs, g));
  obs[1] = 12.5f;
  EXPECT_TRUE(maze.success(obs, g));

  const TaskSpec fall = ant_fall_task(TaskMode::kSingle);
  std::vector<float> s(30, 0.0f);
  s[1] = 27.0f;
  s[2] = 0.5f;  // fallen: 4 below the target height
  EXPECT_FLOAT_EQ(fall.distance(s, fall.primary_target()), 4.0f);
  s[2] = -0.5f;
  EXPECT_FALSE(fall.success(s, fall.primary_target()));
}

TEST(MazeTasks, SamplerStaysInBoxAndIsSeeded) {
  const TaskSpec maze = ant_maze_task();
  Rng a(5), b(5);
  std::vector<float> ga(2), gb(2);
  float lo = 1e9f, hi = -1e9f;
  for (int k = 0; k < 10000; ++k) {
    maze.sample(a, ga);
    maze.sample(b, gb);
    ASSERT_EQ(ga, gb);
    ASSERT_TRUE(maze.train_sampler.contains(ga));
    lo = std::min(lo, ga[0]);
    hi = std::max(hi, ga[0]);
  }
  EXPECT_LT(lo, -3.9f);  // covers the box
  EXPECT_GT(hi, 19.9f);
  const TaskSpec push = ant_push_task(TaskMode::kSingle);
  push.sample(a, ga);
  EXPECT_EQ(ga, (std::vector<float>{0, 19}));
}

TEST(EnvRng, UniformAndNormalMoments) {
  Rng r(42);
  double sum = 0, sum2 = 0, nsum = 0, nsum2 = 0;
  const int n = 200000;
  for (int k = 0; k < n; ++k) {
    const double u = r.uniform01();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum2 += u * u;
    const double z = r.normal();
    nsum += z;
    nsum2 += z * z;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.005);
  EXPECT_NEAR(sum2 / n - 0.25, 1.0 / 12.0, 0.005);
  EXPECT_NEAR(nsum / n, 0.0, 0.01);
  EXPECT_NEAR(nsum2 / n, 1.0, 0.02);
  Rng x(1), y(2);
  EXPECT_NE(x.next(), y.next());
}

}  // namespace
}  // namespace ringrl::envs::maze
