#include "common/shm_segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/errors.h"
#include "common/signals.h"

namespace ringrl {
namespace {

constexpr mode_t kSegmentMode = 0600;
constexpr auto kReadyPoll = std::chrono::milliseconds(1);
constexpr const char* kShmDir = "/dev/shm";
// The sweep leaves young leftovers alone: a segment without a header may be mid-creation,
// and a fresh one of a dead creator is reclaimed by a new run of the same id anyway.
constexpr time_t kSweepMinAgeS = 60;

std::string shm_path(const std::string& name) { return "/" + name; }

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

void* map_fd(int fd, std::size_t bytes, const std::string& name) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw_errno("mmap of shared-memory segment " + name);
  return p;
}

}  // namespace

bool process_alive(pid_t pid) noexcept {
  if (pid <= 0) return false;
  return kill(pid, 0) == 0 || errno == EPERM;
}

std::string segment_name(std::string_view run_id) {
  if (run_id.empty() || run_id.size() > kMaxRunIdBytes)
    throw UsageError(fmt::format("run id '{}' has {} characters: expected 1 to {}", run_id,
                                 run_id.size(), kMaxRunIdBytes));
  for (char c : run_id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok)
      throw UsageError(fmt::format("run id '{}' contains '{}': expected only letters, digits, '.', '_' or '-'",
                                   run_id, c));
  }
  return fmt::format("ringrl-{}-{}", getuid(), run_id);
}

bool ShmSegment::reclaim_if_stale(const std::string& name) {
  const int fd = shm_open(shm_path(name).c_str(), O_RDONLY, 0);
  if (fd < 0) {
    if (errno == ENOENT) return false;
    throw_errno("open of leftover segment " + name);
  }
  struct stat st {};
  pid_t creator = 0;
  if (fstat(fd, &st) == 0 && static_cast<std::size_t>(st.st_size) >= sizeof(SegmentHeader)) {
    SegmentHeader h;
    if (pread(fd, &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h) && h.magic == kSegmentMagic)
      creator = h.creator_pid;
  }
  close(fd);
  // A segment without a valid header was never finished by its creator: treat it as stale.
  if (creator != 0 && process_alive(creator))
    throw UsageError(fmt::format("segment {} belongs to a live run (creator pid {}): stop that run or choose another run id",
                                 name, creator));
  if (shm_unlink(shm_path(name).c_str()) != 0 && errno != ENOENT) throw_errno("unlink of stale segment " + name);
  return true;
}

std::size_t ShmSegment::reclaim_stale_segments() {
  const std::string prefix = fmt::format("ringrl-{}-", getuid());
  DIR* dir = opendir(kShmDir);
  if (dir == nullptr) return 0;
  std::vector<std::string> names;
  while (const dirent* e = readdir(dir)) {
    if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) names.emplace_back(e->d_name);
  }
  closedir(dir);
  std::size_t removed = 0;
  for (const std::string& name : names) {
    const int fd = shm_open(shm_path(name).c_str(), O_RDONLY, 0);
    if (fd < 0) continue;
    struct stat st {};
    SegmentHeader h{};
    const bool have_header = fstat(fd, &st) == 0 && static_cast<std::size_t>(st.st_size) >= sizeof h &&
                             pread(fd, &h, sizeof h, 0) == static_cast<ssize_t>(sizeof h) && h.magic == kSegmentMagic;
    close(fd);
    if (time(nullptr) - st.st_mtime < kSweepMinAgeS || (have_header && process_alive(h.creator_pid))) continue;
    if (shm_unlink(shm_path(name).c_str()) == 0) ++removed;
  }
  return removed;
}

ShmSegment ShmSegment::create(const std::string& name, std::size_t total_bytes, std::string_view run_id) {
  if (total_bytes < sizeof(SegmentHeader))
    throw UsageError(fmt::format("segment size {} is too small: expected at least {} bytes", total_bytes,
                                 sizeof(SegmentHeader)));
  if (run_id.size() > kMaxRunIdBytes)
    throw UsageError(fmt::format("run id '{}' is longer than {} characters", run_id, kMaxRunIdBytes));
  int fd = shm_open(shm_path(name).c_str(), O_RDWR | O_CREAT | O_EXCL, kSegmentMode);
  if (fd < 0 && errno == EEXIST) {
    reclaim_if_stale(name);
    fd = shm_open(shm_path(name).c_str(), O_RDWR | O_CREAT | O_EXCL, kSegmentMode);
  }
  if (fd < 0) throw_errno("create of shared-memory segment " + name);
  // From here on the name exists: unlink it on every failure and on crashes.
  register_emergency_unlink(name.c_str());
  auto fail = [&](const std::string& what) {
    const int saved = errno;
    close(fd);
    shm_unlink(shm_path(name).c_str());
    unregister_emergency_unlink(name.c_str());
    errno = saved;
    throw_errno(what);
  };
  if (fchmod(fd, kSegmentMode) != 0) fail("chmod of segment " + name);
  if (ftruncate(fd, static_cast<off_t>(total_bytes)) != 0) fail("resize of segment " + name);
  void* p = mmap(nullptr, total_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) fail("mmap of segment " + name);
  close(fd);

  auto* base = static_cast<std::byte*>(p);
  auto* h = new (base) SegmentHeader{};
  h->magic = kSegmentMagic;
  h->layout_version = kSegmentLayoutVersion;
  h->header_bytes = sizeof(SegmentHeader);
  h->total_bytes = total_bytes;
  h->creator_pid = getpid();
  std::memcpy(h->run_id, run_id.data(), run_id.size());
  return ShmSegment(name, base, total_bytes, /*owner=*/true);
}

