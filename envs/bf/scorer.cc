#include "envs/bf/scorer.h"

#include <algorithm>
#include <string>

#include "common/errors.h"
#include "envs/bf/reward.h"

namespace ringrl::bf {
namespace {

constexpr double kGoodRewardFraction = 0.75;

RunOptions machine_options(const Task& task, const ScoreOptions& options) {
  RunOptions run;
  run.base = task.base;
  run.max_steps = options.max_execution_steps;
  run.require_correct_syntax = options.require_correct_syntax;
  run.timeout_s = options.timeout_s;
  run.exact_failure_state = false;  // failed runs are discarded
  return run;
}

ScoreReason from_failure(FailureReason reason) {
  switch (reason) {
    case FailureReason::kStepLimit:
      return ScoreReason::kStepLimit;
    case FailureReason::kSyntaxError:
      return ScoreReason::kSyntaxError;
    case FailureReason::kTimeout:
      return ScoreReason::kTimeout;
    case FailureReason::kSuccess:
      break;
  }
  return ScoreReason::kCorrect;
}

const ScoreOptions& validated(const ScoreOptions& options) {
  if (options.max_code_length < 0) {
    throw UsageError("bf: max_code_length must be >= 0, got " + std::to_string(options.max_code_length));
  }
  if (options.max_execution_steps < 1) {
    throw UsageError("bf: max_execution_steps must be >= 1, got " + std::to_string(options.max_execution_steps));
  }
  return options;
}

}  // namespace

std::string_view to_string(ScoreReason reason) noexcept {
  switch (reason) {
    case ScoreReason::kCorrect:
      return "correct";
    case ScoreReason::kWrong:
      return "wrong";
    case ScoreReason::kStepLimit:
      return "step-limit";
    case ScoreReason::kSyntaxError:
      return "syntax-error";
    case ScoreReason::kTimeout:
      return "timeout";
  }
  return "correct";
}

Variant parse_variant(std::string_view text) {
  if (text == "paper") return Variant::kPaper;
  if (text == "simplify") return Variant::kSimplify;
  throw UsageError("bf: unknown variant '" + std::string(text) + "' (expected paper|simplify)");
}

std::string_view to_string(Variant variant) noexcept { return variant == Variant::kSimplify ? "simplify" : "paper"; }

ScoreOptions ScoreOptions::for_variant(Variant variant) {
  ScoreOptions options;
  options.do_code_simplification = variant == Variant::kSimplify;
  return options;
}

Scorer::Scorer(Task task, const ScoreOptions& options)
    : task_(std::move(task)), options_(validated(options)), machine_(machine_options(task_, options_)) {
  // best = sum over cases of reward(target, target) + bonuses, summed in case order.
  for (const TestCase& c : task_.cases) {
    best_reward_ +=
        absolute_distance_reward(c.output.data(), c.output.size(), c.output.data(), c.output.size(), task_.base) +
        options_.correct_bonus + options_.code_length_bonus;
  }
  good_reward_ = kGoodRewardFraction * best_reward_;
  program_.compile("", task_.base);
}

ScoreResult Scorer::score(std::string_view code) {
  program_.compile(code, task_.base);
  const double length_factor = code_length_factor(code.size(), options_.min_code_length(), options_.max_code_length);
  double reward = 0.0;
  ScoreReason reason = ScoreReason::kCorrect;
  for (const TestCase& c : task_.cases) {
    const RunSummary run = machine_.run(program_, c.input.data(), c.input.size());
    if (!run.success) {
      reward = options_.failure_reward;
      reason = from_failure(run.reason);
      break;
    }
    const std::vector<std::int64_t>& out = machine_.output();
    reward += absolute_distance_reward(out.data(), out.size(), c.output.data(), c.output.size(), task_.base);
    if (out == c.output) {
      reward += options_.correct_bonus;
      reward += options_.code_length_bonus * length_factor;
    } else if (reason == ScoreReason::kCorrect) {
      reason = ScoreReason::kWrong;
    }
  }
  return ScoreResult{reward / best_reward_, reason == ScoreReason::kCorrect, reason};
}

Scorer make_task(std::string_view name, const ScoreOptions& options) { return Scorer(make_task_cases(name), options); }

Scorer make_task(std::string_view name, Variant variant) { return make_task(name, ScoreOptions::for_variant(variant)); }

std::vector<double> episode_rewards(std::size_t code_length, double total_reward) {
  std::vector<double> rewards(std::max<std::size_t>(code_length, 1), 0.0);
  rewards.back() = total_reward;
  return rewards;
}

}  // namespace ringrl::bf
