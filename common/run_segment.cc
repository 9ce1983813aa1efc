#include "common/run_segment.h"

#include <cstring>
#include <new>

#include <fmt/format.h>

#include "common/errors.h"
#include "common/work_gate.h"

namespace ringrl {
namespace {

constexpr std::uint64_t kAlign = 64;
constexpr std::uint64_t kMinRingCapacity = 4096;
constexpr std::uint64_t kMaxWeightCapacity = std::uint64_t{4} << 30;

constexpr std::uint64_t align_up(std::uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

}  // namespace

RunLayoutBlock compute_run_layout(const RunLayoutOptions& o) {
  if (o.num_actors < 1 || o.num_actors > kMaxActors)
    throw UsageError(fmt::format("actor count {}: expected 1 to {}", o.num_actors, kMaxActors));
  if (o.ring_capacity < kMinRingCapacity || o.ring_capacity > kMaxRingCapacity ||
      (o.ring_capacity & (o.ring_capacity - 1)) != 0)
    throw UsageError(fmt::format("ring capacity {} bytes: expected a power of two from {} to {}", o.ring_capacity,
                                 kMinRingCapacity, kMaxRingCapacity));
  if (o.weight_capacity < 1 || o.weight_capacity > kMaxWeightCapacity)
    throw UsageError(fmt::format("weight capacity {} bytes: expected 1 to {}", o.weight_capacity, kMaxWeightCapacity));
  RunLayoutBlock l{};
  l.num_actors = o.num_actors;
  l.ring_capacity = o.ring_capacity;
  l.weight_capacity = o.weight_capacity;
  l.control_offset = align_up(sizeof(SegmentHeader) + sizeof(RunLayoutBlock));
  l.slots_offset = l.control_offset + align_up(sizeof(ControlBlock));
  l.rings_offset = l.slots_offset + align_up(sizeof(ActorSlot) * o.num_actors);
  l.ring_stride = align_up(ring_bytes(o.ring_capacity));
  l.weights_offset = l.rings_offset + l.ring_stride * o.num_actors;
  l.total_bytes = l.weights_offset + align_up(weight_channel_bytes(o.weight_capacity));
  return l;
}

RunSegment RunSegment::create(const std::string& run_id, const RunLayoutOptions& options) {
  const RunLayoutBlock l = compute_run_layout(options);
  ShmSegment::reclaim_stale_segments();  // leftovers of crashed runs, whatever their run id
  ShmSegment seg = ShmSegment::create(segment_name(run_id), l.total_bytes, run_id);
  std::byte* base = seg.data();
  std::memcpy(base + sizeof(SegmentHeader), &l, sizeof l);
  auto* control = new (base + l.control_offset) ControlBlock{};
  control->num_actors = l.num_actors;
  grant_work(*control, kUnlimitedWork);  // ungated until the learner says otherwise
  for (std::uint32_t i = 0; i < l.num_actors; ++i) {
    new (base + l.slots_offset + i * sizeof(ActorSlot)) ActorSlot{};
    init_ring(base + l.rings_offset + i * l.ring_stride, l.ring_capacity);
  }
  init_weight_channel(base + l.weights_offset, l.weight_capacity);
  seg.mark_ready();
  return RunSegment(std::move(seg), l);
}

RunSegment RunSegment::attach(const std::string& name, pid_t expected_creator) {
  AttachOptions ao;
  ao.expected_creator = expected_creator;
  ShmSegment seg = ShmSegment::attach(name, ao);
  if (seg.size() < sizeof(SegmentHeader) + sizeof(RunLayoutBlock))
    throw UsageError(fmt::format("segment {}: {} bytes is too small for a run layout", name, seg.size()));
  RunLayoutBlock stored;
  std::memcpy(&stored, seg.data() + sizeof(SegmentHeader), sizeof stored);
  // Recompute from the stored options: any disagreement means a foreign or damaged layout.
  RunLayoutBlock expect;
  try {
    expect = compute_run_layout({stored.num_actors, stored.ring_capacity, stored.weight_capacity});
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("segment {}: stored layout is invalid: {}", name, e.what()));
  }
  if (std::memcmp(&expect, &stored, sizeof stored) != 0 || expect.total_bytes != seg.size())
    throw UsageError(fmt::format("segment {}: stored layout does not match its size ({} bytes, expected {})", name,
                                 seg.size(), expect.total_bytes));
  return RunSegment(std::move(seg), stored);
}

ControlBlock& RunSegment::control() const noexcept {
  return *std::launder(reinterpret_cast<ControlBlock*>(seg_.data() + layout_.control_offset));
}

ActorSlot& RunSegment::slot(std::uint32_t i) const {
  if (i >= layout_.num_actors)
    throw UsageError(fmt::format("actor slot {}: expected 0 to {}", i, layout_.num_actors - 1));
  return *std::launder(reinterpret_cast<ActorSlot*>(seg_.data() + layout_.slots_offset + i * sizeof(ActorSlot)));
}

RingHeader* RunSegment::ring(std::uint32_t i) const {
  if (i >= layout_.num_actors) throw UsageError(fmt::format("ring {}: expected 0 to {}", i, layout_.num_actors - 1));
  return std::launder(reinterpret_cast<RingHeader*>(seg_.data() + layout_.rings_offset + i * layout_.ring_stride));
}

WeightChannelHeader* RunSegment::weights() const noexcept {
  return std::launder(reinterpret_cast<WeightChannelHeader*>(seg_.data() + layout_.weights_offset));
}

void RunSegment::reset_ring(std::uint32_t i) const {
  RingHeader* r = ring(i);
  r->head.store(0, std::memory_order_relaxed);
  r->tail.store(0, std::memory_order_release);
}

}  // namespace ringrl
