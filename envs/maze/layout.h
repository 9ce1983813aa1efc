// Maze layouts of spec hiro.md §10.1-§10.2: character grids turned into cells with world
// coordinates, shared by the MuJoCo ant and point mazes and the kinematic stand-in.
//
// A Layout is an immutable value built once per env kind and shared read-only by all its
// instances (any thread may read it). Coordinates: cell (row i, col j) has its centre at
// (j*S - x_r, i*S - y_r), so the robot cell 'r' is the origin; rows increase with +y.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ringrl::envs::maze {

/// What a grid cell holds.
enum class Cell : char {
  kFree = '.',   // walkable
  kWall = '#',   // wall block, S x S x H*S
  kRobot = 'R',  // walkable, robot start
  kBlock = 'B',  // walkable, movable block starts here
  kChasm = '~',  // no platform (elevated mazes only)
};

/// The three grids of §10.2.
enum class MazeKind { kMaze, kPush, kFall };

/// Axis-aligned rectangle [x0, x1] x [y0, y1] in world units.
struct Rect {
  double x0, y0, x1, y1;
  double cx() const noexcept { return 0.5 * (x0 + x1); }
  double cy() const noexcept { return 0.5 * (y0 + y1); }
  bool contains(double x, double y) const noexcept { return x >= x0 && x <= x1 && y >= y0 && y <= y1; }
};

/// How a movable block may slide (§10.1).
struct BlockRule {
  bool slide_x = false;
  bool slide_y = false;
  bool fall = false;  // has a z slide: can drop into a chasm
};

/// A parsed maze: cell kinds, world geometry and the block rule.
class Layout {
 public:
  /// Parses `rows_top_down` (as seen from above: first string = largest y) at cell size
  /// `scale`. Throws UsageError unless the grid is rectangular, uses only the Cell characters
  /// and has exactly one robot cell.
  Layout(std::string name, const std::vector<std::string>& rows_top_down, double scale, BlockRule block_rule);

  const std::string& name() const noexcept { return name_; }
  double scale() const noexcept { return scale_; }
  int rows() const noexcept { return rows_; }
  int cols() const noexcept { return cols_; }
  /// Cell (i, j); i counts rows upward from the lowest-y row.
  Cell at(int i, int j) const noexcept { return cells_[static_cast<size_t>(i * cols_ + j)]; }
  /// Centre of cell (i, j).
  double cell_x(int j) const noexcept { return j * scale_ - origin_x_; }
  double cell_y(int i) const noexcept { return i * scale_ - origin_y_; }
  /// Square of cell (i, j).
  Rect cell_rect(int i, int j) const noexcept;
  /// Cell holding world point (x, y); false when outside the grid. On a shared border the
  /// cell with the larger index wins.
  bool locate(double x, double y, int* i, int* j) const noexcept;
  /// True when (x, y) lies inside (or on the border of) any wall cell square.
  bool in_wall(double x, double y) const noexcept;
  /// The whole grid as a rectangle.
  Rect bounds() const noexcept;

  /// Elevated maze: has a chasm, so every non-chasm cell sits on a platform (§10.1).
  bool elevated() const noexcept { return elevated_; }
  /// Height of the walking surface (H*S when elevated, else 0).
  double floor_height() const noexcept;
  /// Wall / platform height H*S.
  double wall_height() const noexcept;
  bool has_block() const noexcept { return has_block_; }
  /// Centre (x, y) of the block's start cell; only when has_block().
  double block_x() const noexcept { return block_x_; }
  double block_y() const noexcept { return block_y_; }
  const BlockRule& block_rule() const noexcept { return block_rule_; }

  /// Cells of one kind, as (i, j) pairs in row-major order.
  std::vector<std::pair<int, int>> cells_of(Cell kind) const;
  /// Wall squares (one per wall cell).
  std::vector<Rect> wall_rects() const;
  /// The grid again, as seen from above (for messages and docs).
  std::vector<std::string> rows_top_down() const;

 private:
  std::string name_;
  double scale_;
  int rows_ = 0;
  int cols_ = 0;
  std::vector<Cell> cells_;
  double origin_x_ = 0.0;
  double origin_y_ = 0.0;
  bool elevated_ = false;
  bool has_block_ = false;
  double block_x_ = 0.0;
  double block_y_ = 0.0;
  BlockRule block_rule_;
};

/// Maze height factor H (§10.1).
inline constexpr double kHeightFactor = 0.5;
/// Ant maze cell size S.
inline constexpr double kAntScale = 8.0;
/// PointMaze cell size S.
inline constexpr double kPointScale = 4.0;

/// The §10.2 layout of `kind` at cell size `scale`.
Layout make_layout(MazeKind kind, double scale);

}  // namespace ringrl::envs::maze
