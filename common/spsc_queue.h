// A lock-free single-producer / single-consumer queue of objects between two threads of one
// process: the in-process sibling of the shared-memory byte ring (common/spsc_ring.h), with the
// same index discipline: `head` and `tail` only grow, each side owns one and caches the other's.
//
// Contract:
// * Exactly one producer thread calls try_push(), exactly one consumer thread calls try_pop()
//   and empty() from the consumer's side; capacity is fixed at construction (rounded up to a
//   power of two, at least 2).
// * try_push() moves the value in and returns true, or returns false and leaves the value as it
//   was when the queue is full. try_pop() moves the oldest value out, or returns nullopt.
// * Everything the producer wrote into a value before try_push() is visible to the consumer
//   after the try_pop() that returns it (release/acquire on the indices).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ringrl {

template <typename T>
class SpscQueue {
 public:
  explicit SpscQueue(std::size_t capacity) : slots_(round_up(capacity)), mask_(round_up(capacity) - 1) {}
  SpscQueue(const SpscQueue&) = delete;
  SpscQueue& operator=(const SpscQueue&) = delete;

  std::size_t capacity() const noexcept { return slots_.size(); }

  [[nodiscard]] bool try_push(T& value) {
    const std::uint64_t h = head_.load(std::memory_order_relaxed);
    if (h - tail_cache_ == slots_.size()) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
      if (h - tail_cache_ == slots_.size()) return false;
    }
    slots_[h & mask_] = std::move(value);
    head_.store(h + 1, std::memory_order_release);
    return true;
  }
  [[nodiscard]] bool try_push(T&& value) { return try_push(value); }

  std::optional<T> try_pop() {
    const std::uint64_t t = tail_.load(std::memory_order_relaxed);
    if (t == head_cache_) {
      head_cache_ = head_.load(std::memory_order_acquire);
      if (t == head_cache_) return std::nullopt;
    }
    std::optional<T> out(std::move(slots_[t & mask_]));
    slots_[t & mask_] = T{};  // the queue keeps no resources of a value it gave away
    tail_.store(t + 1, std::memory_order_release);
    return out;
  }

  /// The consumer's view: nothing to pop right now.
  bool empty() const noexcept {
    return tail_.load(std::memory_order_relaxed) == head_.load(std::memory_order_acquire);
  }

 private:
  static std::size_t round_up(std::size_t n) {
    std::size_t p = 2;
    while (p < n) p *= 2;
    return p;
  }

  std::vector<T> slots_;
  std::size_t mask_;
  alignas(64) std::atomic<std::uint64_t> head_{0};  // the producer's
  std::uint64_t tail_cache_ = 0;                    // the producer's copy of tail_
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // the consumer's
  std::uint64_t head_cache_ = 0;                    // the consumer's copy of head_
};

}  // namespace ringrl
