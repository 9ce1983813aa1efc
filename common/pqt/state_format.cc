#include "common/pqt/state_format.h"

#include <cstring>

namespace ringrl::pqt_format {

void write_section_head(ByteWriter& w, const SectionHead& h) {
  w.put(kStateVersion);
  w.put(h.npe);
  w.put(h.batches);
  w.put(h.dropped_stale);
  w.put(h.best_reward);
  w.put_string(h.best_code);
  w.put<std::uint8_t>(h.solved ? 1 : 0);
  w.put_string(h.solution);
}

SectionHead read_section_head(ByteReader& r) {
  r.expect(kStateVersion, "pqt state version");
  SectionHead h;
  h.npe = r.get<std::uint64_t>();
  h.batches = r.get<std::uint64_t>();
  h.dropped_stale = r.get<std::uint64_t>();
  h.best_reward = r.get<double>();
  h.best_code = r.get_string(kMaxCodeBytes);
  h.solved = r.get<std::uint8_t>() != 0;
  h.solution = r.get_string(kMaxCodeBytes);
  return h;
}

void write_learner_head(ByteWriter& w, const LearnerHead& h) {
  w.put_bytes(kLearnerTag, sizeof kLearnerTag);
  w.put(h.fingerprint);
  w.put(h.max_len);
  w.put(h.version);
}

LearnerHead read_learner_head(ByteReader& r) {
  char tag[sizeof kLearnerTag];
  r.get_bytes(tag, sizeof tag);
  if (std::memcmp(tag, kLearnerTag, sizeof tag) != 0) r.fail("not a PQT learner state (bad tag)");
  LearnerHead h;
  h.fingerprint = r.get<std::uint64_t>();
  h.max_len = r.get<std::int32_t>();
  h.version = r.get<std::uint64_t>();
  return h;
}

}  // namespace ringrl::pqt_format
