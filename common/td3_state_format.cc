#include "common/td3_state_format.h"

#include <algorithm>

#include <fmt/format.h>

namespace ringrl::td3_format {

void write_td3_head(ByteWriter& w, const Td3Head& h) {
  w.put(kTd3Magic);
  w.put(kTd3Version);
  for (const std::int32_t v : {h.input_dim, h.action_dim, h.hidden1, h.hidden2, h.masked_inputs}) w.put(v);
  w.put(h.counter);
  w.put(h.rng);
}

Td3Head read_td3_head(ByteReader& r) {
  r.expect(kTd3Magic, "td3 agent magic");
  r.expect(kTd3Version, "td3 agent version");
  Td3Head h;
  h.input_dim = r.get<std::int32_t>();
  h.action_dim = r.get<std::int32_t>();
  h.hidden1 = r.get<std::int32_t>();
  h.hidden2 = r.get<std::int32_t>();
  h.masked_inputs = r.get<std::int32_t>();
  if (h.input_dim < 1 || h.action_dim < 1 || h.hidden1 < 1 || h.hidden2 < 1 || h.masked_inputs < 0 ||
      h.masked_inputs > h.input_dim)
    r.fail(fmt::format("td3 agent of shape (in {}, act {}, hidden {}-{}, masked {})", h.input_dim, h.action_dim,
                       h.hidden1, h.hidden2, h.masked_inputs));
  h.counter = r.get<std::int64_t>();
  if (h.counter < 0) r.fail(fmt::format("td3 update counter {}", h.counter));
  h.rng = r.get<std::uint64_t>();
  return h;
}

std::size_t TensorSpec::numel() const {
  std::size_t n = 1;
  for (const std::size_t d : dims) n *= d;
  return n;
}

std::vector<TensorSpec> td3_tensors(const Td3Head& h) {
  const auto z = [](std::int32_t v) { return static_cast<std::size_t>(v); };
  std::vector<TensorSpec> out;
  for (const char* net : {"actor", "critic1", "critic2", "actor_target", "critic1_target", "critic2_target"}) {
    const bool actor = std::string(net).rfind("actor", 0) == 0;
    // A critic sees the action beside the input of each of its first two layers.
    const std::size_t in1 = actor ? z(h.input_dim) : z(h.input_dim) + z(h.action_dim);
    const std::size_t in2 = actor ? z(h.hidden1) : z(h.hidden1) + z(h.action_dim);
    const std::size_t outs = actor ? z(h.action_dim) : 1;
    out.push_back({net, "fc1.weight", {z(h.hidden1), in1}});
    out.push_back({net, "fc1.bias", {z(h.hidden1)}});
    out.push_back({net, "fc2.weight", {z(h.hidden2), in2}});
    out.push_back({net, "fc2.bias", {z(h.hidden2)}});
    out.push_back({net, "out.weight", {outs, z(h.hidden2)}});
    out.push_back({net, "out.bias", {outs}});
  }
  return out;
}

void write_adam_step(ByteWriter& w, std::int64_t step) {
  w.put<std::uint8_t>(step > 0 ? 1 : 0);
  if (step > 0) w.put(step);
}

std::int64_t read_adam_step(ByteReader& r) {
  const auto present = r.get<std::uint8_t>();
  if (present > 1) r.fail(fmt::format("Adam state flag {}", present));
  if (present == 0) return 0;
  const auto step = r.get<std::int64_t>();
  if (step < 1) r.fail(fmt::format("Adam step {}", step));
  return step;
}

void write_replay_head(ByteWriter& w, const ReplayHead& h) {
  w.put(kReplayMagic);
  w.put(kReplayVersion);
  w.put(h.capacity);
  w.put(h.width);
  w.put(h.size);
  w.put(h.added);
}

ReplayHead read_replay_head(ByteReader& r) {
  r.expect(kReplayMagic, "replay magic");
  r.expect(kReplayVersion, "replay version");
  ReplayHead h;
  h.capacity = r.get<std::uint64_t>();
  h.width = r.get<std::int32_t>();
  h.size = r.get<std::uint64_t>();
  h.added = r.get<std::uint64_t>();
  if (h.width < 1 || h.size > h.capacity || h.size != std::min(h.added, h.capacity))
    r.fail(fmt::format("replay holds {} rows of {} floats after {} adds, capacity {}", h.size, h.width, h.added,
                       h.capacity));
  if (h.row_bytes() > r.remaining())
    r.fail(fmt::format("replay rows need {} bytes, {} left", h.row_bytes(), r.remaining()));
  return h;
}

}  // namespace ringrl::td3_format
