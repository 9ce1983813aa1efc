#include "envs/maze/render.h"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "common/errors.h"

namespace ringrl::envs::maze {
namespace {

constexpr int kMinPixelsPerCell = 8;
constexpr int kMaxPixelsPerCell = 1024;
constexpr double kMarkerRadiusCells = 0.09;  // start and goal discs, in cells
constexpr double kOtherGoalRadiusCells = 0.06;
constexpr double kRingWidthPx = 2.0;  // success-radius circle
constexpr double kTrajectoryWidthPx = 2.0;
constexpr double kBlockInsetCells = 0.06;  // block drawn slightly inside its cell
constexpr double kGridWidthPx = 1.0;

// An RGB raster with world-coordinate drawing on top of pixel operations.
class Canvas {
 public:
  Canvas(const Layout& layout, const RenderOptions& options)
      : layout_(layout),
        options_(options),
        width_(layout.cols() * options.pixels_per_cell),
        height_(layout.rows() * options.pixels_per_cell),
        pixels_(static_cast<size_t>(width_) * static_cast<size_t>(height_) * 3, 0) {}

  int width() const noexcept { return width_; }
  int height() const noexcept { return height_; }
  const unsigned char* data() const noexcept { return pixels_.data(); }
  std::vector<unsigned char> take_pixels() noexcept { return std::move(pixels_); }
  double px_per_unit() const noexcept { return options_.pixels_per_cell / layout_.scale(); }

  void put(int px, int py, Rgb c) noexcept {
    if (px < 0 || py < 0 || px >= width_ || py >= height_) return;
    unsigned char* p = &pixels_[(static_cast<size_t>(py) * width_ + px) * 3];
    p[0] = c.r;
    p[1] = c.g;
    p[2] = c.b;
  }

  // Every pixel whose centre lies in the world rectangle.
  void fill_rect(const Rect& r, Rgb c) noexcept {
    double ax, ay, bx, by;
    world_to_pixel(layout_, options_, r.x0, r.y1, &ax, &ay);
    world_to_pixel(layout_, options_, r.x1, r.y0, &bx, &by);
    for (int py = static_cast<int>(std::ceil(ay - 0.5)); py + 0.5 <= by; ++py)
      for (int px = static_cast<int>(std::ceil(ax - 0.5)); px + 0.5 <= bx; ++px) put(px, py, c);
  }

  // Pixels whose centre is within [inner, outer] pixels of world point (x, y).
  void annulus(double x, double y, double inner_px, double outer_px, Rgb c) noexcept {
    double cx, cy;
    world_to_pixel(layout_, options_, x, y, &cx, &cy);
    const int x0 = static_cast<int>(std::floor(cx - outer_px));
    const int x1 = static_cast<int>(std::ceil(cx + outer_px));
    const int y0 = static_cast<int>(std::floor(cy - outer_px));
    const int y1 = static_cast<int>(std::ceil(cy + outer_px));
    for (int py = y0; py <= y1; ++py)
      for (int px = x0; px <= x1; ++px) {
        const double d = std::hypot(px + 0.5 - cx, py + 0.5 - cy);
        if (d >= inner_px && d <= outer_px) put(px, py, c);
      }
  }
  void disc(double x, double y, double radius_px, Rgb c) noexcept { annulus(x, y, 0.0, radius_px, c); }

  // Pixels within width/2 of the world segment (x0, y0)-(x1, y1).
  void segment(double wx0, double wy0, double wx1, double wy1, double width_px, Rgb c) noexcept {
    double ax, ay, bx, by;
    world_to_pixel(layout_, options_, wx0, wy0, &ax, &ay);
    world_to_pixel(layout_, options_, wx1, wy1, &bx, &by);
    const double h = 0.5 * width_px;
    const int x0 = static_cast<int>(std::floor(std::min(ax, bx) - h));
    const int x1 = static_cast<int>(std::ceil(std::max(ax, bx) + h));
    const int y0 = static_cast<int>(std::floor(std::min(ay, by) - h));
    const int y1 = static_cast<int>(std::ceil(std::max(ay, by) + h));
    const double dx = bx - ax;
    const double dy = by - ay;
    const double len2 = dx * dx + dy * dy;
    for (int py = y0; py <= y1; ++py)
      for (int px = x0; px <= x1; ++px) {
        const double qx = px + 0.5 - ax;
        const double qy = py + 0.5 - ay;
        const double s = len2 > 0.0 ? std::clamp((qx * dx + qy * dy) / len2, 0.0, 1.0) : 0.0;
        if (std::hypot(qx - s * dx, qy - s * dy) <= h) put(px, py, c);
      }
  }

