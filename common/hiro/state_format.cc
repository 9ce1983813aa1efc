#include "common/hiro/state_format.h"

#include <algorithm>

#include <fmt/format.h>

namespace ringrl::hiro_format {

void write_section_head(ByteWriter& w, const SectionHead& h) {
  w.put(kStateVersion);
  w.put(h.env_steps);
  w.put(h.low_updates);
  w.put(h.high_updates);
  w.put(h.evaluations);
  w.put(h.last_eval);
  w.put(h.best_success);
  w.put(h.intrinsic_reward);
  w.put_vector(h.per_collector);
  w.put_vector(h.positions);
  w.put<std::uint64_t>(h.queue.size());
  for (const SectionHead::Queued& q : h.queue) {
    w.put(q.actor);
    w.put_vector(q.bytes);
  }
}

SectionHead read_section_head(ByteReader& r) {
  SectionHead h;
  h.version = r.get<std::uint32_t>();
  if (h.version != kStateVersion && h.version != kStateVersionNoStreams)
    r.fail(fmt::format("hiro state version {}, this build reads {} and {}", h.version, kStateVersionNoStreams,
                       kStateVersion));
  h.env_steps = r.get<std::uint64_t>();
  h.low_updates = r.get<std::uint64_t>();
  h.high_updates = r.get<std::uint64_t>();
  h.evaluations = r.get<std::uint64_t>();
  h.last_eval = r.get<hiro::HiroEvalRecord>();
  h.best_success = r.get<double>();
  h.intrinsic_reward = r.get<double>();
  h.per_collector = r.get_vector<std::uint64_t>(kMaxCollectors);
  if (h.version == kStateVersion) h.positions = r.get_vector<std::uint64_t>(kMaxCollectors);
  const auto queued = r.get<std::uint64_t>();
  if (queued > kMaxQueuedSteps) r.fail(fmt::format("{} queued steps, at most {}", queued, kMaxQueuedSteps));
  h.queue.resize(static_cast<std::size_t>(queued));
  for (SectionHead::Queued& q : h.queue) {
    q.actor = r.get<std::uint32_t>();
    q.bytes = r.get_vector<std::byte>(kMaxQueuedRecordBytes);
  }
  return h;
}

void write_learner_head(ByteWriter& w, std::uint64_t rng_state) {
  w.put(kLearnerMagic);
  w.put(kLearnerVersion);
  w.put(rng_state);
}

std::uint64_t read_learner_head(ByteReader& r) {
  r.expect(kLearnerMagic, "hiro learner magic");
  r.expect(kLearnerVersion, "hiro learner version");
  return r.get<std::uint64_t>();
}

}  // namespace ringrl::hiro_format
