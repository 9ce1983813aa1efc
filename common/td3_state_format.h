// TD3's checkpoint state (learner/td3/td3.cc, fifo_replay.cc): the magic numbers and
// versions of an agent and of a FIFO replay, and the readers and writers of every part that is
// not a tensor's values. The writers and every reader (their loads; Python's ringrl.checkpoint,
// python/src/checkpoint_py.cc) go through these, so the layout has one definition. Torch-free.
//
// An agent: Td3Head, the 36 float blocks (common/float_block.h) of td3_tensors() in that
// order, then kAdamEntries Adam entries (the actor's 6 parameters, then both critics' 12), each
// an adam_step() head and, when the step is not 0, two float blocks: the first and the second
// moments. A FIFO replay: ReplayHead, then size x width floats.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/byte_codec.h"

namespace ringrl::td3_format {

inline constexpr std::uint32_t kTd3Magic = 0x33445431;  // "1TD3"
inline constexpr std::uint32_t kTd3Version = 1;
inline constexpr std::uint32_t kReplayMagic = 0x4f464946;  // "FIFO"
inline constexpr std::uint32_t kReplayVersion = 1;

/// A TD3 agent's head.
struct Td3Head {
  std::int32_t input_dim = 0, action_dim = 0, hidden1 = 0, hidden2 = 0, masked_inputs = 0;
  std::int64_t counter = 0;  // updates so far
  std::uint64_t rng = 0;
};
void write_td3_head(ByteWriter& w, const Td3Head& h);
/// Checks the magic, the version and a sane shape and counter.
Td3Head read_td3_head(ByteReader& r);

/// One parameter tensor of an agent: "<network>.<layer>.<weight|bias>" and its dims.
struct TensorSpec {
  std::string network;  // actor, critic1, critic2, actor_target, critic1_target, critic2_target
  std::string name;     // fc1.weight, fc1.bias, fc2.weight, fc2.bias, out.weight, out.bias
  std::vector<std::size_t> dims;
  std::size_t numel() const;
};
/// The agent's parameter blocks in the order they are written.
std::vector<TensorSpec> td3_tensors(const Td3Head& h);
/// Adam entries after the tensors: the actor's 6 parameters, then the two critics' 12.
inline constexpr int kAdamEntries = 18;

/// An Adam entry's head: 0 when the parameter has no state yet, else its step (>= 1), after
/// which the two moments follow as float blocks.
void write_adam_step(ByteWriter& w, std::int64_t step);
std::int64_t read_adam_step(ByteReader& r);

/// A FIFO replay's head; size x width floats follow.
struct ReplayHead {
  std::uint64_t capacity = 0;
  std::int32_t width = 0;  // floats per row
  std::uint64_t size = 0, added = 0;
  std::uint64_t row_bytes() const { return size * static_cast<std::uint64_t>(width) * sizeof(float); }
};
void write_replay_head(ByteWriter& w, const ReplayHead& h);
/// Checks the magic, the version, size = min(added, capacity) and that the rows fit in what is left.
ReplayHead read_replay_head(ByteReader& r);

}  // namespace ringrl::td3_format
