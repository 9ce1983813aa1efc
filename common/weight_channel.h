// One writer broadcasts a versioned flat parameter blob to any number of readers.
//
// Layout: a WeightChannelHeader followed by two blob buffers of `capacity` bytes each. The
// writer (the learner; one thread) publishes version v into buffer v % 2, so it never touches
// the buffer holding the newest complete blob and never waits for readers. Each buffer has a
// sequence counter (odd while being written): a reader copies the newest buffer and keeps the
// copy only if the counter was even and unchanged around the copy and the buffer still holds
// the version it announced. A reader therefore never observes a torn blob; it retries only if
// the writer published twice during one copy.
//
// Roles: WeightWriter — one thread of one process. WeightReader — any thread of any process,
// one handle per thread.
//
// Memory ordering: every byte of the blob passed to publish(v) is visible to a reader whose
// read_if_newer() returned v (the counter's release store pairs with the reader's acquire load;
// the writer marks a buffer odd with an acq_rel read-modify-write before touching it, and the
// reader re-checks the counter with an acq_rel read-don't-modify-write after its copy, so the
// protocol needs no standalone fences).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace ringrl {

struct alignas(64) WeightBufferState {
  std::atomic<std::uint64_t> seq;         // odd while the writer fills this buffer
  std::atomic<std::uint64_t> version;     // version held (valid when seq is even)
  std::atomic<std::uint64_t> bytes;       // blob size held
  std::atomic<std::uint64_t> publish_ns;  // steady-clock time publish() began, ns
};

struct WeightChannelHeader {
  alignas(64) std::atomic<std::uint64_t> latest;  // newest complete version; 0 = none yet
  alignas(64) std::uint64_t capacity;             // bytes per buffer; immutable
  WeightBufferState buffers[2];
};
static_assert(std::is_standard_layout_v<WeightChannelHeader>);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(sizeof(WeightChannelHeader) % 64 == 0);

/// Bytes a channel for blobs of up to `capacity` bytes occupies.
constexpr std::size_t weight_channel_bytes(std::uint64_t capacity) noexcept {
  return sizeof(WeightChannelHeader) + 2 * ((capacity + 63) / 64 * 64);
}

/// Lays out a channel in `memory` (weight_channel_bytes(capacity), 64-byte aligned).
WeightChannelHeader* init_weight_channel(void* memory, std::uint64_t capacity);

class WeightWriter {
 public:
  WeightWriter() = default;
  explicit WeightWriter(WeightChannelHeader* channel) noexcept;
  /// Writer: publishes `bytes` (<= capacity) as the next version and returns that version.
  /// Never blocks. Throws UsageError when the blob does not fit.
  std::uint64_t publish(const void* blob, std::size_t bytes);
  std::uint64_t version() const noexcept;
  std::uint64_t capacity() const noexcept { return channel_->capacity; }

 private:
  WeightChannelHeader* channel_ = nullptr;
};

class WeightReader {
 public:
  WeightReader() = default;
  explicit WeightReader(WeightChannelHeader* channel) noexcept;
  /// Reader: newest published version (0 = none); cheap, for polling.
  std::uint64_t latest() const noexcept { return channel_->latest.load(std::memory_order_acquire); }
  /// Reader: if a version newer than `have` exists, copies it into `dst` (capacity `dst_bytes`)
  /// and returns its version, else returns 0. `*bytes` receives the blob size and
  /// `*publish_ns` (if not null) the time its publication began. Throws UsageError when the
  /// blob is larger than `dst_bytes`.
  std::uint64_t read_if_newer(std::uint64_t have, void* dst, std::size_t dst_bytes, std::size_t* bytes,
                              std::uint64_t* publish_ns = nullptr);
  std::uint64_t capacity() const noexcept { return channel_->capacity; }

 private:
  WeightChannelHeader* channel_ = nullptr;
};

/// Steady-clock now in nanoseconds (the clock used for publish_ns and heartbeats).
std::uint64_t steady_now_ns() noexcept;

}  // namespace ringrl
