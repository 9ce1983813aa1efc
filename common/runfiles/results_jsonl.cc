#include "common/runfiles/results_jsonl.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <system_error>

#include "common/errors.h"
#include "common/runfiles/atomic_file.h"

namespace ringrl::runfiles {
namespace {

using nlohmann::json;

constexpr mode_t kFileMode = 0644;

[[noreturn]] void throw_errno(int err, const std::string& what, const std::filesystem::path& p) {
  throw std::system_error(err, std::generic_category(), what + " " + p.string());
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

void write_all(int fd, std::string_view bytes, const std::filesystem::path& file) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(errno, "write", file);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

std::string read_all(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw_errno(errno, "open", file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw_errno(errno, "read", file);
  return text;
}

bool parses(std::string_view line) { return !json::parse(line.begin(), line.end(), nullptr, false).is_discarded(); }

// Completes or cuts off a torn final line (see the contract).
void repair_tail(int fd, const std::filesystem::path& file) {
  off_t size = ::lseek(fd, 0, SEEK_END);
  if (size < 0) throw_errno(errno, "seek", file);
  if (size == 0) return;
  char last = 0;
  if (::pread(fd, &last, 1, size - 1) != 1) throw_errno(errno, "read", file);
  if (last == '\n') return;
  std::string text = read_all(file);
  size_t start = text.rfind('\n');
  start = start == std::string::npos ? 0 : start + 1;
  if (parses(std::string_view(text).substr(start))) {
    write_all(fd, "\n", file);
  } else if (::ftruncate(fd, static_cast<off_t>(start)) != 0) {
    throw_errno(errno, "truncate", file);
  }
}

std::filesystem::path parent_or_dot(const std::filesystem::path& path) {
  std::filesystem::path parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

}  // namespace

void append_json_line(const std::filesystem::path& file, const nlohmann::json& record) {
  std::filesystem::path dir = parent_or_dot(file);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::system_error(ec, "create directory " + dir.string());
  bool existed = std::filesystem::exists(file, ec);

  Fd fd(::open(file.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, kFileMode));
  if (fd.get() < 0) throw_errno(errno, "open", file);
  if (existed) repair_tail(fd.get(), file);
  write_all(fd.get(), record.dump() + "\n", file);
  if (::fsync(fd.get()) != 0) throw_errno(errno, "fsync", file);
  if (::close(fd.release()) != 0) throw_errno(errno, "close", file);
  if (!existed) fsync_directory(dir);
}

std::vector<nlohmann::json> read_json_lines(const std::filesystem::path& file) {
  std::vector<json> records;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return records;
  std::string text = read_all(file);
  size_t pos = 0;
  size_t line_no = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    bool terminated = end != std::string::npos;
    if (!terminated) end = text.size();
    ++line_no;
    std::string_view line = std::string_view(text).substr(pos, end - pos);
    pos = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    json parsed = json::parse(line.begin(), line.end(), nullptr, false);
    if (parsed.is_discarded()) {
      if (!terminated) break;  // torn final write
      throw UsageError(file.string() + ":" + std::to_string(line_no) +
                       ": not a JSON record (expected one JSON value per line)");
    }
    records.push_back(std::move(parsed));
  }
  return records;
}

std::set<int64_t> completed_values(const std::vector<nlohmann::json>& records, std::string_view key) {
  std::set<int64_t> values;
  for (const json& r : records) {
    if (!r.is_object()) continue;
    auto it = r.find(std::string(key));
    if (it != r.end() && it->is_number_integer()) values.insert(it->get<int64_t>());
  }
  return values;
}

void check_consistent(const std::vector<nlohmann::json>& records, const nlohmann::json& expected,
                      const std::filesystem::path& file) {
  for (size_t i = 0; i < records.size(); ++i) {
    const json& r = records[i];
    if (!r.is_object()) continue;
    for (const auto& [key, value] : expected.items()) {
      auto it = r.find(key);
      if (it != r.end() && *it != value) {
        throw UsageError(file.string() + ": record " + std::to_string(i + 1) + " has " + key + "=" + it->dump() +
                         " but this run has " + key + "=" + value.dump() + " (use a fresh run directory)");
      }
    }
  }
}

void append_solution(const std::filesystem::path& file, std::string_view code, double reward, int64_t npe) {
  append_json_line(file, json{{"code", std::string(code)}, {"reward", reward}, {"npe", npe}});
}

}  // namespace ringrl::runfiles
