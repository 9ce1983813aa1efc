// The kinematic point-mass maze of spec hiro.md §13: the Maze/Push/Fall grids and tasks with
// no physics, for tests of the HIRO machinery and learner benchmarks (a step costs ~100 ns).
//
// Agent: a square footprint of half-size `radius` (an L-infinity "radius") at (x, y); z is
// 0.5 above the surface it stands on. A step moves it by max_step * command, sweeping x then
// y against the walls; sweeps are exact (first contact along the path), so nothing tunnels
// at any step size. Push: the agent shoves the block ahead of it by the same distance, as
// far as the block can go before a wall; a block stuck at a wall stops the agent. Fall: the
// maze is elevated (surface z = 4, agent z = 4.5); the block slides in y only and, once its
// centre reaches a chasm cell's centre, drops into it and becomes a bridge (surface z = 4);
// an agent whose centre enters a chasm cell without a bridge falls to z = 0.5 and from then
// on can only move inside the unbridged chasm cells. Reset noise: U(-0.1, 0.1) on x and y.
//
// Observation, ant-shaped (default, 30 floats, the ant's layout): x, y, z, quaternion
// (1, 0, 0, 0), 8 zero joint angles, velocity (x', y', z'), 11 zeros, time feature.
// Compact: x, y [, z for Fall], x', y' [, z'], time feature. With observe_block, the block
// centre (x, y [, z for Fall; always x, y, z when ant-shaped]) goes in before the time
// feature. Action, ant-shaped: 8 values in [-30, 30], of which a[0] / 30 and a[1] / 30 are
// the x and y commands (the rest is padding for dimension parity); compact: 2 values in
// [-1, 1]. Velocities are displacement / control_dt with control_dt = 0.1 s, as the ant.
//
// Thread rules: as every Env, one thread per instance. The immutable part (layout, wall
// squares, spec) is built per instance; it is small. Lifetime: self-contained.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "envs/env.h"
#include "envs/maze/layout.h"
#include "envs/maze/tasks.h"

namespace ringrl::envs::maze {

/// Default displacement per step at full command (world units; spec §13's example value).
inline constexpr double kDefaultKinematicMaxStep = 0.5;

/// Options of the stand-in; the defaults are the ant-scale, ant-shaped Maze.
class KinematicOptions {
 public:
  /// Grid (Maze, Push or Fall).
  KinematicOptions& maze(MazeKind v) noexcept {
    maze_ = v;
    return *this;
  }
  MazeKind maze() const noexcept { return maze_; }
  /// Cell size S: 8 (ant scale) or 4 (PointMaze scale, Maze only).
  KinematicOptions& scale(double v) noexcept {
    scale_ = v;
    return *this;
  }
  double scale() const noexcept { return scale_; }
  /// 30-float observation and 8-D action, as the ant (true), or the compact form (false).
  KinematicOptions& ant_shaped(bool v) noexcept {
    ant_shaped_ = v;
    return *this;
  }
  bool ant_shaped() const noexcept { return ant_shaped_; }
  /// Displacement per step at full command (world units).
  KinematicOptions& max_step(double v) noexcept {
    max_step_ = v;
    return *this;
  }
  double max_step() const noexcept { return max_step_; }
  /// Half-size of the agent's square footprint (world units).
  KinematicOptions& radius(double v) noexcept {
    radius_ = v;
    return *this;
  }
  double radius() const noexcept { return radius_; }
  /// Append the block centre to the observation (the real envs do not observe it).
  KinematicOptions& observe_block(bool v) noexcept {
    observe_block_ = v;
    return *this;
  }
  bool observe_block() const noexcept { return observe_block_; }
  /// Push/Fall training target.
  KinematicOptions& task_mode(TaskMode v) noexcept {
    task_mode_ = v;
    return *this;
  }
  TaskMode task_mode() const noexcept { return task_mode_; }

  /// Throws UsageError naming the bad value (scale, sizes, block flag without a block).
  void validate() const;

 private:
  MazeKind maze_ = MazeKind::kMaze;
  double scale_ = kAntScale;
  bool ant_shaped_ = true;
  double max_step_ = kDefaultKinematicMaxStep;
  double radius_ = 0.5;
  bool observe_block_ = false;
  TaskMode task_mode_ = TaskMode::kSingle;
};

class KinematicMazeEnv final : public Env {
 public:
  /// `name` is the spec name (the factory passes "kinematic-maze" etc.).
  explicit KinematicMazeEnv(const KinematicOptions& options = KinematicOptions(), std::string name = "kinematic-maze");

  const EnvSpec& spec() const noexcept override { return spec_; }
  const Layout& layout() const noexcept { return layout_; }
  const KinematicOptions& options() const noexcept { return options_; }

  /// Agent centre and height.
  double x() const noexcept { return pos_[kX]; }
  double y() const noexcept { return pos_[kY]; }
  double z() const noexcept { return z_; }
  /// Fall: the agent dropped into the chasm.
  bool fallen() const noexcept { return fallen_; }
  /// Fall: the block dropped into a chasm cell and is now a bridge.
  bool block_dropped() const noexcept { return dropped_; }
  /// Block centre (x, y, z); only when layout().has_block().
  std::array<double, 3> block_position() const noexcept { return {block_[kX], block_[kY], block_z_}; }

  /// The spec of these options without building an env.
  static EnvSpec make_spec(const KinematicOptions& options, const std::string& name);

 private:
  static constexpr int kX = 0;
  static constexpr int kY = 1;

  void do_reset(Rng& rng, Span<float> obs) override;
  void do_step(Span<const float> action, Span<float> obs) noexcept override;

  Rect footprint() const noexcept;
  Rect block_rect() const noexcept;
  // Moves the agent by d along `axis`, pushing the block as needed.
  void move_axis(int axis, double d) noexcept;
  // How far the block can be pushed by `want` along `axis` in direction `dir`; may drop it.
  double push_block(int axis, double dir, double want) noexcept;
  // Fall rule: the agent's centre in an unbridged chasm cell drops it.
  void update_fall() noexcept;
  void write_obs(Span<float> obs, const std::array<double, 3>& vel) const noexcept;

  KinematicOptions options_;
  Layout layout_;
  EnvSpec spec_;
  std::vector<Rect> walls_;        // obstacles on the surface
  std::vector<Rect> pit_walls_;    // obstacles in the chasm: every non-chasm cell
  std::vector<Rect> chasm_cells_;  // chasm cell squares
  double surface_z_ = 0.0;         // agent z on the surface
  double pit_z_ = 0.0;             // agent z in the chasm

  std::array<double, 2> pos_{};  // agent centre
  double z_ = 0.0;
  std::array<double, 2> block_{};  // block centre
  double block_z_ = 0.0;
  bool block_active_ = false;  // the block is an obstacle (exists and not dropped)
  bool dropped_ = false;
  Rect bridge_{};  // cell the block dropped into
  bool fallen_ = false;
};

}  // namespace ringrl::envs::maze
