// A lock-free single-producer / single-consumer ring of variable-length framed records, laid
// out in shared memory (or any memory) and used from two processes.
//
// Layout: a RingHeader followed by `capacity` data bytes (a power of two). Each record is a
// frame `RecordHeader | payload`, padded to kFrameAlign bytes; a frame never wraps: when it
// does not fit before the end of the buffer, the producer writes a padding frame (type 0) to
// the end and starts again at offset 0. `head` and `tail` count bytes since creation and only
// grow; the ring is empty when head == tail.
//
// Roles (enforced by separate handle types):
//   RingWriter  — exactly one producer thread (an actor process): try_reserve()/commit(),
//                 push(), flush().
//   RingReader  — exactly one consumer thread (the learner's drain): peek()/release().
// Both handles are process-local views; any number may be created over time, but at most one
// writer and one reader may be live at once. init_ring() runs once, before either exists.
//
// Memory ordering: every byte the producer writes into reserved frames before a publication
// (commit() that reaches the batch size, flush(), or a failed try_reserve()) is visible to the
// consumer after a peek() that loads the published head (acquire pairs with the producer's
// release store). Symmetrically, the consumer's release() of a frame publishes `tail` (release)
// before the producer may reuse the bytes (its acquire load of tail). Each side loads the other
// side's index only when its cached copy says it must.
//
// Validation: the consumer treats the shared bytes as untrusted. peek() copies each frame
// header once and checks type (against an allowed set), length (<= max record bytes), that the
// frame stays inside the buffer and behind the published head, and that a padding frame ends
// exactly at the buffer end. A failed check returns PeekStatus::kCorrupt with a message; the
// reader then stays in that state (the ring must be reset by its owner).
//
// Preconditions (commit() only after a successful try_reserve(), release() only after a peek()
// that returned a record, reservations within max_record_bytes(), power-of-two capacity) are
// checked with assert(): on in debug builds, compiled out of release builds.
#pragma once

#include <atomic>
#include <cassert>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/backoff.h"

namespace ringrl {

inline constexpr std::size_t kCacheLineBytes = 64;
inline constexpr std::uint32_t kFrameAlign = 16;
inline constexpr std::uint16_t kPaddingRecordType = 0;
inline constexpr std::uint16_t kMaxRecordType = 63;  // types index a 64-bit allowed-set mask

/// Frame header in the ring. 16 bytes; the payload follows immediately.
struct RecordHeader {
  std::uint32_t length;   // payload bytes
  std::uint16_t type;     // record type; 0 = padding to the end of the buffer
  std::uint16_t unit;     // low 16 bits of the work-gate ticket it was made for (common/work_gate.h); 0 ungated
  std::uint64_t version;  // policy (weights) version the record was produced with
};
static_assert(std::is_trivially_copyable_v<RecordHeader> && std::is_standard_layout_v<RecordHeader>);
static_assert(sizeof(RecordHeader) == kFrameAlign);

/// Shared part of a ring. Producer-written and consumer-written words sit on separate cache
/// lines so that neither side's stores invalidate the other side's hot line.
struct RingHeader {
  alignas(kCacheLineBytes) std::atomic<std::uint64_t> head;  // written by the producer only
  alignas(kCacheLineBytes) std::atomic<std::uint64_t> tail;  // written by the consumer only
  alignas(kCacheLineBytes) std::uint64_t capacity;           // data bytes, power of two; immutable
  std::uint32_t max_record_bytes;                            // payload limit; immutable
  std::uint32_t reserved;
};
static_assert(std::is_standard_layout_v<RingHeader>);
static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(offsetof(RingHeader, tail) - offsetof(RingHeader, head) == kCacheLineBytes);
static_assert(offsetof(RingHeader, capacity) - offsetof(RingHeader, tail) == kCacheLineBytes);
static_assert(sizeof(RingHeader) % kCacheLineBytes == 0);

/// Frame bytes of a record with `payload` bytes.
constexpr std::uint64_t frame_bytes(std::uint64_t payload) noexcept {
  return (sizeof(RecordHeader) + payload + kFrameAlign - 1) & ~std::uint64_t{kFrameAlign - 1};
}
/// Largest payload a ring of `capacity` data bytes accepts: a frame must fit even after the
/// worst-case padding, so frames are limited to half the buffer.
constexpr std::uint32_t max_record_bytes_for(std::uint64_t capacity) noexcept {
  const std::uint64_t m = capacity / 2 - sizeof(RecordHeader);
  return m > UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(m);
}
/// Bytes a ring with `capacity` data bytes occupies (header + data).
constexpr std::size_t ring_bytes(std::uint64_t capacity) noexcept { return sizeof(RingHeader) + capacity; }

/// Lays out a ring in `memory` (ring_bytes(capacity) bytes, 64-byte aligned). `capacity` must
/// be a power of two >= 256; throws UsageError otherwise.
RingHeader* init_ring(void* memory, std::uint64_t capacity);

/// Producer handle.
class RingWriter {
 public:
  static constexpr std::uint32_t kDefaultPublishEvery = 16;  // records per head publication

