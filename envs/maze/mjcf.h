// MJCF text for the MuJoCo maze envs, written from the model facts of spec hiro.md §10.1,
// §10.3 (ant) and §10.5 (point): our own ant and point models plus the maze geometry
// (walls, elevated platforms, the movable block) generated from a Layout.
//
// Pure functions of their inputs; safe from any thread. The text is compiled once per env
// kind (see mujoco_model.h) and the model is then shared read-only.
#pragma once

#include <string>

#include "envs/maze/layout.h"

namespace ringrl::envs::maze {

/// Ant model constants that the env code needs as well (§10.3).
inline constexpr double kAntTimestep = 0.02;     // seconds per mj_step
inline constexpr int kAntFrameSkip = 5;          // mj_steps per env step (dt = 0.1 s)
inline constexpr double kAntTorsoHeight = 0.75;  // torso start z above the walking surface
inline constexpr double kAntCtrlLimit = 30.0;    // motor ctrlrange [-30, 30]
inline constexpr int kAntNq = 15;                // ant's own qpos entries (free joint + 8)
inline constexpr int kAntNv = 14;                // ant's own dofs
inline constexpr int kAntNu = 8;                 // motors

/// Point model constants (§10.5).
inline constexpr double kPointTimestep = 0.02;
inline constexpr int kPointFrameSkip = 1;
inline constexpr int kPointNq = 3;  // x, y, rot
inline constexpr int kPointNv = 3;

/// MJCF of the ant in `layout` (Maze, Push or Fall at S = 8): bodies torso, 4 legs, the
/// block body "block" when the layout has one; joint names root, hip_1..4, ankle_1..4,
/// block_x / block_y / block_z; geoms floor, wall_<i>_<j>, platform_<i>_<j>, block_geom.
std::string ant_maze_mjcf(const Layout& layout);

/// MJCF of the point in `layout` (Maze at S = 4): body torso with joints ballx, bally, rot.
std::string point_maze_mjcf(const Layout& layout);

}  // namespace ringrl::envs::maze
