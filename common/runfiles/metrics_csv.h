// CSV metrics log with a fixed header: `step,wall_s,<columns...>`, one row per call.
//
// Contract:
// * The header is fixed at construction. Column names must be non-empty, unique, not
//   `step`/`wall_s`, and free of commas, quotes and line breaks (std::invalid_argument).
// * Resume: if the file exists with the same header, rows are appended; a different header
//   is a UsageError naming the file and both headers. A torn last line (no trailing
//   newline, e.g. after a crash) is cut off before appending. A missing or empty file gets
//   the header written first.
// * Each row is flushed to the OS when written (not fsync'ed). Numbers are written in the
//   shortest form that reads back exactly; NaN/inf as `nan`/`inf`/`-inf`; an absent value
//   in a named row is an empty cell.
// * OS failures throw std::system_error naming the file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace ringrl::runfiles {

class MetricsCsv {
 public:
  MetricsCsv(std::filesystem::path path, std::vector<std::string> columns);
  ~MetricsCsv();

  MetricsCsv(const MetricsCsv&) = delete;
  MetricsCsv& operator=(const MetricsCsv&) = delete;

  /// One row; `values` must have one entry per column (std::invalid_argument otherwise).
  void write_row(int64_t step, double wall_s, const std::vector<double>& values);

  /// One row by column name; unnamed columns stay empty, an unknown name is
  /// std::invalid_argument.
  void write_named_row(int64_t step, double wall_s, const std::vector<std::pair<std::string, double>>& named);

  /// The header line without its newline, e.g. "step,wall_s,loss".
  const std::string& header() const { return header_; }
  const std::vector<std::string>& columns() const { return columns_; }
  const std::filesystem::path& path() const { return path_; }
  /// Whether construction found an existing file with this header (rows were kept).
  bool resumed() const { return resumed_; }

 private:
  void write_line(const std::string& line);

  std::filesystem::path path_;
  std::vector<std::string> columns_;
  std::string header_;
  std::FILE* file_ = nullptr;
  bool resumed_ = false;
};

}  // namespace ringrl::runfiles