  RingWriter() = default;
  /// `publish_every`: commits between publications of head (1 = publish every record).
  explicit RingWriter(RingHeader* ring, std::uint32_t publish_every = kDefaultPublishEvery) noexcept
      : ring_(ring),
        data_(reinterpret_cast<std::byte*>(ring) + sizeof(RingHeader)),
        capacity_(ring->capacity),
        mask_(ring->capacity - 1),
        max_record_(ring->max_record_bytes),
        publish_every_(publish_every == 0 ? 1 : publish_every),
        head_(ring->head.load(std::memory_order_relaxed)),
        tail_cache_(ring->tail.load(std::memory_order_acquire)) {
    assert(capacity_ != 0 && (capacity_ & mask_) == 0 && "ring capacity must be a power of two (init_ring)");
  }
  RingWriter(const RingWriter&) = delete;
  RingWriter& operator=(const RingWriter&) = delete;
  RingWriter(RingWriter&&) noexcept = default;
  RingWriter& operator=(RingWriter&&) noexcept = default;
  ~RingWriter() { flush(); }

  std::uint32_t max_record_bytes() const noexcept { return max_record_; }

  /// Producer: reserves a frame for `length` payload bytes and returns where to write the
  /// payload, or nullptr when the ring is full (pending commits are published first so the
  /// consumer can make room). At most one reservation is open; commit() closes it.
  /// Precondition: length <= max_record_bytes().
  [[nodiscard]] std::byte* try_reserve(std::uint32_t length) noexcept {
    assert(length <= max_record_ && "try_reserve() larger than max_record_bytes(): it could never fit");
    const std::uint64_t frame = frame_bytes(length);
    const std::uint64_t offset = head_ & mask_;
    const std::uint64_t to_end = capacity_ - offset;
    const std::uint64_t pad = frame > to_end ? to_end : 0;
    if (head_ + pad + frame - tail_cache_ > capacity_) {
      tail_cache_ = ring_->tail.load(std::memory_order_acquire);
      if (head_ + pad + frame - tail_cache_ > capacity_) {
        flush();
        return nullptr;
      }
    }
    if (pad != 0) {
      const RecordHeader padding{static_cast<std::uint32_t>(pad - sizeof(RecordHeader)), kPaddingRecordType, 0, 0};
      std::memcpy(data_ + offset, &padding, sizeof padding);
      head_ += pad;
    }
    reserved_length_ = length;
    reservation_open_ = true;
    return data_ + (head_ & mask_) + sizeof(RecordHeader);
  }

