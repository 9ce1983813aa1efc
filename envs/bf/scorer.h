// Scoring BF programs against a task (spec §3.2, §4.1): the reward the synthesis actors
// optimise and the "solved" flag.
//
// What it is: `Scorer` owns one task's cases, its settings and a reusable machine and
// program; score(code) runs the cases in order (stopping at the first failed run) and
// returns the terminal reward r = R / best_reward. After construction score() allocates
// nothing (buffers grow to the largest program seen and stay).
//
// Who may call what: a Scorer belongs to one thread (it mutates its machine); make one per
// actor thread. Construction validates everything (UsageError on bad names or settings);
// score() never throws.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "envs/bf/machine.h"
#include "envs/bf/tasks.h"

namespace ringrl::bf {

/// Outcome of scoring one program: "correct" iff every case printed exactly its target.
enum class ScoreReason : std::uint8_t { kCorrect, kWrong, kStepLimit, kSyntaxError, kTimeout };

/// "correct", "wrong", "step-limit", "syntax-error" or "timeout".
std::string_view to_string(ScoreReason reason) noexcept;

/// The two evaluation settings the paper uses.
enum class Variant : std::uint8_t {
  kPaper,     // fixed length T = 100, length bonus always full
  kSimplify,  // do_code_simplification: min length 0, bonus shrinks with length
};

/// "paper" or "simplify"; throws UsageError otherwise.
Variant parse_variant(std::string_view text);
std::string_view to_string(Variant variant) noexcept;

/// Scoring settings; the defaults are the paper's evaluation settings (spec §4.1, §6.2).
struct ScoreOptions {
  std::int64_t max_code_length = 100;   // timestep_limit T
  bool require_correct_syntax = false;  // env.correct_syntax
  bool do_code_simplification = false;  // true: min_code_length = 0
  double correct_bonus = 2.0;
  double code_length_bonus = 1.0;
  double failure_reward = -2.0;  // replaces R when a case fails to run
  std::int64_t max_execution_steps = 5000;
  double timeout_s = 0.0;  // per case; the original uses 0.1 s, <= 0 disables (deterministic)

  /// max_code_length, or 0 with code simplification.
  std::int64_t min_code_length() const noexcept { return do_code_simplification ? 0 : max_code_length; }
  static ScoreOptions for_variant(Variant variant);
};

/// Result of Scorer::score.
struct ScoreResult {
  double total_reward = 0.0;  // terminal reward r = R / best_reward
  bool correct = false;       // reason == kCorrect
  ScoreReason reason = ScoreReason::kCorrect;
};

/// Scores programs for one task. One per thread.
class Scorer {
 public:
  /// Throws UsageError for invalid options (max_code_length < 0, max_execution_steps < 1).
  Scorer(Task task, const ScoreOptions& options);

  /// Scores `code` (every character counts, spec §2).
  ScoreResult score(std::string_view code);

  const Task& task() const noexcept { return task_; }
  const ScoreOptions& options() const noexcept { return options_; }
  std::size_t num_cases() const noexcept { return task_.cases.size(); }
  /// Sum over cases of (1 + correct_bonus + code_length_bonus): 4n with default bonuses.
  double best_reward() const noexcept { return best_reward_; }
  /// 0.75 * best_reward (passed along by the original, not used for training).
  double good_reward() const noexcept { return good_reward_; }

 private:
  Task task_;
  ScoreOptions options_;
  double best_reward_ = 0.0;
  double good_reward_ = 0.0;
  Program program_;
  Machine machine_;
};

/// The original's make_task: looks `name` up (UsageError listing the closest names when
/// unknown) and wraps its cases in a Scorer.
Scorer make_task(std::string_view name, const ScoreOptions& options = ScoreOptions{});
Scorer make_task(std::string_view name, Variant variant);

/// Per-step rewards of an episode: 0.0 for all but the last of `code_length` steps, which
/// carries `total_reward` (one entry for the empty program).
std::vector<double> episode_rewards(std::size_t code_length, double total_reward);

}  // namespace ringrl::bf
