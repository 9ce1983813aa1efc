// Videos of the MuJoCo mazes: MuJoCo's own renderer on an offscreen software OpenGL context
// (OSMesa, Mesa's llvmpipe: no display, no GPU), and the files the frames go into (MP4 through
// FFmpeg's libavformat/libavcodec, GIF through giflib).
//
// Contract:
// * MazeCamera draws a MuJoCo maze env (AntMaze/Push/Fall, PointMaze) as it is now, from a
//   fixed camera above the maze, tilted, that keeps the whole maze in view; an optional marker
//   (a translucent sphere at world (x, y)) shows e.g. the high level's subgoal. UsageError for
//   an env without MuJoCo physics or a size outside [16, 4096]; std::runtime_error when no
//   OpenGL context can be made. One thread uses an instance; one instance per thread at most
//   (the context is the thread's current one while it draws).
// * VideoWriter writes frames of one size to `path` by its extension: ".mp4" (H.264, or MPEG-4
//   part 2 where FFmpeg has no H.264 encoder; yuv420p, so odd sizes lose their last row or
//   column) or ".gif" (a fixed 252-colour palette, looping). It writes `path`.tmp and renames
//   it over `path` in close(): a failed or abandoned writer leaves no half-written file.
//   UsageError for another extension; std::runtime_error for a library or I/O failure.
// * count_video_frames() reads such a file back: the number of video frames it holds.
// * video_support() is false in a build without these libraries (then the constructors throw
//   UsageError saying so).
#pragma once

#include <memory>
#include <string>

#include "envs/env.h"
#include "envs/maze/render.h"

namespace ringrl::envs::maze {

/// True when this build can render and encode videos (OSMesa, FFmpeg and giflib found).
bool video_support() noexcept;

class MazeCamera {
 public:
  MazeCamera(const Env& env, int width, int height);
  ~MazeCamera();
  MazeCamera(const MazeCamera&) = delete;
  MazeCamera& operator=(const MazeCamera&) = delete;

  /// The env's current state (contract above); `marker` = world (x, y) or null.
  const RgbImage& frame(const Env& env, const double* marker);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class VideoWriter {
 public:
  VideoWriter(const std::string& path, int width, int height, int fps);
  ~VideoWriter();
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;

  /// Appends one frame (width x height, RGB).
  void add(const RgbImage& frame);
  /// Finishes the file and renames it into place.
  void close();
  int frames() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Video frames in an .mp4 or .gif file (std::runtime_error when it cannot be read).
int count_video_frames(const std::string& path);

}  // namespace ringrl::envs::maze
