#include "common/actor_runtime.h"

#include <unistd.h>

#include "common/backoff.h"
#include "common/signals.h"
#include "common/work_gate.h"

namespace ringrl {

ActorRuntime::ActorRuntime(const std::string& segment_name, std::uint32_t slot, bool require_parent_creator)
    : segment_(RunSegment::attach(segment_name, require_parent_creator ? getppid() : 0)),
      slot_index_(slot),
      slot_(&segment_.slot(slot)),
      writer_(segment_.ring(slot)),
      weights_(segment_.weights()) {
  slot_->pid.store(getpid(), std::memory_order_relaxed);  // informational: the supervisor knows it from fork
  slot_->state.store(static_cast<std::uint32_t>(ActorState::kRunning), std::memory_order_relaxed);  // display only
  heartbeat();
}

ActorRuntime::~ActorRuntime() {
  writer_.flush();
  slot_->state.store(static_cast<std::uint32_t>(ActorState::kExited), std::memory_order_relaxed);  // display only
}

bool ActorRuntime::should_stop() const noexcept { return segment_.stop_requested() || shutdown_requested(); }

void ActorRuntime::heartbeat() noexcept {
  const std::uint64_t now = steady_now_ns();
  if (now - last_heartbeat_ns_ < static_cast<std::uint64_t>(std::chrono::nanoseconds(kHeartbeatEvery).count())) return;
  last_heartbeat_ns_ = now;
  slot_->heartbeat_ns.store(now, std::memory_order_relaxed);  // a timestamp: the watchdog reads only its age
}

bool ActorRuntime::refresh_weights(std::vector<std::byte>& blob) {
  if (weights_.latest() == weights_version_) return false;
  if (blob.size() < weights_.capacity()) blob.resize(weights_.capacity());
  std::size_t bytes = 0;
  const std::uint64_t v = weights_.read_if_newer(weights_version_, blob.data(), blob.size(), &bytes);
  if (v == 0) return false;
  blob.resize(bytes);
  weights_version_ = v;
  slot_->weights_version.store(v, std::memory_order_relaxed);  // for display: records carry their own version
  return true;
}

bool ActorRuntime::wait_for_weights(std::vector<std::byte>& blob, std::chrono::nanoseconds timeout) {
  const auto r = wait_until(
      [&] {
        heartbeat();
        return refresh_weights(blob) || weights_version_ != 0 || shutdown_requested();
      },
      stop_flag(), timeout);
  return r == WaitResult::kReady && weights_version_ != 0;
}

bool ActorRuntime::wait_for_work() {
  constexpr auto kWaitSlice = std::chrono::milliseconds(100);  // per wait; retried until stopped
  for (;;) {
    const auto r = wait_until(
        [&] { return try_claim_work(segment_.control(), *slot_, &ticket_) || shutdown_requested(); }, stop_flag(), kWaitSlice);
    heartbeat();
    if (should_stop()) return false;
    if (r == WaitResult::kReady) return true;
  }
}

void ActorRuntime::count(std::uint64_t records, std::uint64_t items) noexcept {
  slot_->records.fetch_add(records, std::memory_order_relaxed);  // monotonic counter, read as an approximation
  slot_->items.fetch_add(items, std::memory_order_relaxed);      // monotonic counter, read as an approximation
}

}  // namespace ringrl
