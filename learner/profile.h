// PhaseProfiler: wall-clock spans of the learner's phases, as a Chrome trace and a table.
//
// Contract:
// * One profiler per learner thread; not thread-safe. Spans of the same phase may repeat
//   (one per step); spans of different phases may nest (a wait inside a step).
// * With a device sync hook set (set_device_sync), every span end first calls the hook, so a
//   span covers the device work queued inside it (the learner sets it to a CUDA synchronize
//   when profiling on a GPU; it costs throughput, so it is only set while profiling).
// * write_chrome_trace() writes the Chrome trace-event JSON ("X" complete events, times in
//   microseconds since construction) loadable in chrome://tracing or Perfetto.
// * Keeps at most `max_spans` spans for the trace (older ones still count in the summary).
// * Torch-free.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ringrl::learner {

/// The learner's phases, in pipeline order.
enum class Phase : int {
  kWaitData = 0,  // waiting for episodes from the rings
  kBatchBuild,    // EpisodeBatch -> host (pinned) tensors, queue sampling
  kHostToDevice,  // host -> device copies
  kForward,       // teacher-forced forward + losses
  kBackward,      // autograd backward
  kOptimizer,     // clipping, RMSProp, baseline update, queue push
  kPublish,       // parameters -> flat blob -> weight channel
  // TD3 / HIRO (learner/td3, learner/hiro): one update's phases
  kSample,   // replay rows drawn, gathered on the host, copied to the device, batch built
  kRelabel,  // high level: the off-policy goal correction (spec hiro.md §9)
  kCritic,   // target Q, critic loss, backward, Adam step of both critics
  kActor,    // actor loss, backward, Adam step (every update_period-th update)
  kTarget,   // soft update of the target networks
  kCount
};
inline constexpr int kNumPhases = static_cast<int>(Phase::kCount);

/// Display name of a phase ("wait_data", "batch_build", ...).
const char* phase_name(Phase phase);

/// Per-phase totals over all spans seen.
struct PhaseSummary {
  Phase phase;
  std::uint64_t count = 0;
  double total_s = 0.0;
  double mean_us = 0.0;
  double min_us = 0.0;
  double max_us = 0.0;
};

class PhaseProfiler {
 public:
  /// Default trace span budget: ~35 MB of JSON at most.
  static constexpr std::size_t kDefaultMaxSpans = 200000;

  explicit PhaseProfiler(std::size_t max_spans = kDefaultMaxSpans);

  /// Hook called before each span end (e.g. a device synchronize); empty = none.
  void set_device_sync(std::function<void()> sync) { sync_ = std::move(sync); }

  /// RAII span: begins at construction, ends at destruction (or at end()).
  class Scope {
   public:
    Scope(PhaseProfiler* profiler, Phase phase);
    ~Scope() { end(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    void end();

   private:
    PhaseProfiler* profiler_;  // null: disabled or already ended
    Phase phase_;
    std::chrono::steady_clock::time_point start_;
  };

  /// Records one finished span (start/end on the steady clock).
  void record(Phase phase, std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point end);

  std::vector<PhaseSummary> summary() const;
  /// Fixed-width table: phase, count, total s, mean/min/max us, share of the total.
  std::string summary_table() const;
  /// Chrome trace JSON as a string / into a file (throws std::system_error on I/O failure).
  std::string chrome_trace_json() const;
  void write_chrome_trace(const std::string& path) const;

  void reset();

 private:
  friend class Scope;
  struct Span {
    Phase phase;
    double start_us;
    double dur_us;
  };
  struct Acc {
    std::uint64_t count = 0;
    double total_us = 0.0;
    double min_us = 0.0;
    double max_us = 0.0;
  };

  std::size_t max_spans_;
  std::chrono::steady_clock::time_point origin_;
  std::function<void()> sync_;
  std::vector<Span> spans_;
  std::array<Acc, kNumPhases> acc_{};
};

/// Scope helper that accepts a null profiler (no-op then).
inline PhaseProfiler::Scope profile_scope(PhaseProfiler* profiler, Phase phase) {
  return PhaseProfiler::Scope(profiler, phase);
}

}  // namespace ringrl::learner
