// Waiting without burning a shared core: spin briefly, then yield, then sleep.
//
// A Backoff is a per-wait, per-thread object: construct it where a wait begins and call
// pause() once per failed poll. The first kSpinPolls polls spin with a CPU pause hint (the
// other side is usually about to publish), the next kYieldPolls call sched_yield() (so a
// producer and consumer sharing one core hand it over at once), and after that each poll
// sleeps, kMinSleep at first and twice as long each time up to kMaxSleep. Pure spinning
// collapses throughput ~60x when processes outnumber cores; a short fixed sleep, in a long
// wait (an actor whose ring is full while the learner trains), wakes the waiter thousands of
// times a second, and each wake-up preempts a thread that has work.
//
// wait_until() is the one blocking loop every shared-memory wait in ringrl goes through: it
// polls `ready`, honours a stop flag and a timeout, and says which of the three ended it.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace ringrl {

class Backoff {
 public:
  static constexpr std::uint32_t kSpinPolls = 64;    // busy polls before yielding
  static constexpr std::uint32_t kYieldPolls = 256;  // sched_yield polls before sleeping
  static constexpr std::chrono::microseconds kMinSleep{50};
  static constexpr std::chrono::microseconds kMaxSleep{800};

  void pause() noexcept {
    if (polls_ < kSpinPolls) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else if (polls_ < kSpinPolls + kYieldPolls) {
      sched_yield();
    } else {
      std::this_thread::sleep_for(sleep_);
      sleep_ = std::min(2 * sleep_, kMaxSleep);
    }
    if (polls_ != UINT32_MAX) ++polls_;
  }
  void reset() noexcept {
    polls_ = 0;
    sleep_ = kMinSleep;
  }
  std::uint32_t polls() const noexcept { return polls_; }

 private:
  std::uint32_t polls_ = 0;
  std::chrono::microseconds sleep_ = kMinSleep;
};

enum class WaitResult { kReady, kStopped, kTimedOut };

/// Polls `ready()` until it returns true, `stop` becomes non-zero, or `timeout` passes.
/// `stop` may be null. A timeout of zero or less means "poll once".
template <typename Ready>
WaitResult wait_until(Ready&& ready, const std::atomic<std::uint32_t>* stop, std::chrono::nanoseconds timeout) {
  if (ready()) return WaitResult::kReady;
  if (timeout <= std::chrono::nanoseconds::zero()) return WaitResult::kTimedOut;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  Backoff backoff;
  for (;;) {
    if (stop != nullptr && stop->load(std::memory_order_acquire) != 0) return WaitResult::kStopped;
    // Check the clock only once spinning is over: now() costs ~20 ns.
    if (backoff.polls() >= Backoff::kSpinPolls && std::chrono::steady_clock::now() >= deadline)
      return WaitResult::kTimedOut;
    backoff.pause();
    if (ready()) return WaitResult::kReady;
  }
}

}  // namespace ringrl