  /// Producer: completes the open reservation as a record of `type` (1..kMaxRecordType) made
  /// with weights `version` for the unit of work tagged `unit` (common/work_gate.h's
  /// unit_tag(); 0 for ungated work). Publishes head every `publish_every` commits.
  void commit(std::uint16_t type, std::uint64_t version, std::uint16_t unit = 0) noexcept {
    assert(reservation_open_ && "commit() without a successful try_reserve()");
    assert(type != kPaddingRecordType && type <= kMaxRecordType && "commit() type must be 1..kMaxRecordType");
    reservation_open_ = false;
    const RecordHeader h{reserved_length_, type, unit, version};
    std::memcpy(data_ + (head_ & mask_), &h, sizeof h);
    head_ += frame_bytes(reserved_length_);
    if (++unpublished_ >= publish_every_) flush();
  }

  /// Producer: makes every committed record visible to the consumer now.
  void flush() noexcept {
    if (ring_ == nullptr || unpublished_ == 0) return;
    ring_->head.store(head_, std::memory_order_release);
    unpublished_ = 0;
  }

  /// Producer: copies one record in, waiting (spin, yield, sleep) while the ring is full.
  /// Returns false when `stop` became non-zero or `timeout` passed first, or when `length`
  /// exceeds max_record_bytes() (such a record can never fit). `payload` may be null when
  /// `length` is 0.
  bool push(std::uint16_t type, std::uint64_t version, const void* payload, std::uint32_t length,
            const std::atomic<std::uint32_t>* stop, std::chrono::nanoseconds timeout) {
    if (length > max_record_) return false;
    std::byte* dst = nullptr;
    const auto r = wait_until([&] { return (dst = try_reserve(length)) != nullptr; }, stop, timeout);
    if (r != WaitResult::kReady) return false;
    if (length != 0) std::memcpy(dst, payload, length);  // an empty payload may be a null pointer
    commit(type, version);
    return true;
  }

 private:
  RingHeader* ring_ = nullptr;
  std::byte* data_ = nullptr;
  std::uint64_t capacity_ = 0;
  std::uint64_t mask_ = 0;
  std::uint32_t max_record_ = 0;
  std::uint32_t publish_every_ = 1;
  std::uint64_t head_ = 0;        // own index, published lazily
  std::uint64_t tail_cache_ = 0;  // last tail seen
  std::uint32_t reserved_length_ = 0;
  std::uint32_t unpublished_ = 0;
  bool reservation_open_ = false;  // between a successful try_reserve() and commit(); for asserts
};

/// A record as seen by the consumer; valid until release().
struct RecordView {
  std::uint16_t type = 0;
  std::uint64_t version = 0;
  const std::byte* data = nullptr;
  std::uint32_t length = 0;
  std::uint16_t unit = 0;  // RecordHeader::unit
};

enum class PeekStatus { kRecord, kEmpty, kCorrupt };

/// Consumer handle.
class RingReader {
 public:
  static constexpr std::uint64_t kAllTypes = ~std::uint64_t{1};  // every type but padding

  RingReader() = default;
  /// `allowed_types`: bit t set = records of type t are accepted.
  explicit RingReader(RingHeader* ring, std::uint64_t allowed_types = kAllTypes) noexcept
      : ring_(ring),
        data_(reinterpret_cast<std::byte*>(ring) + sizeof(RingHeader)),
        capacity_(ring->capacity),
        mask_(ring->capacity - 1),
        max_record_(ring->max_record_bytes),
        allowed_(allowed_types & ~std::uint64_t{1}),
        tail_(ring->tail.load(std::memory_order_relaxed)),
        head_cache_(tail_),
        release_batch_(ring->capacity / kReleaseFraction) {
    assert(capacity_ != 0 && (capacity_ & mask_) == 0 && "ring capacity must be a power of two (init_ring)");
  }
  RingReader(const RingReader&) = delete;
  RingReader& operator=(const RingReader&) = delete;
  RingReader(RingReader&&) noexcept = default;
  RingReader& operator=(RingReader&&) noexcept = default;
  ~RingReader() { publish_tail(); }

