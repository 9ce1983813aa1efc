#include "common/weight_channel.h"

#include <chrono>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "common/backoff.h"
#include "common/errors.h"

namespace ringrl {
namespace {

std::byte* buffer_of(WeightChannelHeader* ch, std::uint64_t index) noexcept {
  const std::uint64_t stride = (ch->capacity + 63) / 64 * 64;
  return reinterpret_cast<std::byte*>(ch) + sizeof(WeightChannelHeader) + index * stride;
}

// The blob bytes are plain memory guarded by the sequence counters (a seqlock): a reader may
// copy bytes the writer is changing and then discards that copy. ThreadSanitizer cannot see
// that protection for plain copies, so under it the copies are made of relaxed atomic words,
// which is what the protocol assumes; elsewhere memcpy does the same on this hardware, faster.
#if defined(__SANITIZE_THREAD__)
void relaxed_copy(std::byte* dst, const std::byte* src, std::size_t n) noexcept {
  std::size_t i = 0;
  if (reinterpret_cast<std::uintptr_t>(dst) % 8 == 0 && reinterpret_cast<std::uintptr_t>(src) % 8 == 0) {
    for (; i + 8 <= n; i += 8) {
      const auto w = __atomic_load_n(reinterpret_cast<const std::uint64_t*>(src + i), __ATOMIC_RELAXED);
      __atomic_store_n(reinterpret_cast<std::uint64_t*>(dst + i), w, __ATOMIC_RELAXED);
    }
  }
  for (; i < n; ++i) __atomic_store_n(dst + i, __atomic_load_n(src + i, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}
void copy_in(std::byte* dst, const void* src, std::size_t n) noexcept {
  relaxed_copy(dst, static_cast<const std::byte*>(src), n);
}
void copy_out(void* dst, const std::byte* src, std::size_t n) noexcept {
  relaxed_copy(static_cast<std::byte*>(dst), src, n);
}
#else
void copy_in(std::byte* dst, const void* src, std::size_t n) noexcept { std::memcpy(dst, src, n); }
void copy_out(void* dst, const std::byte* src, std::size_t n) noexcept { std::memcpy(dst, src, n); }
#endif

}  // namespace

std::uint64_t steady_now_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

WeightChannelHeader* init_weight_channel(void* memory, std::uint64_t capacity) {
  if (reinterpret_cast<std::uintptr_t>(memory) % 64 != 0)
    throw UsageError("weight channel memory must be 64-byte aligned");
  auto* ch = new (memory) WeightChannelHeader{};
  ch->capacity = capacity;
  for (auto& b : ch->buffers) {
    b.seq.store(0, std::memory_order_relaxed);
    b.version.store(0, std::memory_order_relaxed);
    b.bytes.store(0, std::memory_order_relaxed);
    b.publish_ns.store(0, std::memory_order_relaxed);
  }
  ch->latest.store(0, std::memory_order_release);
  return ch;
}

WeightWriter::WeightWriter(WeightChannelHeader* channel) noexcept : channel_(channel) {}

std::uint64_t WeightWriter::version() const noexcept { return channel_->latest.load(std::memory_order_relaxed); }

std::uint64_t WeightWriter::publish(const void* blob, std::size_t bytes) {
  if (bytes > channel_->capacity)
    throw UsageError(
        fmt::format("weight blob of {} bytes does not fit the channel's {} bytes", bytes, channel_->capacity));
  const std::uint64_t started = steady_now_ns();
  const std::uint64_t v = channel_->latest.load(std::memory_order_relaxed) + 1;
  WeightBufferState& b = channel_->buffers[v & 1];
  // Odd: being written. The acquire half of this read-modify-write keeps the data stores
  // below from becoming visible before the mark.
  const std::uint64_t seq = b.seq.fetch_add(1, std::memory_order_acq_rel);
  copy_in(buffer_of(channel_, v & 1), blob, bytes);
  b.version.store(v, std::memory_order_relaxed);
  b.bytes.store(bytes, std::memory_order_relaxed);
  b.publish_ns.store(started, std::memory_order_relaxed);
  b.seq.store(seq + 2, std::memory_order_release);  // even: complete
  channel_->latest.store(v, std::memory_order_release);
  return v;
}

WeightReader::WeightReader(WeightChannelHeader* channel) noexcept : channel_(channel) {}

std::uint64_t WeightReader::read_if_newer(std::uint64_t have, void* dst, std::size_t dst_bytes, std::size_t* bytes,
                                          std::uint64_t* publish_ns) {
  Backoff backoff;
  for (;;) {
    const std::uint64_t v = channel_->latest.load(std::memory_order_acquire);
    if (v == 0 || v == have) return 0;
    WeightBufferState& b = channel_->buffers[v & 1];
    const std::uint64_t s1 = b.seq.load(std::memory_order_acquire);
    if ((s1 & 1) == 0 && b.version.load(std::memory_order_relaxed) == v) {
      const std::uint64_t n = b.bytes.load(std::memory_order_relaxed);
      const std::uint64_t t = b.publish_ns.load(std::memory_order_relaxed);
      if (n > dst_bytes)
        throw UsageError(fmt::format("weight blob of {} bytes does not fit the reader's {} bytes", n, dst_bytes));
      copy_out(dst, buffer_of(channel_, v & 1), n);
      // A read-don't-modify-write: its release half keeps the copy's loads before the
      // re-check, and as a read-modify-write it sees the newest counter value.
      if (b.seq.fetch_add(0, std::memory_order_acq_rel) == s1) {
        if (bytes != nullptr) *bytes = n;
        if (publish_ns != nullptr) *publish_ns = t;
        return v;
      }
    }
    backoff.pause();  // the writer lapped this buffer during the copy: take the newer one
  }
}

}  // namespace ringrl
