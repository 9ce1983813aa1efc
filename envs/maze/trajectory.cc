#include "envs/maze/trajectory.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "common/errors.h"

namespace ringrl::envs::maze {
namespace {

constexpr const char* kColumns[] = {"episode", "t", "x", "y", "reward", "distance"};
constexpr int kNumColumns = 6;

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) out.push_back(cell);
  return out;
}

double parse_number(const std::string& text, const std::string& where) {
  try {
    size_t used = 0;
    const double v = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    throw UsageError(where + ": '" + text + "' is not a number");
  }
}

}  // namespace

void write_trajectory_header(std::ostream& out) {
  for (int i = 0; i < kNumColumns; ++i) out << (i ? "," : "") << kColumns[i];
  out << '\n';
}

void write_trajectory_row(std::ostream& out, const TrajectoryRow& r) {
  out << fmt::format("{},{},{},{},{},{}\n", r.episode, r.t, r.x, r.y, r.reward, r.distance);
}

std::vector<TrajectoryRow> read_trajectory_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot open trajectory file " + path);
  std::string line;
  if (!std::getline(in, line)) throw UsageError(path + ": empty trajectory file");
  const std::vector<std::string> header = split(line);
  int col[kNumColumns];
  for (int c = 0; c < kNumColumns; ++c) {
    col[c] = -1;
    for (size_t h = 0; h < header.size(); ++h)
      if (header[h] == kColumns[c]) col[c] = static_cast<int>(h);
    if (col[c] < 0) throw UsageError(path + ": header has no column '" + kColumns[c] + "'");
  }
  std::vector<TrajectoryRow> rows;
  int line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    const std::vector<std::string> cells = split(line);
    const std::string where = path + ":" + std::to_string(line_no);
    if (cells.size() != header.size())
      throw UsageError(where + ": " + std::to_string(cells.size()) + " fields, expected " +
                       std::to_string(header.size()));
    double v[kNumColumns];
    for (int c = 0; c < kNumColumns; ++c) v[c] = parse_number(cells[static_cast<size_t>(col[c])], where);
    rows.push_back(TrajectoryRow{static_cast<int>(v[0]), static_cast<int>(v[1]), v[2], v[3], v[4], v[5]});
  }
  return rows;
}

}  // namespace ringrl::envs::maze
