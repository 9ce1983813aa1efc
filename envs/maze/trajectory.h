// Trajectory CSV files: what `ringrl env rollout --out` writes and `ringrl env render --traj`
// reads. One row per observation (the reset observation has t = 0):
//   episode,t,x,y,reward,distance
// Pure functions; safe from any thread (each on its own stream or file).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace ringrl::envs::maze {

struct TrajectoryRow {
  int episode = 0;
  int t = 0;
  double x = 0.0;
  double y = 0.0;
  double reward = 0.0;    // reward of the step that led here (0 at t = 0)
  double distance = 0.0;  // task distance to the context in force
};

/// Writes the header line.
void write_trajectory_header(std::ostream& out);
/// Writes one row.
void write_trajectory_row(std::ostream& out, const TrajectoryRow& row);
/// Reads a file written by the functions above (columns found by header name; extra
/// columns are ignored). Throws UsageError naming the file and line for bad input.
std::vector<TrajectoryRow> read_trajectory_csv(const std::string& path);

}  // namespace ringrl::envs::maze
