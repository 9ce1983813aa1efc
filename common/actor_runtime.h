// What every actor process does around its own work: attach to the run segment, own its
// slot (pid, state, heartbeat, counters), produce into its ring, and pick up new weights.
//
// One ActorRuntime per actor process, used from that process's single thread. The learner is
// the segment's creator; an actor checks that the creator is its parent process, so a stale or
// foreign segment is refused with a clear message.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/run_segment.h"
#include "common/work_gate.h"

namespace ringrl {

class ActorRuntime {
 public:
  static constexpr std::chrono::milliseconds kHeartbeatEvery{100};

  /// Attaches `segment_name` as actor `slot`. `require_parent_creator`: refuse a segment not
  /// created by the parent process (the supervisor's normal case).
  ActorRuntime(const std::string& segment_name, std::uint32_t slot, bool require_parent_creator = true);
  ~ActorRuntime();
  ActorRuntime(const ActorRuntime&) = delete;
  ActorRuntime& operator=(const ActorRuntime&) = delete;

  std::uint32_t slot_index() const noexcept { return slot_index_; }
  RunSegment& segment() noexcept { return segment_; }
  ActorSlot& slot() noexcept { return *slot_; }
  RingWriter& ring() noexcept { return writer_; }
  const std::atomic<std::uint32_t>* stop_flag() const noexcept { return &segment_.control().stop; }
  /// True once the learner asked every actor to stop (or this process got SIGINT/SIGTERM).
  bool should_stop() const noexcept;

  /// Writes the heartbeat if kHeartbeatEvery passed since the last one. Cheap; call per batch.
  void heartbeat() noexcept;
  /// If the learner published newer weights, copies them into `blob` (resized to fit) and
  /// returns true. Records made afterwards should carry weights_version().
  bool refresh_weights(std::vector<std::byte>& blob);
  std::uint64_t weights_version() const noexcept { return weights_version_; }
  /// Waits (bounded) until the first weights are published; false when stopped or timed out.
  bool wait_for_weights(std::vector<std::byte>& blob, std::chrono::nanoseconds timeout);

  /// Claims one unit of work through the run's work gate (common/work_gate.h), waiting while
  /// every permit is taken, with the heartbeat going; false when stopped. Refresh the weights
  /// after it returns: the permit was granted for them. Tag the unit's records with unit().
  bool wait_for_work();
  /// The tag of the unit claimed last (RingWriter::commit's `unit`).
  std::uint16_t unit() const noexcept { return unit_tag(ticket_); }

  /// Adds to the slot's counters.
  void count(std::uint64_t records, std::uint64_t items) noexcept;

 private:
  RunSegment segment_;
  std::uint32_t slot_index_;
  ActorSlot* slot_;
  RingWriter writer_;
  WeightReader weights_;
  std::uint64_t weights_version_ = 0;
  std::uint64_t ticket_ = 0;  // of the unit claimed last
  std::uint64_t last_heartbeat_ns_ = 0;
};

}  // namespace ringrl
