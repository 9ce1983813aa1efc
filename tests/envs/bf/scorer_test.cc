// Tests of envs/bf/scorer.h: the §3.2 procedure with hand-computed rewards, the reference
// programs, and the scorer against a direct re-implementation on the plain engine.
#include "envs/bf/scorer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "common/errors.h"
#include "envs/bf/reward.h"
#include "tests/envs/bf/bf_test_util.h"

namespace ringrl::bf {
namespace {

using Cells = std::vector<std::int64_t>;

Task custom_task(std::int64_t base, std::vector<TestCase> cases) {
  Task t;
  t.name = "custom";
  t.base = base;
  t.cases = std::move(cases);
  return t;
}

TEST(BfScorer, PrintHelloWorkedExample) {
  Scorer paper = make_task("print-hello", Variant::kPaper);
  EXPECT_EQ(paper.best_reward(), 4.0);
  EXPECT_EQ(paper.good_reward(), 3.0);
  ScoreResult r = paper.score("++++++++.---.+++++++...");
  EXPECT_EQ(r.total_reward, ((135.0 - 3.0) / 135.0) / 4.0);
  EXPECT_NEAR(r.total_reward, 0.24444, 1e-5);
  EXPECT_EQ(r.reason, ScoreReason::kWrong);
  EXPECT_FALSE(r.correct);

  const std::string solution = "++++++++.---.+++++++..+++.";
  r = paper.score(solution);
  EXPECT_EQ(r.total_reward, 1.0);
  EXPECT_TRUE(r.correct);
  EXPECT_EQ(r.reason, ScoreReason::kCorrect);

  Scorer simplify = make_task("print-hello", Variant::kSimplify);
  r = simplify.score(solution);
  EXPECT_EQ(r.total_reward, (1.0 + 2.0 + 1.0 * (1.0 - 0.01 * 26.0)) / 4.0);
  EXPECT_NEAR(r.total_reward, 0.935, 1e-12);
  EXPECT_TRUE(r.correct);
}

TEST(BfScorer, FailureReplacesTheRewardAndStops) {
  Scorer hello = make_task("print-hello", Variant::kPaper);
  ScoreResult r = hello.score("+[]");
  EXPECT_EQ(r.total_reward, -0.5);
  EXPECT_EQ(r.reason, ScoreReason::kStepLimit);
  EXPECT_FALSE(r.correct);
  Scorer reverse = make_task("reverse", Variant::kPaper);
  EXPECT_EQ(reverse.score("+[]").total_reward, -0.03125);

  // The first case is exact, the second never ends: the whole program gets -2 / best.
  Scorer s(custom_task(256, {{{0}, {}}, {{1}, {}}}), ScoreOptions{});
  r = s.score(",[]");
  EXPECT_EQ(r.total_reward, -2.0 / 8.0);
  EXPECT_EQ(r.reason, ScoreReason::kStepLimit);
}

TEST(BfScorer, SyntaxCheckWhenRequired) {
  ScoreOptions o;
  o.require_correct_syntax = true;
  Scorer s = make_task("print-hello", o);
  const ScoreResult r = s.score("++++++++.---.+++++++..+++.]");
  EXPECT_EQ(r.reason, ScoreReason::kSyntaxError);
  EXPECT_EQ(r.total_reward, -0.5);
  Scorer lax = make_task("print-hello", Variant::kPaper);
  EXPECT_EQ(lax.score("++++++++.---.+++++++..+++.]").reason, ScoreReason::kCorrect);
}

TEST(BfScorer, RewardSumsCasesInOrder) {
  // Case 1 exact (+3 bonus), case 2 off by one, case 3 missing a value.
  Scorer s(custom_task(10, {{{2}, {2}}, {{5}, {4}}, {{7}, {7, 0}}}), ScoreOptions{});
  const ScoreResult r = s.score(",.");
  double want = 0.0;
  want += 1.0;
  want += 2.0;
  want += 1.0;
  want += (10.0 - 1.0) / 10.0;
  want += (20.0 - 10.0) / 20.0;
  EXPECT_EQ(r.total_reward, want / 12.0);
  EXPECT_EQ(r.reason, ScoreReason::kWrong);
}

TEST(BfScorer, LengthBonusInSimplificationMode) {
  ScoreOptions o = ScoreOptions::for_variant(Variant::kSimplify);
  Scorer s(custom_task(256, {{{}, {1}}}), o);
  const std::string code = "+." + std::string(48, 'x');  // 50 characters, correct
  EXPECT_EQ(s.score(code).total_reward, (1.0 + 2.0 + (1.0 - 0.01 * 50.0)) / 4.0);
  EXPECT_EQ(s.score("+." + std::string(198, 'x')).total_reward, 3.0 / 4.0);  // clipped at 0
  EXPECT_EQ(s.options().min_code_length(), 0);
  EXPECT_EQ(ScoreOptions{}.min_code_length(), 100);
}

TEST(BfScorer, EveryReferenceProgramIsCorrect) {
  const std::vector<std::pair<std::string, std::string>> solutions = {
      {"echo-twice", ">,.[>,.]<[<]>[.>]."},
      {"echo-thrice", ">,.[>,.]<[<]>[.>].<[<]>[.>]."},
      {"copy-reverse", ">,.[>,.]<[.<].>[.>]."},
      {"zero-cascade", ",[.>[->+>.<<]>+[-<+>]<<,]"},
      {"cascade", ",>>+<<[>>[-<+>]<[->+<<.>]>+<<,]."},
      {"shift-left", ",>,[.,]<.,."},
      {"shift-right", ">,[>,]<.[-]<[<]>[.>]."},
      {"riffle", ">,[>,]<[.[-]<[<]>.[-]>[>]<]"},
      {"unriffle", ">,[>,[.[-]],]<[.<]."},
      {"middle-char", ">,[>,]<<[[>]<[,<[<]>,>[>]][>]<<]>."},
      {"remove-last", ",>,[[<.[-]>[-<+>]],]."},
      {"remove-last-two", ",>,>,[[<<.[-]>[-<+>]>[-<+>]],]."},
      {"echo-alternating", ">,[.,>,]<<[<]>[.>]."},
      {"echo-half", ">>+>,[[<]>+[>],]<[<]>-[-[-<<+>]<[>]>]<<[->+<]>[[>]>.,<+[<]>-]."},
      {"length", ">+>,[[<]>+[>],]<[<]>-."},
      {"echo-second-seq", ",[,],[.,]."},
      {"echo-nth-seq", ",-[->,[,]<],[.,]."},
      {"substring", ">,<,>[->,<]>,<<[->>.,<<]"},
      {"divide-2", ",[-[->>+<]>[<]<]>>."},
      {"dedup", ">>,.[[-<+<+>>],[-<->]<[[-<->]<.>]<[->>+<<]>>]"},
      {"remove-target-char", ",>>>,[<<<[->+>+<<]>>[->->+<<]>[>[-<+>]<.[-]]>[-]<<<[-<+>]>>,]."},
      {"list-index", ",[->,<]>,."},
      // Hand-written solutions of some other tasks.
      {"reverse", ">,[>,]<[.<]."},
      {"print-hello", "++++++++.---.+++++++..+++."},
      {"print", "+.+.+.+.+."},
      {"add", ",>,[-<+>]<.>."},
      {"echo", ",[.,]."},
      {"reverse-tune", ">,[>,]<[.<]."},
  };
  for (const auto& [task, code] : solutions) {
    for (const Variant v : {Variant::kPaper, Variant::kSimplify}) {
      Scorer s = make_task(task, v);
      const ScoreResult r = s.score(code);
      EXPECT_TRUE(r.correct) << task << ": " << code;
      EXPECT_EQ(r.reason, ScoreReason::kCorrect) << task;
      // Every case adds 1 + correct_bonus + code_length_bonus * f, in case order.
      const double f = v == Variant::kPaper ? 1.0 : 1.0 - 0.01 * static_cast<double>(code.size());
      double sum = 0.0;
      for (std::size_t k = 0; k < s.num_cases(); ++k) {
        sum += 1.0;
        sum += 2.0;
        sum += 1.0 * f;
      }
      EXPECT_EQ(r.total_reward, sum / (4.0 * static_cast<double>(s.num_cases()))) << task;
    }
  }
}

// The §3.2 procedure written out directly on the plain engine with exact failure state.
ScoreResult reference_score(const Task& task, const ScoreOptions& o, std::string_view code) {
  RunOptions run;
  run.base = task.base;
  run.max_steps = o.max_execution_steps;
  run.require_correct_syntax = o.require_correct_syntax;
  run.engine = Engine::kPlain;
  double best = 0.0;
  for (const TestCase& c : task.cases) {
    best += absolute_distance_reward(c.output.data(), c.output.size(), c.output.data(), c.output.size(), task.base) +
            o.correct_bonus + o.code_length_bonus;
  }
  double reward = 0.0;
  ScoreReason reason = ScoreReason::kCorrect;
  for (const TestCase& c : task.cases) {
    const RunResult r = evaluate(code, c.input, run);
    if (!r.success) {
      reward = o.failure_reward;
      reason = r.reason == FailureReason::kStepLimit ? ScoreReason::kStepLimit : ScoreReason::kSyntaxError;
      break;
    }
    reward += absolute_distance_reward(r.output.data(), r.output.size(), c.output.data(), c.output.size(), task.base);
    if (r.output == c.output) {
      reward += o.correct_bonus;
      reward += o.code_length_bonus * code_length_factor(code.size(), o.min_code_length(), o.max_code_length);
    } else if (reason == ScoreReason::kCorrect) {
      reason = ScoreReason::kWrong;
    }
  }
  return ScoreResult{reward / best, reason == ScoreReason::kCorrect, reason};
}

TEST(BfScorer, MatchesTheProcedureOnRandomPrograms) {
  constexpr int kProgramsPerTask = 400;
  std::mt19937_64 rng(99);
  for (const std::string task_name : {"reverse", "count-char", "bool-logic", "print-hello", "cascade", "sort3"}) {
    for (const Variant v : {Variant::kPaper, Variant::kSimplify}) {
      Scorer s = make_task(task_name, v);
      for (int k = 0; k < kProgramsPerTask; ++k) {
        const std::size_t length = v == Variant::kPaper ? 100 : 1 + rng() % 100;
        const std::string code = testing::random_program(rng, length, "><+-[].,[]..");
        const ScoreResult got = s.score(code);
        const ScoreResult want = reference_score(s.task(), s.options(), code);
        ASSERT_EQ(got.total_reward, want.total_reward) << task_name << ": " << code;
        ASSERT_EQ(got.reason, want.reason) << task_name << ": " << code;
        ASSERT_EQ(got.correct, want.correct);
      }
    }
  }
}

TEST(BfScorer, RescoringGivesTheSameResult) {
  Scorer s = make_task("reverse", Variant::kPaper);
  std::mt19937_64 rng(5);
  for (int k = 0; k < 200; ++k) {
    const std::string code = testing::random_program(rng, 100);
    const ScoreResult a = s.score(code);
    const ScoreResult b = s.score(code);
    EXPECT_EQ(a.total_reward, b.total_reward);
    EXPECT_EQ(a.reason, b.reason);
  }
}

TEST(BfScorer, ValidatesNamesAndSettings) {
  EXPECT_THROW(make_task("no-such-task", Variant::kPaper), UsageError);
  EXPECT_THROW(parse_variant("fast"), UsageError);
  EXPECT_EQ(parse_variant("simplify"), Variant::kSimplify);
  EXPECT_EQ(to_string(Variant::kPaper), "paper");
  ScoreOptions bad;
  bad.max_execution_steps = 0;
  EXPECT_THROW(make_task("reverse", bad), UsageError);
  EXPECT_EQ(to_string(ScoreReason::kStepLimit), "step-limit");
}

TEST(BfScorer, EpisodeRewards) {
  EXPECT_EQ(episode_rewards(3, 0.5), (std::vector<double>{0.0, 0.0, 0.5}));
  EXPECT_EQ(episode_rewards(0, -0.5), std::vector<double>{-0.5});
}

}  // namespace
}  // namespace ringrl::bf
