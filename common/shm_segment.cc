#include "common/shm_segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <boost/interprocess/exceptions.hpp>
#include <boost/interprocess/permissions.hpp>
#include <boost/interprocess/shared_memory_object.hpp>

#include "common/errors.h"
#include "common/signals.h"

namespace ringrl {
namespace {

namespace bip = boost::interprocess;

constexpr int kSegmentMode = 0600;
constexpr auto kReadyPoll = std::chrono::milliseconds(1);
constexpr const char* kShmDir = "/dev/shm";
// The sweep leaves young leftovers alone: a segment without a header may be mid-creation,
// and a fresh one of a dead creator is reclaimed by a new run of the same id anyway.
constexpr time_t kSweepMinAgeS = 60;

// What to do about an OS failure, by errno; empty when there is nothing better than retrying.
const char* remedy(int err) noexcept {
  switch (err) {
    case EACCES:
    case EPERM:
      return "check that /dev/shm is writable by this user and that the name is not another user's";
    case ENOSPC:
    case ENOMEM:
    case EFBIG:
      return "free space in /dev/shm (old ringrl-* segments?) or choose fewer actors or smaller rings";
    case EMFILE:
    case ENFILE:
      return "too many open files: raise the limit (ulimit -n) or close other runs";
    default:
      return "";
  }
}

[[noreturn]] void throw_os(int err, const std::string& what) {
  const char* fix = remedy(err);
  throw std::system_error(err, std::generic_category(), *fix != '\0' ? what + " (" + fix + ")" : what);
}

[[noreturn]] void throw_errno(const std::string& what) { throw_os(errno, what); }

// Boost.Interprocess reports an OS failure as interprocess_exception carrying errno as its
// native error; its own checks (mode, size) carry none, which only a misuse here could cause.
[[noreturn]] void throw_boost(const bip::interprocess_exception& e, const std::string& what) {
  const int err = e.get_native_error();
  if (err == 0) throw std::system_error(EINVAL, std::generic_category(), what + ": " + e.what());
  throw_os(err, what);
}

// Removes the name; false (errno set) when shm_unlink failed. remove() returns shm_unlink's
// result and then only frees its path string, and free() keeps errno (glibc, POSIX.1-2024).
bool remove_name(const std::string& name) noexcept { return bip::shared_memory_object::remove(name.c_str()); }

bip::shared_memory_object open_existing(const std::string& name, bip::mode_t mode) {
  return bip::shared_memory_object(bip::open_only, name.c_str(), mode);
}

bip::shared_memory_object create_exclusive(const std::string& name) {
  return bip::shared_memory_object(bip::create_only, name.c_str(), bip::read_write, bip::permissions(kSegmentMode));
}

// What a leftover segment says about its creator. Shared bytes are untrusted: the header is
// read only when the segment is large enough to hold one, and counts only with the right magic.
struct Leftover {
  bool exists = false;
  bool has_header = false;  // a header with our magic
  pid_t creator = 0;        // valid when has_header
  time_t modified = 0;      // last modification, seconds since the epoch
};

Leftover inspect_leftover(const std::string& name) {
  Leftover l;
  bip::shared_memory_object shm;
  try {
    shm = open_existing(name, bip::read_only);
  } catch (const bip::interprocess_exception& e) {
    if (e.get_native_error() == ENOENT) return l;
    throw_boost(e, "open of leftover segment " + name);
  }
  l.exists = true;
  struct stat st {};
  if (fstat(shm.get_mapping_handle().handle, &st) != 0) throw_errno("stat of leftover segment " + name);
  l.modified = st.st_mtime;
  if (static_cast<std::size_t>(st.st_size) < sizeof(SegmentHeader)) return l;  // never finished
  try {
    const bip::mapped_region region(shm, bip::read_only, 0, sizeof(SegmentHeader));
    const auto* h = static_cast<const SegmentHeader*>(region.get_address());
    if (h->magic == kSegmentMagic) {
      l.has_header = true;
      l.creator = h->creator_pid;
    }
  } catch (const bip::interprocess_exception& e) {
    throw_boost(e, "map of leftover segment " + name);
  }
  return l;
}

}  // namespace

bool process_alive(pid_t pid) noexcept {
  if (pid <= 0) return false;
  return kill(pid, 0) == 0 || errno == EPERM;
}

std::string segment_name(std::string_view run_id) {
  if (run_id.empty() || run_id.size() > kMaxRunIdBytes)
    throw UsageError(
        fmt::format("run id '{}' has {} characters: expected 1 to {}", run_id, run_id.size(), kMaxRunIdBytes));
  for (char c : run_id) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok)
      throw UsageError(
          fmt::format("run id '{}' contains '{}': expected only letters, digits, '.', '_' or '-'", run_id, c));
  }
  return fmt::format("ringrl-{}-{}", getuid(), run_id);
}

