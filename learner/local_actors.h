// LocalActors: this machine's actor pool (common/actor_pool.h) as the run driver's first
// ActorSource (learner/actor_source.h): one work-gate participant, slots [0, actors).
//
// Contract (besides ActorSource's):
// * The pool's weight channel is the driver's own: the driver publishes on it (ActorPool::
//   publish numbers the publications), so publish() has nothing more to send.
// * start() starts the pool's actors; budget() stores the budget in the pool's control block
//   (the counter plan.budget_counter names); check() supervises (restarts, hang detection)
//   and throws when every actor used up its restarts.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "common/actor_pool.h"
#include "learner/actor_source.h"

namespace ringrl::learner {

class LocalActors final : public ActorSource {
 public:
  explicit LocalActors(ActorPool& pool) noexcept : pool_(pool) {}

  std::uint32_t participants() const override { return 1; }
  std::uint32_t slots() const override { return pool_.actors(); }
  void start(const SourcePlan& plan) override;
  std::uint64_t poll(const Take& take) override { return pool_.drain(take); }
  void publish(const std::byte* /*blob*/, std::size_t /*bytes*/, std::uint64_t /*channel_version*/) override {}
  void budget(std::uint64_t used) override;
  void grant(const std::uint64_t* permits) override { pool_.grant(permits[0]); }
  void check() override;
  void lost_units(std::vector<LostUnit>& out) override;
  std::vector<SourceStats> stats() const override;
  void stop() override { pool_.stop(); }

 private:
  ActorPool& pool_;
  std::atomic<std::uint64_t>* budget_ = nullptr;  // set by start()
  std::uint32_t running_ = 0;                      // at the last check()
  std::vector<std::uint64_t> lost_;                // scratch
};

}  // namespace ringrl::learner
