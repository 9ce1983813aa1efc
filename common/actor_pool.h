// ActorPool: one machine's actors and everything between them and whoever takes their records:
// the run segment, the supervisor, a reader per ring, the drain loop, the lost-work count, the
// weight channel with its version map, and the run phase. The run driver (learner/run_driver.h),
// a node bridge (mpi/node_bridge.h) and `ringrl demo` each own one.
//
// Contract:
// * Construction creates the segment (RunSegment::create: one ring per actor, the weight
//   channel sized for the blob) and the supervisor; no actor runs until start().
// * publish(blob, stamp) writes the blob on the weight channel and remembers `stamp` (what the
//   owner calls that version: the learner's version, or rank 0's channel version on a node) for
//   the channel version it got. The first publish after construction or begin_epoch() is the
//   floor: stamp_of() maps a record's channel version to the stamp it was made with, nullopt for
//   a version below the floor (weights of an earlier epoch, e.g. an earlier repetition).
//   A version past the last publish maps to the last stamp.
// * start() starts the actors (once; after the first publish, so an actor never sees an empty
//   channel) and sets the phase to running. stop() sets the phase to draining and stops them.
// * drain() is one RingDrain pass over the rings (common/ring_drain.h), with `extra` more
//   sources; drained() counts the records taken per ring.
// * lost_units() observes every slot's deaths (common/lost_work.h) and gives the tickets of the
//   units dead actors held. grant() sets the work gate's permits (common/work_gate.h).
// * One thread uses an instance. Destruction stops any running actors and removes the segment.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/actor_launch.h"
#include "common/lost_work.h"
#include "common/ring_drain.h"
#include "common/run_segment.h"
#include "common/supervisor.h"
#include "common/weight_channel.h"

namespace ringrl {

struct ActorPoolOptions {
  std::string run_id;                  // names the segment (RunSegment::create)
  RunLayoutOptions layout;             // actors, ring and weight capacities
  std::uint64_t record_mask = RingReader::kAllTypes;  // record types the rings accept
  std::string executable;              // the actors' binary; empty = this process's own
  std::chrono::milliseconds heartbeat_timeout{60000};  // an actor silent this long is restarted
  /// The launch of slot `slot`; the pool fills in the segment name.
  std::function<ActorLaunch(std::uint32_t slot)> launch;
};

class ActorPool {
 public:
  explicit ActorPool(ActorPoolOptions options);
  ActorPool(const ActorPool&) = delete;
  ActorPool& operator=(const ActorPool&) = delete;

  RunSegment& segment() noexcept { return seg_; }
  const std::string& segment_name() const noexcept { return seg_.name(); }
  std::uint32_t actors() const noexcept { return o_.layout.num_actors; }
  const RunLayoutOptions& layout() const noexcept { return o_.layout; }
  /// The launch of slot `slot`, as the supervisor gives it (segment name filled in).
  ActorLaunch launch(std::uint32_t slot) const;

  /// Publishes `bytes` of `blob` as version `stamp` (see the contract); returns the channel version.
  std::uint64_t publish(const void* blob, std::size_t bytes, std::uint64_t stamp);
  /// The next publish is a new floor.
  void begin_epoch() noexcept { stamps_.clear(); }
  /// The stamp of the weights channel version `version` was, nullopt below the floor.
  std::optional<std::uint64_t> stamp_of(std::uint64_t version) const noexcept;
  /// The channel version of the newest publish.
  std::uint64_t weights_version() const noexcept { return weights_.version(); }

  void start();
  bool started() const noexcept { return started_; }
  void stop();

  template <class Take>
  std::uint64_t drain(Take&& take) {
    return drain_.pass(readers_, take);
  }
  template <class Take, class DrainExtra>
  std::uint64_t drain(std::uint32_t extra, Take&& take, DrainExtra&& drain_extra) {
    return drain_.pass(readers_, extra, take, drain_extra);
  }
  const std::vector<std::uint64_t>& drained() const noexcept { return drain_.drained(); }

  /// Appends the tickets of the units actors died holding since the last call.
  void lost_units(std::vector<std::uint64_t>& out);
  void grant(std::uint64_t permits) noexcept;

  Supervisor& supervisor() noexcept { return sup_; }
  const Supervisor& supervisor() const noexcept { return sup_; }
  /// Supervises (restarts, hang detection); returns the running actors.
  std::uint32_t poll() { return sup_.poll(); }

 private:
  ActorPoolOptions o_;
  RunSegment seg_;
  WeightWriter weights_;
  Supervisor sup_;
  std::vector<RingReader> readers_;
  RingDrain drain_;
  LostWork lost_;
  std::uint64_t floor_ = 0;
  std::vector<std::uint64_t> stamps_;  // stamps_[k]: the stamp of channel version floor_ + k
  bool started_ = false;
};

}  // namespace ringrl
