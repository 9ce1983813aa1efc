// Top-down PNG pictures of a maze (libpng): cells, the block's start, the robot start, the
// evaluation targets with their success radius, and optional trajectories. This is how a
// person checks a layout against the spec.
//
// Pure function of its inputs; safe from any thread.
#pragma once

#include <string>
#include <vector>

#include "envs/env.h"
#include "envs/maze/layout.h"
#include "envs/maze/trajectory.h"

namespace ringrl::envs::maze {

/// Colours (RGB) of the picture, named so that tests and docs can refer to them.
struct Rgb {
  unsigned char r, g, b;
  bool operator==(const Rgb& o) const noexcept { return r == o.r && g == o.g && b == o.b; }
  bool operator!=(const Rgb& o) const noexcept { return !(*this == o); }
};
inline constexpr Rgb kFreeColour{236, 234, 224};      // walkable floor
inline constexpr Rgb kPlatformColour{214, 208, 186};  // walkable, raised (elevated mazes)
inline constexpr Rgb kWallColour{80, 80, 88};
inline constexpr Rgb kChasmColour{24, 28, 60};
inline constexpr Rgb kBlockColour{226, 146, 44};      // block at its start
inline constexpr Rgb kStartColour{40, 160, 60};       // robot start (origin)
inline constexpr Rgb kGoalColour{210, 40, 40};        // primary evaluation target
inline constexpr Rgb kOtherGoalColour{170, 60, 170};  // further evaluation targets
inline constexpr Rgb kTrajectoryColour{40, 90, 220};
inline constexpr Rgb kGridColour{190, 188, 178};  // cell borders

struct RenderOptions {
  int pixels_per_cell = 96;
};

/// Pixel (column, row) of world point (x, y) in a picture of `layout` (row 0 is the top,
/// the largest y). May lie outside the picture.
void world_to_pixel(const Layout& layout, const RenderOptions& options, double x, double y, double* px,
                    double* py) noexcept;

/// An RGB picture: height x width x 3 bytes, row-major, row 0 at the top.
struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<unsigned char> pixels;
};

/// The picture that render_maze_png() writes, as pixels (the Python env's render()). Throws
/// UsageError for bad options.
RgbImage render_maze_rgb(const Layout& layout, const TaskSpec& task, const std::vector<TrajectoryRow>& trajectory,
                         const RenderOptions& options = RenderOptions());

/// Writes the picture to `path`. Throws UsageError for bad options and std::runtime_error
/// when the file cannot be written.
void render_maze_png(const std::string& path, const Layout& layout, const TaskSpec& task,
                     const std::vector<TrajectoryRow>& trajectory, const RenderOptions& options = RenderOptions());

}  // namespace ringrl::envs::maze