  /// Consumer: looks at the oldest unread record without consuming it.
  [[nodiscard]] PeekStatus peek(RecordView& out) noexcept {
    if (!error_.empty()) return PeekStatus::kCorrupt;
    for (;;) {
      if (tail_ == head_cache_) {
        publish_tail();
        head_cache_ = ring_->head.load(std::memory_order_acquire);
        if (tail_ == head_cache_) return PeekStatus::kEmpty;
        if (head_cache_ - tail_ > capacity_ || (head_cache_ - tail_) % kFrameAlign != 0)
          return corrupt("published head is inconsistent with tail");
      }
      const std::uint64_t offset = tail_ & mask_;
      const std::uint64_t to_end = capacity_ - offset;
      const std::uint64_t available = head_cache_ - tail_;
      RecordHeader h;
      std::memcpy(&h, data_ + offset, sizeof h);  // copied once: never re-read shared bytes
      if (h.type == kPaddingRecordType) {
        if (sizeof(RecordHeader) + std::uint64_t{h.length} != to_end || to_end > available)
          return corrupt("padding frame does not end at the buffer end");
        tail_ += to_end;
        pending_release_ += to_end;
        continue;
      }
      if (h.type > kMaxRecordType || ((allowed_ >> h.type) & 1) == 0) return corrupt("record type not allowed");
      if (h.length > max_record_) return corrupt("record length exceeds the ring's maximum");
      const std::uint64_t frame = frame_bytes(h.length);
      if (frame > to_end) return corrupt("record crosses the end of the buffer");
      if (frame > available) return corrupt("record extends past the published head");
      out.type = h.type;
      out.unit = h.unit;
      out.version = h.version;
      out.length = h.length;
      out.data = data_ + offset + sizeof(RecordHeader);
      peeked_frame_ = frame;
      return PeekStatus::kRecord;
    }
  }

  /// Consumer: consumes the record returned by the last successful peek().
  void release() noexcept {
    assert(peeked_frame_ != 0 && "release() without a peek() that returned a record");
    tail_ += peeked_frame_;
    pending_release_ += peeked_frame_;
    peeked_frame_ = 0;
    if (pending_release_ >= release_batch_) publish_tail();
  }

  /// Consumer: hands every released byte back to the producer now.
  void publish_tail() noexcept {
    if (ring_ == nullptr || pending_release_ == 0) return;
    ring_->tail.store(tail_, std::memory_order_release);
    pending_release_ = 0;
  }

  /// Why the last peek() returned kCorrupt (empty otherwise).
  const std::string& error() const noexcept { return error_; }
  /// Consumer-side byte position of the next frame (for diagnostics).
  std::uint64_t position() const noexcept { return tail_; }

 private:
  static constexpr std::uint64_t kReleaseFraction = 8;  // publish tail every capacity/8 bytes

  PeekStatus corrupt(const char* why) {
    RecordHeader h{};
    std::memcpy(&h, data_ + (tail_ & mask_), sizeof h);
    error_ = std::string(why) + " (at byte " + std::to_string(tail_) + ": type " + std::to_string(h.type) +
             ", length " + std::to_string(h.length) + ", max " + std::to_string(max_record_) + ", capacity " +
             std::to_string(capacity_) + ")";
    return PeekStatus::kCorrupt;
  }

  RingHeader* ring_ = nullptr;
  std::byte* data_ = nullptr;
  std::uint64_t capacity_ = 0;
  std::uint64_t mask_ = 0;
  std::uint32_t max_record_ = 0;
  std::uint64_t allowed_ = 0;
  std::uint64_t tail_ = 0;        // own index, published lazily
  std::uint64_t head_cache_ = 0;  // last head seen
  std::uint64_t peeked_frame_ = 0;
  std::uint64_t pending_release_ = 0;
  std::uint64_t release_batch_ = 1;
  std::string error_;
};

}  // namespace ringrl
