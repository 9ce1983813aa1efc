#include "common/actor_pool.h"

#include <algorithm>
#include <utility>

#include "common/control_block.h"
#include "common/work_gate.h"

namespace ringrl {
namespace {

SupervisorOptions supervisor_options(const ActorPoolOptions& o, const ActorPool* pool) {
  SupervisorOptions so;
  so.executable = o.executable;
  so.heartbeat_timeout = o.heartbeat_timeout;
  so.nice = [pool](std::uint32_t slot) { return pool->launch(slot).nice; };
  so.args = [pool](std::uint32_t slot) { return pool->launch(slot).to_args(); };
  return so;
}

}  // namespace

ActorPool::ActorPool(ActorPoolOptions options)
    : o_(std::move(options)),
      seg_(RunSegment::create(o_.run_id, o_.layout)),
      weights_(seg_.weights()),
      sup_(seg_, supervisor_options(o_, this)),
      drain_(o_.layout.num_actors),
      lost_(o_.layout.num_actors) {
  readers_.reserve(o_.layout.num_actors);
  for (std::uint32_t i = 0; i < o_.layout.num_actors; ++i) readers_.emplace_back(seg_.ring(i), o_.record_mask);
}

ActorLaunch ActorPool::launch(std::uint32_t slot) const {
  ActorLaunch l = o_.launch(slot);
  l.segment = seg_.name();
  l.slot = slot;
  return l;
}

std::uint64_t ActorPool::publish(const void* blob, std::size_t bytes, std::uint64_t stamp) {
  const std::uint64_t v = weights_.publish(blob, bytes);
  if (stamps_.empty()) floor_ = v;
  stamps_.push_back(stamp);
  return v;
}

std::optional<std::uint64_t> ActorPool::stamp_of(std::uint64_t version) const noexcept {
  if (stamps_.empty() || version < floor_) return std::nullopt;
  return stamps_[std::min<std::uint64_t>(version - floor_, stamps_.size() - 1)];
}

void ActorPool::start() {
  if (started_) return;
  sup_.start();
  started_ = true;
  // Whoever sees the phase sees what came before it (the first publish).
  seg_.control().phase.store(static_cast<std::uint32_t>(RunPhase::kRunning), std::memory_order_release);
}

void ActorPool::stop() {
  seg_.control().phase.store(static_cast<std::uint32_t>(RunPhase::kDraining), std::memory_order_release);
  sup_.stop();
}

void ActorPool::lost_units(std::vector<std::uint64_t>& out) {
  for (std::uint32_t i = 0; i < actors(); ++i)
    lost_.observe(i, sup_.restarts(i) + (sup_.failed(i) ? 1 : 0),
                  seg_.slot(i).work_ticket.load(std::memory_order_relaxed), out);
}

void ActorPool::grant(std::uint64_t permits) noexcept { grant_work(seg_.control(), permits); }

}  // namespace ringrl
