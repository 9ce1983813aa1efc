#include "learner/local_actors.h"

#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "common/control_block.h"

namespace ringrl::learner {

void LocalActors::start(const SourcePlan& plan) {
  budget_ = &budget_counter(pool_.segment().control(), plan.budget_counter.c_str());
  pool_.start();
}

void LocalActors::budget(std::uint64_t used) {
  if (budget_ != nullptr) budget_->store(used, std::memory_order_relaxed);
}

void LocalActors::lost_units(std::vector<LostUnit>& out) {
  lost_.clear();
  pool_.lost_units(lost_);
  for (const std::uint64_t t : lost_) out.push_back({0, t});
}

void LocalActors::check() {
  running_ = pool_.poll();
  if (running_ == 0 && pool_.supervisor().all_failed())
    throw std::runtime_error("every actor failed and used up its restarts; see the log above");
}

std::vector<SourceStats> LocalActors::stats() const {
  const auto& drained = pool_.drained();
  return {SourceStats{fmt::format("the {} local actor(s)", pool_.actors()), std::accumulate(drained.begin(), drained.end(), std::uint64_t{0}), running_,
                      pool_.supervisor().total_restarts()}};
}

}  // namespace ringrl::learner
