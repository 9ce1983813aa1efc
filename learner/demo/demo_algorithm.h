// The demo as an Algorithm of the run driver (learner/run_driver.h): `ringrl demo`. The
// smallest complete wing, the one to read first (the record: common/demo/demo_record.h; the
// actor: actors/demo/demo_actor.h). Torch-free: it runs in the front binary.
//
// The learner holds w (DemoOptions::dim floats, 0 at the start). Each record's gradient is
// applied on arrival, w += lr * g, unless it was made more than kMaxLag versions ago: a stale
// gradient pulls w back toward where it was, and enough of them make w diverge, so those are
// counted and dropped. After every kPublishEvery records the algorithm steps (one learner
// version) and the driver publishes w. Its budget is records; it is solved when the
// rms distance of w to the target falls below kSolvedDistance (the noise's level), which does
// not stop the run (stop_on_success is off: the demo runs for its seconds).
//
// Contract:
// * run_demo() runs the demo through run_training() and returns what it measured. Bad options
//   throw UsageError naming the value before any process starts. A run directory is required
//   (DemoOptions::run_dir): `ringrl demo` gives a temporary one unless --run-dir names one.
// * A malformed record (wrong length, no values) throws std::runtime_error naming its actor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "learner/algorithm.h"
#include "learner/run_driver.h"

namespace ringrl::demo {

inline constexpr float kLearningRate = 0.05f;
inline constexpr std::uint32_t kPublishEvery = 256;  // records per learner version (a publication)
inline constexpr std::uint64_t kMaxLag = 4;           // versions; an older gradient is dropped
inline constexpr double kSolvedDistance = 0.05;      // rms distance of w to the target

struct DemoOptions : learner::RunSettings {
  std::uint32_t actors = 2;
  std::uint32_t record_bytes = 256;  // per record, header included
  std::uint32_t dim = 4096;          // floats in w
  /// Throws UsageError naming the first bad field.
  void validate() const;
};

struct DemoSummary {
  learner::DriverSummary driver;  // records (budget), seconds, lag, restarts, interrupted
  std::uint64_t bytes = 0;        // record bytes taken
  std::uint64_t versions = 0;     // learner versions (publications after the first)
  std::uint64_t stale = 0;        // records dropped: made more than kMaxLag versions ago
  double rms_distance = 0;        // of w to the target at the end
};

/// The demo's Algorithm (exposed for tests).
std::unique_ptr<learner::Algorithm> make_demo_algorithm(const DemoOptions& options);

/// Runs the demo (see the contract).
DemoSummary run_demo(const DemoOptions& options);

}  // namespace ringrl::demo
