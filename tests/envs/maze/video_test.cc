// Maze videos (envs/maze/video.h): MuJoCo's renderer on OSMesa draws the ant maze as it moves,
// and the MP4 and GIF writers hold exactly the frames given, written whole or not at all.
// Skipped in builds without the video libraries (the sanitizer builds).
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/errors.h"
#include "envs/maze/factory.h"
#include "envs/maze/video.h"

namespace ringrl::envs::maze {
namespace {

namespace fs = std::filesystem;

constexpr int kWidth = 64, kHeight = 48;

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / ("ringrl-video-test-" + std::to_string(::getpid()) + "-" + name);
}

// A few random-action steps of the ant maze, one frame after each.
std::vector<RgbImage> ant_frames(int count, const double* marker) {
  auto env = make_maze_env("ant-maze");
  std::vector<float> s(static_cast<std::size_t>(env->spec().obs_dim)), a(static_cast<std::size_t>(env->spec().action_dim));
  env->reset(3, Span<float>(s));
  MazeCamera camera(*env, kWidth, kHeight);
  Rng rng(5);
  std::vector<RgbImage> out;
  for (int i = 0; i < count; ++i) {
    const Box& box = env->spec().action;
    for (std::size_t j = 0; j < a.size(); ++j) a[j] = static_cast<float>(rng.uniform(box.low[j], box.high[j]));
    (void)env->step(Span<const float>(a), Span<float>(s));
    out.push_back(camera.frame(*env, marker));
  }
  return out;
}

TEST(MazeVideo, FramesShowTheMazeAndTheMarker) {
  if (!video_support()) GTEST_SKIP() << "this build has no video libraries";
  const std::vector<RgbImage> plain = ant_frames(2, nullptr);
  ASSERT_EQ(plain[0].width, kWidth);
  ASSERT_EQ(plain[0].height, kHeight);
  ASSERT_EQ(plain[0].pixels.size(), static_cast<std::size_t>(kWidth * kHeight * 3));
  // Not a blank picture: walls, floor and sky differ.
  int distinct = 0;
  for (std::size_t i = 3; i < plain[0].pixels.size(); i += 3)
    distinct += plain[0].pixels[i] != plain[0].pixels[0] || plain[0].pixels[i + 1] != plain[0].pixels[1];
  EXPECT_GT(distinct, kWidth * kHeight / 10);
  // A marker over the start changes the picture, mostly toward red.
  const double start[2] = {0.0, 0.0};
  const std::vector<RgbImage> marked = ant_frames(2, start);
  int redder = 0;
  for (std::size_t i = 0; i < marked[1].pixels.size(); i += 3)
    redder += marked[1].pixels[i] > plain[1].pixels[i] + 40 && marked[1].pixels[i + 1] + 40 < plain[1].pixels[i + 1];
  EXPECT_GT(redder, 4);
}

TEST(MazeVideo, Mp4AndGifHoldEveryFrame) {
  if (!video_support()) GTEST_SKIP() << "this build has no video libraries";
  const std::vector<RgbImage> frames = ant_frames(7, nullptr);
  for (const char* ext : {".mp4", ".gif"}) {
    const fs::path path = temp_file(std::string("frames") + ext);
    VideoWriter w(path.string(), kWidth, kHeight, 25);
    for (const RgbImage& f : frames) w.add(f);
    EXPECT_FALSE(fs::exists(path)) << "the file appears only when it is complete";
    w.close();
    EXPECT_EQ(w.frames(), 7);
    EXPECT_EQ(count_video_frames(path.string()), 7) << ext;
    EXPECT_FALSE(fs::exists(path.string() + ".tmp"));
    fs::remove(path);
  }
}

TEST(MazeVideo, BadRequestsLeaveNothingBehind) {
  if (!video_support()) GTEST_SKIP() << "this build has no video libraries";
  const fs::path avi = temp_file("x.avi");
  EXPECT_THROW(VideoWriter(avi.string(), kWidth, kHeight, 25), UsageError);
  EXPECT_FALSE(fs::exists(avi.string() + ".tmp"));
  EXPECT_THROW(VideoWriter(temp_file("x.gif").string(), 8, kHeight, 25), UsageError);
  const fs::path gif = temp_file("abandoned.gif");
  {
    VideoWriter w(gif.string(), kWidth, kHeight, 25);
    w.add(ant_frames(1, nullptr)[0]);
  }  // never closed
  EXPECT_FALSE(fs::exists(gif));
  EXPECT_FALSE(fs::exists(gif.string() + ".tmp"));
  auto kinematic = make_maze_env("kinematic-maze");
  EXPECT_THROW(MazeCamera(*kinematic, kWidth, kHeight), UsageError);
}

}  // namespace
}  // namespace ringrl::envs::maze
