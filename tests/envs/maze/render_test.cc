// Top-down PNG pictures and trajectory CSV files: what a person uses to check a maze.
#include "envs/maze/render.h"

#include <png.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/errors.h"
#include "envs/maze/factory.h"
#include "envs/maze/trajectory.h"

namespace ringrl::envs::maze {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "ringrl_render_" + std::to_string(getpid()) + "_" + name;
}

struct Image {
  int width = 0;
  int height = 0;
  std::vector<unsigned char> rgb;
  Rgb at(int px, int py) const {
    const unsigned char* p = &rgb[(static_cast<size_t>(py) * width + px) * 3];
    return Rgb{p[0], p[1], p[2]};
  }
};

Image read_png(const std::string& path) {
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  EXPECT_TRUE(png_image_begin_read_from_file(&image, path.c_str())) << image.message;
  image.format = PNG_FORMAT_RGB;
  Image out;
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  EXPECT_TRUE(png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr)) << image.message;
  return out;
}

// Colour of the pixel at world point (x, y), computed independently of the renderer.
Rgb colour_at(const Image& img, const Layout& l, int ppc, double x, double y) {
  const Rect b = l.bounds();
  const int px = static_cast<int>((x - b.x0) / l.scale() * ppc);
  const int py = static_cast<int>((b.y1 - y) / l.scale() * ppc);
  return img.at(px, py);
}

TEST(MazeRender, EveryLayoutShowsCellsStartGoalAndBlock) {
  for (const MazeEnvInfo& info : maze_env_catalog()) {
    SCOPED_TRACE(info.name);
    const Layout l = maze_env_layout(info.name);
    const TaskSpec task = task_for(info.maze, info.scale, TaskMode::kSingle);
    const std::string path = temp_path(info.name + ".png");
    RenderOptions options;
    options.pixels_per_cell = 40;
    render_maze_png(path, l, task, {}, options);
    const Image img = read_png(path);
    ASSERT_EQ(img.width, l.cols() * 40);
    ASSERT_EQ(img.height, l.rows() * 40);
    const double q = 0.3 * l.scale();  // off-centre point in a cell, away from markers
    for (int i = 0; i < l.rows(); ++i) {
      for (int j = 0; j < l.cols(); ++j) {
        const Rgb c = colour_at(img, l, 40, l.cell_x(j) + q, l.cell_y(i) - q);
        switch (l.at(i, j)) {
          case Cell::kWall:
            EXPECT_EQ(c, kWallColour) << i << "," << j;
            break;
          case Cell::kChasm:
            EXPECT_EQ(c, kChasmColour) << i << "," << j;
            break;
          case Cell::kBlock:
            EXPECT_EQ(c, kBlockColour) << i << "," << j;
            break;
          case Cell::kFree:
          case Cell::kRobot: {
            // Free floor, unless the success ring happens to pass through this point.
            const Rgb floor = l.elevated() ? kPlatformColour : kFreeColour;
            EXPECT_TRUE(c == floor || c == kGoalColour) << i << "," << j;
            break;
          }
        }
      }
    }
    EXPECT_EQ(colour_at(img, l, 40, 0.0, 0.0), kStartColour);
    const std::vector<float>& g = task.primary_target();
    EXPECT_EQ(colour_at(img, l, 40, g[0], g[1]), kGoalColour);
    // The success ring: radius 5 around the goal, drawn on its inside edge.
    EXPECT_EQ(colour_at(img, l, 40, g[0] + 4.95, g[1]), kGoalColour);
    std::remove(path.c_str());
  }
}

TEST(MazeRender, TrajectoryIsDrawnPerEpisode) {
  const Layout l = maze_env_layout("ant-maze");
  const TaskSpec task = ant_maze_task();
  std::vector<TrajectoryRow> traj = {{0, 0, 4.0, 0.0, 0, 0},
                                     {0, 1, 14.0, 0.0, 0, 0},
                                     {0, 2, 14.0, 12.0, 0, 0},
                                     {1, 0, 10.0, 18.0, 0, 0},
                                     {1, 1, 2.0, 18.0, 0, 0}};
  const std::string path = temp_path("traj.png");
  render_maze_png(path, l, task, traj);
  const Image img = read_png(path);
  const int ppc = RenderOptions().pixels_per_cell;
  EXPECT_EQ(colour_at(img, l, ppc, 9.0, 0.0), kTrajectoryColour);
  EXPECT_EQ(colour_at(img, l, ppc, 14.0, 6.0), kTrajectoryColour);
  EXPECT_EQ(colour_at(img, l, ppc, 6.0, 18.0), kTrajectoryColour);
  // No line between the end of episode 0 and the start of episode 1.
  EXPECT_NE(colour_at(img, l, ppc, 12.0, 15.0), kTrajectoryColour);
  std::remove(path.c_str());
}

TEST(MazeRender, RejectsBadOptionsAndPaths) {
  const Layout l = maze_env_layout("ant-maze");
  RenderOptions tiny;
  tiny.pixels_per_cell = 1;
  EXPECT_THROW(render_maze_png(temp_path("x.png"), l, ant_maze_task(), {}, tiny), UsageError);
  EXPECT_THROW(render_maze_png("/nonexistent-dir/x.png", l, ant_maze_task(), {}), std::runtime_error);
}

TEST(MazeTrajectory, CsvRoundTrip) {
  const std::string path = temp_path("traj.csv");
  const std::vector<TrajectoryRow> rows = {
      {0, 0, 0.1, -0.2, 0.0, 16.5}, {0, 1, 0.123456789012, 1e-7, -16.25, 16.25}, {1, 0, -3.5, 19.5, 0.0, 3.5}};
  {
    std::ofstream out(path);
    write_trajectory_header(out);
    for (const TrajectoryRow& r : rows) write_trajectory_row(out, r);
  }
  const std::vector<TrajectoryRow> back = read_trajectory_csv(path);
  ASSERT_EQ(back.size(), rows.size());
  for (size_t k = 0; k < rows.size(); ++k) {
    EXPECT_EQ(back[k].episode, rows[k].episode);
    EXPECT_EQ(back[k].t, rows[k].t);
    EXPECT_EQ(back[k].x, rows[k].x);  // shortest round-trip formatting: exact
    EXPECT_EQ(back[k].y, rows[k].y);
    EXPECT_EQ(back[k].reward, rows[k].reward);
    EXPECT_EQ(back[k].distance, rows[k].distance);
  }
  {
    std::ofstream out(path);
    out << "episode,t,x,y,reward,distance\n0,0,1,oops,0,0\n";
  }
  EXPECT_THROW(read_trajectory_csv(path), UsageError);
  {
    std::ofstream out(path);
    out << "episode,t,x\n0,0,1\n";
  }
  EXPECT_THROW(read_trajectory_csv(path), UsageError);
  EXPECT_THROW(read_trajectory_csv(path + ".missing"), UsageError);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace ringrl::envs::maze