ShmSegment ShmSegment::attach(const std::string& name, const AttachOptions& options) {
  const int fd = shm_open(shm_path(name).c_str(), O_RDWR, 0);
  if (fd < 0) {
    if (errno == ENOENT)
      throw UsageError(fmt::format("segment {} does not exist: expected a running learner to have created it", name));
    throw_errno("open of shared-memory segment " + name);
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    close(fd);
    throw_errno("stat of segment " + name);
  }
  const auto bytes = static_cast<std::size_t>(st.st_size);
  if (bytes < sizeof(SegmentHeader)) {
    close(fd);
    throw UsageError(fmt::format("segment {} has size {}: expected at least a {}-byte header", name, bytes,
                                 sizeof(SegmentHeader)));
  }
  auto* base = static_cast<std::byte*>(map_fd(fd, bytes, name));
  close(fd);
  ShmSegment seg(name, base, bytes, /*owner=*/false);  // unmaps on any throw below
  const SegmentHeader& h = seg.header();
  if (h.magic != kSegmentMagic)
    throw UsageError(fmt::format("segment {}: bad magic {:#018x}, expected {:#018x} (not a ringrl segment)", name,
                                 h.magic, kSegmentMagic));
  if (h.layout_version != kSegmentLayoutVersion)
    throw UsageError(fmt::format("segment {}: layout version {}, expected {} (built by another ringrl version)",
                                 name, h.layout_version, kSegmentLayoutVersion));
  if (h.header_bytes != sizeof(SegmentHeader))
    throw UsageError(fmt::format("segment {}: header size {}, expected {}", name, h.header_bytes,
                                 sizeof(SegmentHeader)));
  if (h.total_bytes != bytes)
    throw UsageError(fmt::format("segment {}: header says {} bytes but the segment has {}", name, h.total_bytes,
                                 bytes));
  if (options.expected_bytes != 0 && bytes != options.expected_bytes)
    throw UsageError(fmt::format("segment {}: size {} bytes, expected {}", name, bytes, options.expected_bytes));
  if (options.expected_creator != 0 && h.creator_pid != options.expected_creator)
    throw UsageError(fmt::format("segment {}: creator pid {}, expected {}", name, h.creator_pid,
                                 options.expected_creator));
  if (!process_alive(h.creator_pid))
    throw UsageError(fmt::format("segment {}: creator pid {} is not running (a leftover of a crashed run)", name,
                                 h.creator_pid));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.ready_timeout_s);
  while (h.ready.load(std::memory_order_acquire) == 0) {
    if (std::chrono::steady_clock::now() >= deadline)
      throw UsageError(fmt::format("segment {}: creator pid {} did not finish its layout within {} s", name,
                                   h.creator_pid, options.ready_timeout_s));
    std::this_thread::sleep_for(kReadyPoll);
  }
  return seg;
}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept
    : name_(std::move(other.name_)), base_(other.base_), size_(other.size_), owner_(other.owner_) {
  other.base_ = nullptr;
  other.size_ = 0;
  other.owner_ = false;
}

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    release();
    name_ = std::move(other.name_);
    base_ = other.base_;
    size_ = other.size_;
    owner_ = other.owner_;
    other.base_ = nullptr;
    other.size_ = 0;
    other.owner_ = false;
  }
  return *this;
}

ShmSegment::~ShmSegment() { release(); }

void ShmSegment::release() noexcept {
  if (base_ != nullptr) munmap(base_, size_);
  if (owner_) {
    shm_unlink(shm_path(name_).c_str());
    unregister_emergency_unlink(name_.c_str());
  }
  base_ = nullptr;
  size_ = 0;
  owner_ = false;
}

}  // namespace ringrl
