#include "sweeps/slots.h"

#include <algorithm>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/exit_status.h"
#include "common/signals.h"
#include "learner/devices.h"

namespace ringrl::sweeps {

std::vector<std::string> sweep_devices(bool uses_gpu, std::uint32_t parallel, const char* who) {
  std::vector<std::string> devices;
  const int gpus = uses_gpu ? learner::cuda_device_count() : 0;
  if (gpus <= 0) return std::vector<std::string>(std::max<std::uint32_t>(1, parallel), "cpu");
  if (parallel > static_cast<std::uint32_t>(gpus))
    spdlog::warn("{}: --parallel {} capped at {} (one learner per GPU)", who, parallel, gpus);
  const int n = parallel > 0 ? std::min(gpus, static_cast<int>(parallel)) : gpus;
  for (int g = 0; g < n; ++g) devices.push_back("cuda:" + std::to_string(g));
  return devices;
}

std::optional<int> SweepSlots::open(mpi::Comm* comm, std::vector<std::string> devices, ClusterSetup setup,
                                    const std::function<void()>& check) {
  devices_ = names_ = std::move(devices);
  if (comm == nullptr) {
    check();
    return std::nullopt;
  }
  setup.devices = devices_;
  setup.check_on_rank0 = check;
  cluster_ = open_cluster(*comm, setup);
  if (comm->rank() != 0) return cluster_.refused ? kExitUsage : run_job_worker(*comm, setup, cluster_.shared);
  runner_ = cluster_.jobs.get();
  devices_ = cluster_.jobs->devices();
  names_ = cluster_.jobs->slot_names();
  return std::nullopt;
}

void SweepSlots::close() {
  if (cluster_.jobs) cluster_.jobs->finish();
}

bool run_on_slots(SweepSlots& slots, SlotWork& work, const std::string& who, const char* children) {
  ChildRunner& runner = slots.runner();
  std::vector<std::optional<std::uint64_t>> running(slots.size());
  bool forwarded = false;
  for (;;) {
    for (std::size_t s = 0; s < running.size() && !shutdown_requested(); ++s)
      if (!running[s]) running[s] = work.start(s);
    if (std::none_of(running.begin(), running.end(), [](const auto& r) { return r.has_value(); })) break;
    if (shutdown_requested() && !forwarded) {
      forwarded = true;
      spdlog::warn("{}: signal {}: stopping the running {} (each writes a checkpoint)", who, shutdown_signal(), children);
      for (const auto& r : running)
        if (r) runner.signal(*r, shutdown_signal());
    }
    runner.idle(kPollInterval);
    for (std::size_t s = 0; s < running.size(); ++s) {
      if (!running[s]) continue;
      const std::optional<int> status = runner.poll(*running[s]);
      if (status) running[s] = work.exited(s, *status, forwarded);
    }
  }
  return forwarded;
}

}  // namespace ringrl::sweeps