bool ShmSegment::reclaim_if_stale(const std::string& name) {
  const Leftover l = inspect_leftover(name);
  if (!l.exists) return false;
  // A segment without a valid header was never finished by its creator: treat it as stale.
  if (l.has_header && process_alive(l.creator))
    throw UsageError(fmt::format(
        "segment {} belongs to a live run (creator pid {}): stop that run or choose another run id", name, l.creator));
  if (!remove_name(name) && errno != ENOENT) throw_errno("unlink of stale segment " + name);
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
    Leftover l;
    try {
      l = inspect_leftover(name);
    } catch (const std::system_error&) {
      continue;  // best effort: one that cannot be inspected is left alone
    }
    if (!l.exists || time(nullptr) - l.modified < kSweepMinAgeS || (l.has_header && process_alive(l.creator))) continue;
    if (remove_name(name)) ++removed;
  }
  return removed;
}

ShmSegment ShmSegment::create(const std::string& name, std::size_t total_bytes, std::string_view run_id) {
  if (total_bytes < sizeof(SegmentHeader))
    throw UsageError(
        fmt::format("segment size {} is too small: expected at least {} bytes", total_bytes, sizeof(SegmentHeader)));
  if (run_id.size() > kMaxRunIdBytes)
    throw UsageError(fmt::format("run id '{}' is longer than {} characters", run_id, kMaxRunIdBytes));
  // Exclusive creation; a leftover of a dead creator is reclaimed once, a live one refused.
  bip::shared_memory_object shm;
  try {
    shm = create_exclusive(name);
  } catch (const bip::interprocess_exception& e) {
    if (e.get_native_error() != EEXIST) throw_boost(e, "create of shared-memory segment " + name);
    reclaim_if_stale(name);
    try {
      shm = create_exclusive(name);
    } catch (const bip::interprocess_exception& again) {
      throw_boost(again, "create of shared-memory segment " + name);
    }
  }
  // From here on the name exists: remove it on every failure and on crashes.
  register_emergency_unlink(name.c_str());
  const char* step = "resize";
  bip::mapped_region region;
  try {
    shm.truncate(static_cast<bip::offset_t>(total_bytes));
    // Reserve every page now: on a /dev/shm too small for the segment this fails here with
    // ENOSPC, instead of a SIGBUS on the first write into a page that cannot be backed.
    step = "reservation";
    if (const int err = posix_fallocate(shm.get_mapping_handle().handle, 0, static_cast<off_t>(total_bytes));
        err != 0 && err != EOPNOTSUPP && err != EINVAL) {
      remove_name(name);
      unregister_emergency_unlink(name.c_str());
      throw_os(err, fmt::format("reservation of shared-memory segment {} ({} bytes)", name, total_bytes));
    }
    step = "map";
    region = bip::mapped_region(shm, bip::read_write, 0, total_bytes);
  } catch (const bip::interprocess_exception& e) {
    remove_name(name);
    unregister_emergency_unlink(name.c_str());
    throw_boost(e, fmt::format("{} of shared-memory segment {} to {} bytes", step, name, total_bytes));
  }

  auto* h = new (region.get_address()) SegmentHeader{};
  h->magic = kSegmentMagic;
  h->layout_version = kSegmentLayoutVersion;
  h->header_bytes = sizeof(SegmentHeader);
  h->total_bytes = total_bytes;
  h->creator_pid = getpid();
  std::memcpy(h->run_id, run_id.data(), run_id.size());
  return ShmSegment(name, std::move(region), /*owner=*/true);
}

