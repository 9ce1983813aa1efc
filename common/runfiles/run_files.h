// The names of the files in a run directory and a tuning directory: the one place that spells
// them (the driver, the actors, the spread, tuning, the cluster jobs, the `checkpoint` command
// and, through the extension, Python's ringrl.runs).
#pragma once

#include <cstdint>
#include <string>

namespace ringrl::runfiles {

inline constexpr const char* kCheckpointFileName = "checkpoint.bin";  // the resumable state, replaced atomically
inline constexpr const char* kResolvedConfigName = "config.json";     // the resolved configuration
inline constexpr const char* kResultsFileName = "results.jsonl";      // one line per finished repetition
inline constexpr const char* kSolutionsFileName = "solutions.txt";    // brain_coder: programs that solved the task
inline constexpr const char* kMetricsFileName = "metrics.csv";        // the periodic metrics rows
inline constexpr const char* kEvalsFileName = "evals.csv";            // HIRO: one row per evaluation
inline constexpr const char* kEvalTrajectoryFileName = "eval_trajectory.csv";  // HIRO: the last evaluation episode
inline constexpr const char* kNodesFileName = "nodes.json";           // a cluster run's nodes
inline constexpr const char* kLogFileName = "train.log";              // a child run's stdout and stderr
inline constexpr const char* kTuneSessionFileName = "tune.json";      // a tuning directory's identity
inline constexpr const char* kTuningResultsFileName = "tuning_results.txt";
inline constexpr const char* kTuningSummaryFileName = "tuning_summary.txt";

/// The final model of repetition `rep`: prefix, rep, suffix ("model-rep3.ckpt").
inline constexpr const char* kFinalModelPrefix = "model-rep";
inline constexpr const char* kFinalModelSuffix = ".ckpt";
inline std::string final_model_file_name(std::uint32_t rep) {
  return kFinalModelPrefix + std::to_string(rep) + kFinalModelSuffix;
}

/// A new run directory's default name: timestamped_run_dir("pqt-reverse") is
/// "runs/pqt-reverse-YYYYmmdd-HHMMSS" in local time.
std::string timestamped_run_dir(const std::string& stem);

}  // namespace ringrl::runfiles
