// `ringrl bench bf`: throughput of the BF scorer and interpreter on one core.
//
// What it measures: (1) programs scored per second for uniformly random programs over the
// 8 ops on a task with the paper's settings (most hit the 5000-step limit); (2) BF
// instructions per second on long-running programs (the known-code reference programs on
// long inputs, no step limit, exact state), for the fast and the plain engine; optionally
// (3) the same random programs through scripts/bf_reference.py, a plain Python transcription
// of the original scorer, for the speed-up ratio and a reward cross-check; (4) with a
// `cli` path, the same programs as a `CLI bf score --jsonl` stream: a child process started,
// fed every program as one JSON line and read to its last answer, timed in wall seconds from
// the start to the exit (start-up, parsing and formatting included), against (1).
//
// Runs on the calling thread only. Never part of ctest.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ringrl::bench {

struct BfBenchOptions {
  std::string task = "reverse";
  std::size_t programs = 200000;         // random programs scored by the C++ scorer
  std::size_t program_length = 100;      // tokens per program (the paper's T)
  std::uint64_t seed = 2018;             // program generator seed
  bool baseline = false;                 // also time the Python reference scorer
  std::size_t baseline_programs = 1000;  // programs given to the Python reference
  std::string python = "python3";
  std::string reference_script;  // empty: scripts/bf_reference.py of this source tree
  std::string cli;               // the `ringrl` executable for (4); empty: not measured
};

struct BfBenchReport {
  double programs_per_s = 0;            // C++ scorer, all `programs`
  double step_limited_fraction = 0;     // share of programs that failed on the step limit
  double instructions_per_s = 0;        // fast engine, long-running programs
  double plain_instructions_per_s = 0;  // plain engine, same programs
  std::int64_t instructions = 0;        // BF steps in one pass over the long-running set
  // Only with `cli`:
  std::optional<double> cli_programs_per_s;      // `ringrl bf score --jsonl`, wall time
  std::optional<double> cli_cpu_programs_per_s;  // the same, the child's CPU time
  // Only with `baseline`:
  std::optional<double> baseline_programs_per_s;   // Python reference, first N programs
  std::optional<double> subset_programs_per_s;     // C++ scorer, the same N programs
  std::optional<double> speedup;                   // subset / baseline
  std::optional<std::size_t> baseline_mismatches;  // programs whose reward/reason differ
};

/// Runs the benchmark. Throws UsageError for a bad task name, std::runtime_error when the
/// Python reference cannot be run.
BfBenchReport run_bf_bench(const BfBenchOptions& options);

}  // namespace ringrl::bench
