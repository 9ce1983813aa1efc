// A named POSIX shared-memory segment with a checked header, owned by exactly one object.
//
// The creator (one process, the learner) calls ShmSegment::create(); it sizes the segment,
// writes the header, and unlinks the name when the object dies, on every exit path the process
// survives (destructor, exceptions), plus crashes and repeated signals through the emergency
// table of common/signals.h. Other processes call ShmSegment::attach(), which checks magic,
// layout version, size and creator pid and names exactly the field that is wrong.
//
// A leftover segment whose creator pid is no longer running (a crashed run) is reclaimed by
// create(); one whose creator is alive is refused with a UsageError.
//
// The OS object is handled through Boost.Interprocess: shared_memory_object (create_only for
// exclusive creation, permissions 0600) to create and open, mapped_region to map and unmap,
// shared_memory_object::remove to unlink. Its interprocess_exception never leaves this class:
// OS failures become std::system_error with errno, and name the segment and what to do.
// Only the crash/second-signal path in common/signals.cc unlinks with ::shm_unlink itself,
// because it runs in a signal handler (see there).
//
// Names: segment_name(run_id) = "ringrl-<uid>-<run id>", mode 0600. Run ids are 1..48 chars
// of [A-Za-z0-9._-].
//
// Memory ordering: the creator lays out the whole segment, then sets header.ready with
// release; attach() waits (bounded) for ready with acquire, so every byte the creator wrote
// before create() returned is visible to an attached process.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <boost/interprocess/mapped_region.hpp>

namespace ringrl {

inline constexpr std::uint64_t kSegmentMagic = 0x3130534d474e4952ULL;  // "RINGMS01"
inline constexpr std::uint32_t kSegmentLayoutVersion = 3;  // 2: the work gate in the control block and slots; 3: tickets
inline constexpr std::size_t kMaxRunIdBytes = 48;

/// First bytes of every segment. Fixed for a layout version.
struct SegmentHeader {
  std::uint64_t magic;               // kSegmentMagic
  std::uint32_t layout_version;      // kSegmentLayoutVersion
  std::uint32_t header_bytes;        // sizeof(SegmentHeader)
  std::uint64_t total_bytes;         // whole segment size, bytes
  std::int32_t creator_pid;          // pid of the creating process
  std::atomic<std::uint32_t> ready;  // 1 once the creator finished the layout
  char run_id[kMaxRunIdBytes + 8];   // NUL-terminated
};
static_assert(std::is_standard_layout_v<SegmentHeader>);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(sizeof(SegmentHeader) % 8 == 0);

/// Validates `run_id` (throws UsageError) and returns "ringrl-<uid>-<run_id>".
std::string segment_name(std::string_view run_id);

/// Options checked by attach().
struct AttachOptions {
  std::size_t expected_bytes = 0;  // 0 = any size (the header's size must still match the mapping)
  pid_t expected_creator = 0;      // 0 = any creator (it must still be running)
  double ready_timeout_s = 5.0;    // how long to wait for a creator still laying out
};

class ShmSegment {
 public:
  /// Creates `name` with `total_bytes` (>= sizeof(SegmentHeader)), zero-filled, header
  /// written but not yet marked ready: call mark_ready() after laying out the rest.
  static ShmSegment create(const std::string& name, std::size_t total_bytes, std::string_view run_id);
  /// Maps an existing segment read-write after checking its header.
  static ShmSegment attach(const std::string& name, const AttachOptions& options = {});
  /// Removes a leftover segment if its creator is dead; returns true when it removed one.
  /// Throws UsageError when the creator is alive.
  static bool reclaim_if_stale(const std::string& name);
  /// Removes every leftover "ringrl-<uid>-*" segment of this user whose creator is dead
  /// (a crashed or SIGKILLed run) and that is older than a minute (younger ones may be
  /// mid-creation, and a new run of the same id reclaims them anyway). Returns how
  /// many it removed. Called by the run segment's creator before it creates its own.
  static std::size_t reclaim_stale_segments();

  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  std::byte* data() const noexcept { return static_cast<std::byte*>(region_.get_address()); }
  std::size_t size() const noexcept { return region_.get_size(); }
  const std::string& name() const noexcept { return name_; }
  bool is_owner() const noexcept { return owner_; }
  SegmentHeader& header() const noexcept { return *reinterpret_cast<SegmentHeader*>(data()); }
  /// Creator only: publishes the layout to attachers.
  void mark_ready() noexcept { header().ready.store(1, std::memory_order_release); }

 private:
  ShmSegment(std::string name, boost::interprocess::mapped_region region, bool owner) noexcept;
  void release() noexcept;

  std::string name_;
  boost::interprocess::mapped_region region_;  // the whole segment, read-write; unmapped on release
  bool owner_ = false;                         // creator: removes the name on release
};

/// True when `pid` names a running process (or one we may not signal).
bool process_alive(pid_t pid) noexcept;

}  // namespace ringrl
