// The command-line options that every `ringrl train <algo>` on the run driver shares, and how
// they become config overrides.
//
// Contract:
// * add_train_run_options() declares, in this order: --actors, the budget option (--max-npe or
//   --max-env-steps), --max-seconds, --repetitions, --seed, --config, --set, --run-dir,
//   --resume. Numbers go through app/cli_numbers.h, so a bad value is one line and status 2.
// * train_overrides() returns `first` (the command's own keys, e.g. task=...), then one
//   key=value for each shared option that was given (actors, repetitions, the budget key,
//   seed, max_seconds), then every --set in order: later entries win.
// * resume_config() is, on --resume of a run directory that has one, the path of its resolved
//   config.json (the run's own settings, to which new overrides apply); else nothing, and the
//   run starts from --config (empty = the command's default file).
// * timestamped_run_dir("pqt-reverse") is "runs/pqt-reverse-YYYYmmdd-HHMMSS" in local time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ringrl::app {

inline constexpr std::uint32_t kMaxRepetitions = 100000;  // --repetitions upper bound
inline constexpr int kInterruptedStatus = 130;            // a run ended by SIGINT/SIGTERM

struct TrainRunCli {
  std::string config, run_dir;
  std::vector<std::string> sets;
  std::optional<std::uint32_t> actors, repetitions;
  std::optional<std::uint64_t> budget, seed;  // budget: --max-npe or --max-env-steps
  std::optional<double> max_seconds;
  bool resume = false;
};

/// What differs between the commands.
struct TrainRunOptionText {
  const char* budget_flag;      // "--max-npe"
  const char* budget_help;      // its help text
  const char* actors_help;      // "Actor processes"
  std::uint32_t max_actors;     // --actors upper bound
  const char* config_default;   // "configs/pqt.json"
  const char* run_dir_default;  // "runs/pqt-<task>-<mode>-<time>"
};

void add_train_run_options(CLI::App& cmd, TrainRunCli& c, const TrainRunOptionText& text);

std::vector<std::string> train_overrides(const TrainRunCli& c, const std::string& budget_key,
                                         std::vector<std::string> first);

std::optional<std::string> resume_config(const TrainRunCli& c, const std::string& run_dir);

std::string timestamped_run_dir(const std::string& stem);

}  // namespace ringrl::app
