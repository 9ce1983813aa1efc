#include "common/runfiles/metrics_csv.h"

#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <system_error>

#include "common/errors.h"

namespace ringrl::runfiles {
namespace {

constexpr const char* kStepColumn = "step";
constexpr const char* kWallColumn = "wall_s";
constexpr size_t kNumberBufferSize = 64;

[[noreturn]] void throw_errno(const std::string& what, const std::filesystem::path& p) {
  throw std::system_error(errno, std::generic_category(), what + " " + p.string());
}

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::array<char, kNumberBufferSize> buf{};
  auto result = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return std::string(buf.data(), result.ptr);
}

void validate_columns(const std::vector<std::string>& columns) {
  for (size_t i = 0; i < columns.size(); ++i) {
    const std::string& c = columns[i];
    if (c.empty()) throw std::invalid_argument("metrics CSV: empty column name");
    if (c == kStepColumn || c == kWallColumn) {
      throw std::invalid_argument("metrics CSV: column '" + c + "' is reserved");
    }
    if (c.find_first_of(",\"\r\n") != std::string::npos) {
      throw std::invalid_argument("metrics CSV: column name '" + c + "' contains a comma, quote or line break");
    }
    for (size_t j = 0; j < i; ++j) {
      if (columns[j] == c) throw std::invalid_argument("metrics CSV: duplicate column '" + c + "'");
    }
  }
}

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_errno("open", path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw_errno("read", path);
  return text;
}

}  // namespace

MetricsCsv::MetricsCsv(std::filesystem::path path, std::vector<std::string> columns)
    : path_(std::move(path)), columns_(std::move(columns)) {
  validate_columns(columns_);
  header_ = std::string(kStepColumn) + "," + kWallColumn;
  for (const std::string& c : columns_) header_ += "," + c;

  bool write_header = true;
  std::error_code ec;
  if (std::filesystem::exists(path_, ec)) {
    std::string text = read_all(path_);
    size_t header_end = text.find('\n');
    if (!text.empty() && header_end == std::string::npos && header_.compare(0, text.size(), text) != 0) {
      throw UsageError("metrics file " + path_.string() + " has header '" + text + "' but this run writes '" + header_ +
                       "'");
    }
    if (header_end != std::string::npos) {
      std::string existing = text.substr(0, header_end);
      if (!existing.empty() && existing.back() == '\r') existing.pop_back();
      if (existing != header_) {
        throw UsageError("metrics file " + path_.string() + " has header '" + existing + "' but this run writes '" +
                         header_ + "'");
      }
      write_header = false;
      resumed_ = true;
      size_t keep = text.rfind('\n') + 1;  // drop a torn last row
      if (keep != text.size()) {
        std::filesystem::resize_file(path_, keep, ec);
        if (ec) throw std::system_error(ec, "truncate " + path_.string());
      }
    } else {
      // Empty, or a torn header that is a prefix of ours: start over.
      std::filesystem::resize_file(path_, 0, ec);
      if (ec) throw std::system_error(ec, "truncate " + path_.string());
    }
  }
  file_ = std::fopen(path_.c_str(), "ae");
  if (file_ == nullptr) throw_errno("open", path_);
  if (write_header) write_line(header_);
}

MetricsCsv::~MetricsCsv() {
  if (file_ != nullptr) std::fclose(file_);
}

void MetricsCsv::write_line(const std::string& line) {
  std::string out = line + "\n";
  if (std::fwrite(out.data(), 1, out.size(), file_) != out.size()) throw_errno("write", path_);
  if (std::fflush(file_) != 0) throw_errno("flush", path_);
}

void MetricsCsv::write_row(int64_t step, double wall_s, const std::vector<double>& values) {
  if (values.size() != columns_.size()) {
    throw std::invalid_argument("metrics CSV " + path_.string() + ": row has " + std::to_string(values.size()) +
                                " values, header has " + std::to_string(columns_.size()) + " columns");
  }
  std::string line = std::to_string(step) + "," + format_double(wall_s);
  for (double v : values) line += "," + format_double(v);
  write_line(line);
}

void MetricsCsv::write_named_row(int64_t step, double wall_s,
                                 const std::vector<std::pair<std::string, double>>& named) {
  std::vector<std::optional<double>> cells(columns_.size());
  for (const auto& [name, value] : named) {
    size_t i = 0;
    while (i < columns_.size() && columns_[i] != name) ++i;
    if (i == columns_.size()) {
      throw std::invalid_argument("metrics CSV " + path_.string() + ": unknown column '" + name +
                                  "' (header: " + header_ + ")");
    }
    cells[i] = value;
  }
  std::string line = std::to_string(step) + "," + format_double(wall_s);
  for (const auto& cell : cells) line += "," + (cell ? format_double(*cell) : std::string());
  write_line(line);
}

}  // namespace ringrl::runfiles