ShmSegment ShmSegment::attach(const std::string& name, const AttachOptions& options) {
  bip::shared_memory_object shm;
  try {
    shm = open_existing(name, bip::read_write);
  } catch (const bip::interprocess_exception& e) {
    if (e.get_native_error() == ENOENT)
      throw UsageError(fmt::format("segment {} does not exist: expected a running learner to have created it", name));
    throw_boost(e, "open of shared-memory segment " + name);
  }
  // The name exists before the creator has sized the segment and written its header, and the
  // header's plain fields are published by the release store of `ready`. So: wait for a size,
  // map, wait for `ready` (acquire), and only then read the header.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.ready_timeout_s);
  const auto timed_out = [&] { return std::chrono::steady_clock::now() >= deadline; };
  std::size_t bytes = 0;
  for (;;) {
    bip::offset_t size = 0;
    if (!shm.get_size(size)) throw_errno("stat of segment " + name);
    bytes = static_cast<std::size_t>(size);
    if (bytes >= sizeof(SegmentHeader)) break;
    if (timed_out())
      throw UsageError(fmt::format("segment {} has size {}: expected at least a {}-byte header", name, bytes,
                                   sizeof(SegmentHeader)));
    std::this_thread::sleep_for(kReadyPoll);
  }
  bip::mapped_region region;
  try {
    region = bip::mapped_region(shm, bip::read_write, 0, bytes);
  } catch (const bip::interprocess_exception& e) {
    throw_boost(e, fmt::format("map of shared-memory segment {} ({} bytes)", name, bytes));
  }
  ShmSegment seg(name, std::move(region), /*owner=*/false);  // unmaps on any throw below
  const SegmentHeader& h = seg.header();
  while (h.ready.load(std::memory_order_acquire) == 0) {
    if (timed_out()) {
      if (h.magic == kSegmentMagic && !process_alive(h.creator_pid))
        throw UsageError(fmt::format("segment {}: creator pid {} is not running (a leftover of a crashed run)", name,
                                     h.creator_pid));
      if (h.magic == kSegmentMagic)
        throw UsageError(fmt::format("segment {}: creator pid {} did not finish its layout within {} s", name,
                                     h.creator_pid, options.ready_timeout_s));
      break;  // no header at all: reported as a bad magic below
    }
    std::this_thread::sleep_for(kReadyPoll);
  }
  if (h.magic != kSegmentMagic)
    throw UsageError(fmt::format("segment {}: bad magic {:#018x}, expected {:#018x} (not a ringrl segment)", name,
                                 h.magic, kSegmentMagic));
  if (h.layout_version != kSegmentLayoutVersion)
    throw UsageError(fmt::format("segment {}: layout version {}, expected {} (built by another ringrl version)", name,
                                 h.layout_version, kSegmentLayoutVersion));
  if (h.header_bytes != sizeof(SegmentHeader))
    throw UsageError(
        fmt::format("segment {}: header size {}, expected {}", name, h.header_bytes, sizeof(SegmentHeader)));
  if (h.total_bytes != bytes)
    throw UsageError(
        fmt::format("segment {}: header says {} bytes but the segment has {}", name, h.total_bytes, bytes));
  if (options.expected_bytes != 0 && bytes != options.expected_bytes)
    throw UsageError(fmt::format("segment {}: size {} bytes, expected {}", name, bytes, options.expected_bytes));
  if (options.expected_creator != 0 && h.creator_pid != options.expected_creator)
    throw UsageError(
        fmt::format("segment {}: creator pid {}, expected {}", name, h.creator_pid, options.expected_creator));
  if (!process_alive(h.creator_pid))
    throw UsageError(
        fmt::format("segment {}: creator pid {} is not running (a leftover of a crashed run)", name, h.creator_pid));
  return seg;
}

ShmSegment::ShmSegment(std::string name, bip::mapped_region region, bool owner) noexcept
    : name_(std::move(name)), region_(std::move(region)), owner_(owner) {}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept
    : name_(std::move(other.name_)), region_(std::move(other.region_)), owner_(std::exchange(other.owner_, false)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    release();
    name_ = std::move(other.name_);
    region_ = std::move(other.region_);
    owner_ = std::exchange(other.owner_, false);
  }
  return *this;
}

ShmSegment::~ShmSegment() { release(); }

void ShmSegment::release() noexcept {
  region_ = bip::mapped_region();  // unmaps (a moved-from or empty region maps nothing)
  if (owner_) {
    remove_name(name_);
    unregister_emergency_unlink(name_.c_str());
  }
  owner_ = false;
}

}  // namespace ringrl
