#include "envs/maze/layout.h"

#include <algorithm>
#include <cmath>

#include "common/errors.h"

namespace ringrl::envs::maze {
namespace {

// §10.2 grids, as seen from above (+y up, +x right). Coordinates at S = 8:
// AntMaze x = -8..24, y = -8..24; goal (0, 16) at the end of the corridor.
const std::vector<std::string> kMazeRows = {
    "#####", "#...#", "###.#", "#R..#", "#####",
};
// AntPush x = -16..16, y = -8..24; block at (0, 8); goal (0, 19).
const std::vector<std::string> kPushRows = {
    "#####", "##.##", "#.B.#", "#.R##", "#####",
};
// AntFall x = -8..16, y = -8..32; chasm x in [-4, 12], y in [12, 20]; goal (0, 27, 4.5).
const std::vector<std::string> kFallRows = {
    "####", "#..#", "#~~#", "#.B#", "#R.#", "####",
};

bool valid_cell_char(char c) {
  switch (static_cast<Cell>(c)) {
    case Cell::kFree:
    case Cell::kWall:
    case Cell::kRobot:
    case Cell::kBlock:
    case Cell::kChasm:
      return true;
  }
  return false;
}

}  // namespace

Layout::Layout(std::string name, const std::vector<std::string>& rows_top_down, double scale, BlockRule block_rule)
    : name_(std::move(name)), scale_(scale), block_rule_(block_rule) {
  if (!(scale > 0.0)) throw UsageError("maze " + name_ + ": cell size must be > 0");
  if (rows_top_down.empty() || rows_top_down.front().empty()) throw UsageError("maze " + name_ + ": empty grid");
  rows_ = static_cast<int>(rows_top_down.size());
  cols_ = static_cast<int>(rows_top_down.front().size());
  cells_.resize(static_cast<size_t>(rows_ * cols_));
  int robots = 0;
  int blocks = 0;
  int robot_i = 0;
  int robot_j = 0;
  for (int r = 0; r < rows_; ++r) {
    const std::string& row = rows_top_down[static_cast<size_t>(r)];
    if (static_cast<int>(row.size()) != cols_)
      throw UsageError("maze " + name_ + ": row '" + row + "' has " + std::to_string(row.size()) + " cells, expected " +
                       std::to_string(cols_));
    const int i = rows_ - 1 - r;  // first string = top = largest y
    for (int j = 0; j < cols_; ++j) {
      const char c = row[static_cast<size_t>(j)];
      if (!valid_cell_char(c))
        throw UsageError("maze " + name_ + ": unknown cell character '" + std::string(1, c) +
                         "' (expected one of . # R B ~)");
      const Cell cell = static_cast<Cell>(c);
      cells_[static_cast<size_t>(i * cols_ + j)] = cell;
      if (cell == Cell::kRobot) {
        ++robots;
        robot_i = i;
        robot_j = j;
      }
      if (cell == Cell::kBlock) ++blocks;
      if (cell == Cell::kChasm) elevated_ = true;
    }
  }
  if (robots != 1)
    throw UsageError("maze " + name_ + ": expected exactly one robot cell 'R', found " + std::to_string(robots));
  if (blocks > 1)
    throw UsageError("maze " + name_ + ": at most one block 'B' is supported, found " + std::to_string(blocks));
  origin_x_ = robot_j * scale_;
  origin_y_ = robot_i * scale_;
  has_block_ = blocks == 1;
  for (const auto& [i, j] : cells_of(Cell::kBlock)) {
    block_x_ = cell_x(j);
    block_y_ = cell_y(i);
  }
}

Rect Layout::cell_rect(int i, int j) const noexcept {
  const double h = 0.5 * scale_;
  return Rect{cell_x(j) - h, cell_y(i) - h, cell_x(j) + h, cell_y(i) + h};
}

bool Layout::locate(double x, double y, int* i, int* j) const noexcept {
  const double fj = std::floor((x + origin_x_) / scale_ + 0.5);
  const double fi = std::floor((y + origin_y_) / scale_ + 0.5);
  if (!(fj >= 0 && fj < cols_ && fi >= 0 && fi < rows_)) return false;
  *i = static_cast<int>(fi);
  *j = static_cast<int>(fj);
  return true;
}

bool Layout::in_wall(double x, double y) const noexcept {
  for (int i = 0; i < rows_; ++i)
    for (int j = 0; j < cols_; ++j)
      if (at(i, j) == Cell::kWall && cell_rect(i, j).contains(x, y)) return true;
  return false;
}

Rect Layout::bounds() const noexcept {
  const Rect lo = cell_rect(0, 0);
  const Rect hi = cell_rect(rows_ - 1, cols_ - 1);
  return Rect{lo.x0, lo.y0, hi.x1, hi.y1};
}

double Layout::floor_height() const noexcept { return elevated_ ? wall_height() : 0.0; }

double Layout::wall_height() const noexcept { return kHeightFactor * scale_; }

std::vector<std::pair<int, int>> Layout::cells_of(Cell kind) const {
  std::vector<std::pair<int, int>> out;
  for (int i = 0; i < rows_; ++i)
    for (int j = 0; j < cols_; ++j)
      if (at(i, j) == kind) out.emplace_back(i, j);
  return out;
}

std::vector<Rect> Layout::wall_rects() const {
  std::vector<Rect> out;
  for (const auto& [i, j] : cells_of(Cell::kWall)) out.push_back(cell_rect(i, j));
  return out;
}

std::vector<std::string> Layout::rows_top_down() const {
  std::vector<std::string> out;
  for (int i = rows_ - 1; i >= 0; --i) {
    std::string row;
    for (int j = 0; j < cols_; ++j) row.push_back(static_cast<char>(at(i, j)));
    out.push_back(row);
  }
  return out;
}

Layout make_layout(MazeKind kind, double scale) {
  switch (kind) {
    case MazeKind::kMaze:
      return Layout("maze", kMazeRows, scale, BlockRule{});
    case MazeKind::kPush:
      return Layout("push", kPushRows, scale, BlockRule{/*slide_x=*/true, /*slide_y=*/true, /*fall=*/false});
    case MazeKind::kFall:
      return Layout("fall", kFallRows, scale, BlockRule{/*slide_x=*/false, /*slide_y=*/true, /*fall=*/true});
  }
  throw UsageError("unknown maze kind");
}

}  // namespace ringrl::envs::maze