 private:
  const Layout& layout_;
  const RenderOptions& options_;
  int width_;
  int height_;
  std::vector<unsigned char> pixels_;
};

Rgb cell_colour(const Layout& layout, Cell c) {
  switch (c) {
    case Cell::kWall:
      return kWallColour;
    case Cell::kChasm:
      return kChasmColour;
    case Cell::kFree:
    case Cell::kRobot:
    case Cell::kBlock:
      break;
  }
  return layout.elevated() ? kPlatformColour : kFreeColour;
}

}  // namespace

void world_to_pixel(const Layout& layout, const RenderOptions& options, double x, double y, double* px,
                    double* py) noexcept {
  const Rect b = layout.bounds();
  const double k = options.pixels_per_cell / layout.scale();
  *px = (x - b.x0) * k;
  *py = (b.y1 - y) * k;
}

RgbImage render_maze_rgb(const Layout& layout, const TaskSpec& task, const std::vector<TrajectoryRow>& trajectory,
                         const RenderOptions& options) {
  if (options.pixels_per_cell < kMinPixelsPerCell || options.pixels_per_cell > kMaxPixelsPerCell)
    throw UsageError("render: pixels per cell must be in [" + std::to_string(kMinPixelsPerCell) + ", " +
                     std::to_string(kMaxPixelsPerCell) + "], got " + std::to_string(options.pixels_per_cell));
  Canvas canvas(layout, options);
  const double cell_px = options.pixels_per_cell;

  // Cells, then their borders.
  for (int i = 0; i < layout.rows(); ++i)
    for (int j = 0; j < layout.cols(); ++j)
      canvas.fill_rect(layout.cell_rect(i, j), cell_colour(layout, layout.at(i, j)));
  const Rect b = layout.bounds();
  for (int j = 0; j <= layout.cols(); ++j) {
    const double x = b.x0 + j * layout.scale();
    canvas.segment(x, b.y0, x, b.y1, kGridWidthPx, kGridColour);
  }
  for (int i = 0; i <= layout.rows(); ++i) {
    const double y = b.y0 + i * layout.scale();
    canvas.segment(b.x0, y, b.x1, y, kGridWidthPx, kGridColour);
  }

  // The block at its start.
  if (layout.has_block()) {
    const double h = 0.5 * layout.scale() - kBlockInsetCells * layout.scale();
    canvas.fill_rect(Rect{layout.block_x() - h, layout.block_y() - h, layout.block_x() + h, layout.block_y() + h},
                     kBlockColour);
  }

  // Trajectories, one polyline per episode.
  for (size_t k = 1; k < trajectory.size(); ++k) {
    const TrajectoryRow& a = trajectory[k - 1];
    const TrajectoryRow& c = trajectory[k];
    if (a.episode != c.episode) continue;
    canvas.segment(a.x, a.y, c.x, c.y, kTrajectoryWidthPx, kTrajectoryColour);
  }

  // Evaluation targets: the success radius around the primary one, then the markers.
  const double ring_px = task.success_threshold * canvas.px_per_unit();
  for (size_t e = 0; e < task.eval_targets.size(); ++e) {
    const std::vector<float>& g = task.eval_targets[e];
    if (static_cast<int>(e) == task.primary_eval) {
      canvas.annulus(g[0], g[1], ring_px - kRingWidthPx, ring_px, kGoalColour);
      canvas.disc(g[0], g[1], kMarkerRadiusCells * cell_px, kGoalColour);
    } else {
      canvas.disc(g[0], g[1], kOtherGoalRadiusCells * cell_px, kOtherGoalColour);
    }
  }
  canvas.disc(0.0, 0.0, kMarkerRadiusCells * cell_px, kStartColour);
  const int width = canvas.width();
  const int height = canvas.height();
  return RgbImage{width, height, canvas.take_pixels()};
}

void render_maze_png(const std::string& path, const Layout& layout, const TaskSpec& task,
                     const std::vector<TrajectoryRow>& trajectory, const RenderOptions& options) {
  const RgbImage picture = render_maze_rgb(layout, task, trajectory, options);

  // Encode with libpng's simplified API.
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(picture.width);
  image.height = static_cast<png_uint_32>(picture.height);
  image.format = PNG_FORMAT_RGB;
  if (!png_image_write_to_file(&image, path.c_str(), /*convert_to_8bit=*/0, picture.pixels.data(),
                               /*row_stride=*/0, /*colormap=*/nullptr)) {
    const std::string why = image.message;
    png_image_free(&image);
    throw std::runtime_error("cannot write " + path + ": " + why);
  }
}

}  // namespace ringrl::envs::maze
