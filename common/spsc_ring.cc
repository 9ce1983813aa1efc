#include "common/spsc_ring.h"

#include <fmt/format.h>

#include <new>

#include "common/errors.h"

namespace ringrl {

namespace {
constexpr std::uint64_t kMinRingCapacity = 256;
}

RingHeader* init_ring(void* memory, std::uint64_t capacity) {
  if (capacity < kMinRingCapacity || (capacity & (capacity - 1)) != 0)
    throw UsageError(fmt::format("ring capacity {} bytes: expected a power of two >= {}", capacity, kMinRingCapacity));
  if (reinterpret_cast<std::uintptr_t>(memory) % kCacheLineBytes != 0)
    throw UsageError("ring memory must be 64-byte aligned");
  auto* ring = new (memory) RingHeader{};
  ring->capacity = capacity;
  ring->max_record_bytes = max_record_bytes_for(capacity);
  ring->head.store(0, std::memory_order_relaxed);
  ring->tail.store(0, std::memory_order_release);
  return ring;
}

}  // namespace ringrl
