// The shared-memory segment of one run: control block, actor slots, one ring per actor and
// the weight channel, at offsets fixed by RunLayout and recorded in the segment.
//
// The learner creates it (RunSegment::create), which also reclaims a stale leftover of the
// same name; actors attach (RunSegment::attach) by name. Accessors hand out process-local
// role handles (RingWriter for actor i, RingReader for the learner, WeightWriter/Reader).
// The segment unlinks itself when the creating RunSegment dies (see ShmSegment).
//
//   SegmentHeader | RunLayoutBlock | ControlBlock | ActorSlot[N] | ring 0 | ... | ring N-1 | weights
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "common/control_block.h"
#include "common/shm_segment.h"
#include "common/spsc_ring.h"
#include "common/weight_channel.h"

namespace ringrl {

inline constexpr std::uint32_t kMaxActors = 256;
/// Largest ring a run lays out, data bytes.
inline constexpr std::uint64_t kMaxRingCapacity = std::uint64_t{1} << 30;

struct RunLayoutOptions {
  std::uint32_t num_actors = 1;
  std::uint64_t ring_capacity = std::uint64_t{4} << 20;    // data bytes per ring, power of two
  std::uint64_t weight_capacity = std::uint64_t{1} << 20;  // bytes per weight buffer
};

/// Offsets of every part, as stored in the segment right after the SegmentHeader.
struct RunLayoutBlock {
  std::uint32_t num_actors;
  std::uint32_t reserved;
  std::uint64_t ring_capacity;
  std::uint64_t weight_capacity;
  std::uint64_t control_offset;
  std::uint64_t slots_offset;
  std::uint64_t rings_offset;
  std::uint64_t ring_stride;
  std::uint64_t weights_offset;
  std::uint64_t total_bytes;
};
static_assert(std::is_trivially_copyable_v<RunLayoutBlock>);

/// Validates `options` (UsageError naming the bad value) and computes the layout.
RunLayoutBlock compute_run_layout(const RunLayoutOptions& options);

class RunSegment {
 public:
  static RunSegment create(const std::string& run_id, const RunLayoutOptions& options);
  /// `expected_creator` 0 = any live creator.
  static RunSegment attach(const std::string& name, pid_t expected_creator = 0);

  const std::string& name() const noexcept { return seg_.name(); }
  const RunLayoutBlock& layout() const noexcept { return layout_; }
  std::uint32_t num_actors() const noexcept { return layout_.num_actors; }
  ControlBlock& control() const noexcept;
  /// Throws UsageError when `i` >= num_actors().
  ActorSlot& slot(std::uint32_t i) const;
  RingHeader* ring(std::uint32_t i) const;
  WeightChannelHeader* weights() const noexcept;
  bool stop_requested() const noexcept {
    return control().stop.load(std::memory_order_acquire) != 0;  // pairs with request_stop()'s release
  }
  void request_stop() const noexcept {
    control().stop.store(1, std::memory_order_release);  // what the learner did before is seen with stop
  }
  /// Learner only, while actor i is not running: empties ring i (head = tail = 0).
  void reset_ring(std::uint32_t i) const;

 private:
  RunSegment(ShmSegment seg, RunLayoutBlock layout) noexcept : seg_(std::move(seg)), layout_(layout) {}
  ShmSegment seg_;
  RunLayoutBlock layout_;
};

}  // namespace ringrl
