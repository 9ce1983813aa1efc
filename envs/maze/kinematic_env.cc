#include "envs/maze/kinematic_env.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/errors.h"

namespace ringrl::envs::maze {
namespace {

constexpr double kAgentHeight = 0.5;         // agent z above the surface it stands on
constexpr double kResetNoise = 0.1;          // half-width of the uniform x, y reset noise
constexpr double kControlDt = 0.1;           // seconds per step (as the ant's 5 x 0.02 s)
constexpr double kContactEps = 1e-9;         // overlap / contact tolerance (world units)
constexpr float kAntActionLimit = 30.0f;     // ant-shaped action box [-30, 30]
constexpr float kCompactActionLimit = 1.0f;  // compact action box [-1, 1]
constexpr int kAntShapedObsDim = 30;
constexpr int kAntShapedActionDim = 8;
constexpr int kCompactActionDim = 2;
constexpr double kNoLimit = std::numeric_limits<double>::infinity();

// Ant-shaped observation slots (the ant's layout, §10.4).
constexpr int kObsZ = 2;
constexpr int kObsQuatW = 3;
constexpr int kObsVel = 15;

double lo(const Rect& r, int axis) { return axis == 0 ? r.x0 : r.y0; }
double hi(const Rect& r, int axis) { return axis == 0 ? r.x1 : r.y1; }

// Open intervals overlap (touching is not overlapping).
bool overlap(double a0, double a1, double b0, double b1) { return a0 < b1 - kContactEps && a1 > b0 + kContactEps; }

// If `ob` lies ahead of `me` along `axis` in direction `dir` (and overlaps it across), sets
// *gap to the free distance between them and returns true.
bool ahead(const Rect& me, const Rect& ob, int axis, double dir, double* gap) {
  const int other = 1 - axis;
  if (!overlap(lo(me, other), hi(me, other), lo(ob, other), hi(ob, other))) return false;
  if (dir > 0) {
    if (lo(ob, axis) < hi(me, axis) - kContactEps) return false;  // behind or overlapping
    *gap = std::max(0.0, lo(ob, axis) - hi(me, axis));
  } else {
    if (hi(ob, axis) > lo(me, axis) + kContactEps) return false;
    *gap = std::max(0.0, lo(me, axis) - hi(ob, axis));
  }
  return true;
}

// Distance `me` can travel along `axis` in direction `dir` before touching an obstacle.
double free_travel(const Rect& me, int axis, double dir, const std::vector<Rect>& obstacles) {
  double limit = kNoLimit;
  double gap = 0.0;
  for (const Rect& ob : obstacles)
    if (ahead(me, ob, axis, dir, &gap)) limit = std::min(limit, gap);
  return limit;
}

bool has_z(const KinematicOptions& o) { return o.maze() == MazeKind::kFall; }

}  // namespace

void KinematicOptions::validate() const {
  if (!(max_step_ > 0.0)) throw UsageError("kinematic maze: max_step must be > 0, got " + std::to_string(max_step_));
  if (!(radius_ > 0.0 && radius_ < 0.5 * scale_))
    throw UsageError("kinematic maze: radius must be in (0, S/2), got " + std::to_string(radius_));
  if (observe_block_ && maze_ == MazeKind::kMaze)
    throw UsageError("kinematic maze: observe_block needs a maze with a block (push, fall)");
  (void)task_for(maze_, scale_, task_mode_);  // throws for an unsupported scale
}

EnvSpec KinematicMazeEnv::make_spec(const KinematicOptions& o, const std::string& name) {
  o.validate();
  EnvSpec s;
  s.name = name;
  const bool z = has_z(o);
  const int block_dims = !o.observe_block() ? 0 : (o.ant_shaped() || z ? 3 : 2);
  if (o.ant_shaped()) {
    s.obs_dim = kAntShapedObsDim + block_dims;
    s.action_dim = kAntShapedActionDim;
    s.action.low.assign(kAntShapedActionDim, -kAntActionLimit);
    s.action.high.assign(kAntShapedActionDim, kAntActionLimit);
  } else {
    const int pos_dims = z ? 3 : 2;
    s.obs_dim = 2 * pos_dims + block_dims + 1;
    s.action_dim = kCompactActionDim;
    s.action.low.assign(kCompactActionDim, -kCompactActionLimit);
    s.action.high.assign(kCompactActionDim, kCompactActionLimit);
  }
  s.episode_length = kEpisodeLength;
  s.frame_skip = 1;
  s.control_dt = kControlDt;
  s.time_feature_scale = kTimeFeatureScale;
  s.task = task_for(o.maze(), o.scale(), o.task_mode());
  return s;
}

KinematicMazeEnv::KinematicMazeEnv(const KinematicOptions& options, std::string name)
    : options_(options), layout_(make_layout(options.maze(), options.scale())), spec_(make_spec(options, name)) {
  walls_ = layout_.wall_rects();
  for (int i = 0; i < layout_.rows(); ++i) {
    for (int j = 0; j < layout_.cols(); ++j) {
      if (layout_.at(i, j) == Cell::kChasm)
        chasm_cells_.push_back(layout_.cell_rect(i, j));
      else
        pit_walls_.push_back(layout_.cell_rect(i, j));
    }
  }
  surface_z_ = layout_.floor_height() + kAgentHeight;
  pit_z_ = kAgentHeight;
}

Rect KinematicMazeEnv::footprint() const noexcept {
  const double r = options_.radius();
  return Rect{pos_[kX] - r, pos_[kY] - r, pos_[kX] + r, pos_[kY] + r};
}

Rect KinematicMazeEnv::block_rect() const noexcept {
  const double h = 0.5 * layout_.scale();
  return Rect{block_[kX] - h, block_[kY] - h, block_[kX] + h, block_[kY] + h};
}

void KinematicMazeEnv::do_reset(Rng& rng, Span<float> obs) {
  pos_[kX] = rng.uniform(-kResetNoise, kResetNoise);
  pos_[kY] = rng.uniform(-kResetNoise, kResetNoise);
  z_ = surface_z_;
  fallen_ = false;
  dropped_ = false;
  bridge_ = Rect{};
  block_active_ = layout_.has_block();
  block_[kX] = layout_.block_x();
  block_[kY] = layout_.block_y();
  block_z_ = layout_.floor_height() + 0.5 * layout_.wall_height();
  write_obs(obs, {0.0, 0.0, 0.0});
}

double KinematicMazeEnv::push_block(int axis, double dir, double want) noexcept {
  const BlockRule& rule = layout_.block_rule();
  const bool slides = axis == kX ? rule.slide_x : rule.slide_y;
  if (!slides) return 0.0;
  double push = std::min(want, free_travel(block_rect(), axis, dir, walls_));
  // Fall: a block whose centre reaches a chasm cell's centre drops into it.
  bool drops = false;
  if (rule.fall && axis == kY) {
    for (const Rect& cell : chasm_cells_) {
      if (std::abs(cell.cx() - block_[kX]) > kContactEps) continue;
      const double to_centre = (cell.cy() - block_[kY]) * dir;
      if (to_centre >= 0.0 && to_centre <= push) {
        push = to_centre;
        drops = true;
        bridge_ = cell;
      }
    }
  }
  block_[static_cast<size_t>(axis)] += dir * push;
  if (drops) {
    dropped_ = true;
    block_active_ = false;
    block_[kY] = bridge_.cy();               // exactly in the cell
    block_z_ = 0.5 * layout_.wall_height();  // resting on the chasm floor, top at surface
  }
  return push;
}

void KinematicMazeEnv::move_axis(int axis, double d) noexcept {
  if (d == 0.0) return;
  const double dir = d > 0.0 ? 1.0 : -1.0;
  const Rect me = footprint();
  double travel = std::abs(d);
  if (fallen_) {
    travel = std::min(travel, free_travel(me, axis, dir, pit_walls_));
    double gap = 0.0;
    if (dropped_ && ahead(me, bridge_, axis, dir, &gap)) travel = std::min(travel, gap);
  } else {
    travel = std::min(travel, free_travel(me, axis, dir, walls_));
    double gap = 0.0;
    if (block_active_ && ahead(me, block_rect(), axis, dir, &gap) && travel > gap)
      travel = gap + push_block(axis, dir, travel - gap);
  }
  pos_[static_cast<size_t>(axis)] += dir * travel;
  update_fall();
}

void KinematicMazeEnv::update_fall() noexcept {
  if (fallen_ || chasm_cells_.empty()) return;
  for (const Rect& cell : chasm_cells_) {
    if (!cell.contains(pos_[kX], pos_[kY])) continue;
    if (dropped_ && cell.cx() == bridge_.cx() && cell.cy() == bridge_.cy()) continue;
    // Into the pit: it holds the whole footprint from now on.
    fallen_ = true;
    z_ = pit_z_;
    const double r = options_.radius();
    pos_[kX] = std::clamp(pos_[kX], cell.x0 + r, cell.x1 - r);
    pos_[kY] = std::clamp(pos_[kY], cell.y0 + r, cell.y1 - r);
    return;
  }
}

void KinematicMazeEnv::do_step(Span<const float> action, Span<float> obs) noexcept {
  const double limit = options_.ant_shaped() ? kAntActionLimit : kCompactActionLimit;
  const double cmd_x = std::clamp(action[0] / limit, -1.0, 1.0);
  const double cmd_y = std::clamp(action[1] / limit, -1.0, 1.0);
  const double old_x = pos_[kX];
  const double old_y = pos_[kY];
  const double old_z = z_;
  move_axis(kX, options_.max_step() * cmd_x);
  move_axis(kY, options_.max_step() * cmd_y);
  write_obs(obs, {(pos_[kX] - old_x) / kControlDt, (pos_[kY] - old_y) / kControlDt, (z_ - old_z) / kControlDt});
}

void KinematicMazeEnv::write_obs(Span<float> obs, const std::array<double, 3>& vel) const noexcept {
  const auto f = [](double v) { return static_cast<float>(v); };
  size_t k = 0;
  if (options_.ant_shaped()) {
    std::fill(obs.begin(), obs.end(), 0.0f);
    obs[0] = f(pos_[kX]);
    obs[1] = f(pos_[kY]);
    obs[kObsZ] = f(z_);
    obs[kObsQuatW] = 1.0f;
    obs[kObsVel + 0] = f(vel[0]);
    obs[kObsVel + 1] = f(vel[1]);
    obs[kObsVel + 2] = f(vel[2]);
    k = kAntShapedObsDim - 1;
  } else {
    const bool z = has_z(options_);
    obs[k++] = f(pos_[kX]);
    obs[k++] = f(pos_[kY]);
    if (z) obs[k++] = f(z_);
    obs[k++] = f(vel[0]);
    obs[k++] = f(vel[1]);
    if (z) obs[k++] = f(vel[2]);
  }
  if (options_.observe_block()) {
    obs[k++] = f(block_[kX]);
    obs[k++] = f(block_[kY]);
    if (options_.ant_shaped() || has_z(options_)) obs[k++] = f(block_z_);
  }
  obs[k] = f(t() * kTimeFeatureScale);
}

}  // namespace ringrl::envs::maze
