#include "common/runfiles/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>

namespace ringrl::runfiles {
namespace {

constexpr mode_t kFileMode = 0644;  // further restricted by the process umask

[[noreturn]] void throw_errno(int err, const std::string& what, const std::filesystem::path& p) {
  throw std::system_error(err, std::generic_category(), what + " " + p.string());
}

std::filesystem::path parent_or_dot(const std::filesystem::path& path) {
  std::filesystem::path parent = path.parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

}  // namespace

void fsync_directory(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw_errno(errno, "open directory", dir);
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    throw_errno(err, "fsync directory", dir);
  }
  ::close(fd);
}

AtomicFile::AtomicFile(std::filesystem::path path) : path_(std::move(path)) {
  if (path_.filename().empty()) {
    throw std::system_error(std::make_error_code(std::errc::is_a_directory), "atomic write target " + path_.string());
  }
  temp_path_ = path_;
  temp_path_ += ".tmp." + std::to_string(::getpid());
  fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, kFileMode);
  if (fd_ < 0) throw_errno(errno, "create", temp_path_);
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)), temp_path_(std::move(other.temp_path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() noexcept {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
  ::unlink(temp_path_.c_str());
}

void AtomicFile::require_open(const char* what) const {
  if (fd_ < 0) {
    throw std::logic_error(std::string("AtomicFile::") + what + " on a closed file " + path_.string());
  }
}

void AtomicFile::write(std::string_view bytes) {
  require_open("write");
  const char* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      discard();
      throw_errno(err, "write", temp_path_);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void AtomicFile::commit() {
  require_open("commit");
  if (::fsync(fd_) != 0) {
    int err = errno;
    discard();
    throw_errno(err, "fsync", temp_path_);
  }
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(temp_path_.c_str());
    throw_errno(err, "close", temp_path_);
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    int err = errno;
    ::unlink(temp_path_.c_str());
    throw_errno(err, "rename to", path_);
  }
  fsync_directory(parent_or_dot(path_));
}

void write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
  AtomicFile file(path);
  file.write(bytes);
  file.commit();
}

std::string directory_problem(const std::filesystem::path& dir) {
  try {
    std::filesystem::create_directories(dir);
    const std::filesystem::path probe = dir / ".write-probe";
    write_file_atomic(probe, "");
    std::filesystem::remove(probe);
    return {};
  } catch (const std::exception& e) {
    return "directory " + dir.string() + ": " + e.what();
  }
}

}  // namespace ringrl::runfiles
