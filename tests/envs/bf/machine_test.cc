// Tests of envs/bf/machine.h: every rule of spec §1, and the fast engine against the plain
// reference interpreter (outputs, memory, failure reasons and step counts).
#include "envs/bf/machine.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "common/errors.h"
#include "tests/envs/bf/bf_test_util.h"

namespace ringrl::bf {
namespace {

using Cells = std::vector<std::int64_t>;
using testing::expect_engines_agree;

RunOptions with(std::int64_t base, std::optional<std::int64_t> max_steps = kDefaultMaxSteps, bool syntax = false) {
  RunOptions o;
  o.base = base;
  o.max_steps = max_steps;
  o.require_correct_syntax = syntax;
  return o;
}

// Runs on both engines and checks they agree before returning the result.
RunResult run(std::string_view code, const Cells& input = {}, const RunOptions& o = {}) {
  expect_engines_agree(code, input, o);
  return evaluate(code, input, o);
}

TEST(BfMachine, EmptyProgramSucceedsWithZeroSteps) {
  const RunResult r = run("");
  EXPECT_TRUE(r.success);
  EXPECT_EQ(r.reason, FailureReason::kSuccess);
  EXPECT_EQ(r.steps, 0);
  EXPECT_EQ(r.output, Cells{});
  EXPECT_EQ(r.memory, Cells{0});
}

TEST(BfMachine, CellsWrapOnlyAtTheBaseBoundaries) {
  EXPECT_EQ(run("-.").output, Cells{255});
  EXPECT_EQ(run("-+.").output, Cells{0});
  EXPECT_EQ(run("-.", {}, with(27)).output, Cells{26});
  EXPECT_EQ(run("+++.", {}, with(2)).output, Cells{1});
  EXPECT_EQ(run("+.-.-.", {}, with(1)).output, (Cells{0, 0, 0}));
  // 300 "+" in base 256 ends at 44.
  EXPECT_EQ(run(std::string(300, '+') + ".").output, Cells{44});
}

TEST(BfMachine, InputsAreStoredVerbatim) {
  // Values outside [0, base) are kept as they are; '+' takes v >= base-1 to 0, '-' takes
  // v > 0 to v-1 and v <= 0 to base-1.
  EXPECT_EQ(run(",.", {300}).output, Cells{300});
  EXPECT_EQ(run(",+.", {300}).output, Cells{0});
  EXPECT_EQ(run(",-.", {300}).output, Cells{299});
  EXPECT_EQ(run(",+.", {-5}).output, Cells{-4});
  EXPECT_EQ(run(",-.", {-5}).output, Cells{255});
  EXPECT_EQ(run(",[-].", {3}, with(2)).output, Cells{0});
  EXPECT_EQ(run(",+.", {1}, with(2)).output, Cells{0});
}

TEST(BfMachine, EofReadsZeroEveryTime) {
  EXPECT_EQ(run(",.,.,.", {7}).output, (Cells{7, 0, 0}));
  EXPECT_EQ(run("+,.").output, Cells{0});
  EXPECT_EQ(run(",.,.,.", {0, 9}).output, (Cells{0, 9, 0}));
}

TEST(BfMachine, TapeGrowsRightOnDemandAndClampsAtTheLeftEdge) {
  EXPECT_EQ(run(">>>").memory, (Cells{0, 0, 0, 0}));
  EXPECT_EQ(run(">><<").memory, (Cells{0, 0, 0}));
  EXPECT_EQ(run("<<<").memory, Cells{0});
  EXPECT_EQ(run("<+").memory, Cells{1});
  EXPECT_EQ(run("<<+>+").memory, (Cells{1, 1}));
  EXPECT_EQ(run(">+<<<<+").memory, (Cells{1, 1}));
}

TEST(BfMachine, NonBfCharactersAreNoOpsThatCostAStep) {
  const RunResult r = run("a+b_ \n");
  EXPECT_TRUE(r.success);
  EXPECT_EQ(r.steps, 6);
  EXPECT_EQ(r.memory, Cells{1});
}

TEST(BfMachine, JumpsLandOnTheMatchingBracketThenStepPastIt) {
  EXPECT_EQ(run("[+]").steps, 1);    // '[' on 0 jumps to ']', then past it
  EXPECT_EQ(run("++[-]").steps, 7);  // 2 + '[' + 2 * "-]"
  EXPECT_EQ(run("+[-]").memory, Cells{0});
  EXPECT_EQ(run("++[>+++<-]>.").output, Cells{6});
  EXPECT_EQ(run("++[>+++<-]>.").steps, 19);
}

TEST(BfMachine, UnmatchedBracketsFailTheSyntaxCheck) {
  for (const std::string_view code : {"[", "]", "][", "[[]", "[]]", "+[.]]["}) {
    const RunResult r = run(code, {1}, with(kDefaultBase, kDefaultMaxSteps, true));
    EXPECT_FALSE(r.success) << code;
    EXPECT_EQ(r.reason, FailureReason::kSyntaxError) << code;
    EXPECT_EQ(r.steps, 0) << code;
    EXPECT_EQ(r.output, Cells{}) << code;
    EXPECT_EQ(r.memory, Cells{}) << code;  // [], not [0]
  }
  EXPECT_TRUE(run("+[-[+]]", {}, with(kDefaultBase, kDefaultMaxSteps, true)).success);
}

TEST(BfMachine, UnmatchedBracketsAreOneStepNoOpsWithoutTheCheck) {
  EXPECT_EQ(run("]+").steps, 2);
  EXPECT_EQ(run("]+").memory, Cells{1});
  EXPECT_EQ(run("+[").steps, 2);
  EXPECT_EQ(run("+[").memory, Cells{1});
  EXPECT_EQ(run("+[-]]").steps, 5);
  const RunResult r = run("[[+]");  // the first '[' is unmatched, the pair skips
  EXPECT_EQ(r.steps, 2);
  EXPECT_EQ(r.memory, Cells{0});
  EXPECT_EQ(run("+]]].").output, Cells{1});
}

TEST(BfMachine, StepLimitIsCheckedAfterEachInstruction) {
  RunResult r = run(">>", {}, with(kDefaultBase, 2));
  EXPECT_FALSE(r.success);
  EXPECT_EQ(r.reason, FailureReason::kStepLimit);
  EXPECT_EQ(r.steps, 2);
  r = run(">>", {}, with(kDefaultBase, 3));
  EXPECT_TRUE(r.success);
  EXPECT_EQ(r.steps, 2);
  r = run("+[]", {}, with(kDefaultBase, 5000));
  EXPECT_EQ(r.reason, FailureReason::kStepLimit);
  EXPECT_EQ(r.steps, 5000);
}

TEST(BfMachine, FailedRunsKeepTheirPartialOutput) {
  const RunResult r = run("+[.]", {}, with(kDefaultBase, 10));
  EXPECT_EQ(r.reason, FailureReason::kStepLimit);
  EXPECT_EQ(r.output, (Cells{1, 1, 1, 1}));
}

TEST(BfMachine, LimitsBelowOneStopAfterTheFirstInstruction) {
  for (const std::int64_t limit : {0, -3}) {
    const RunResult r = run("++", {}, with(kDefaultBase, limit));
    EXPECT_EQ(r.reason, FailureReason::kStepLimit);
    EXPECT_EQ(r.steps, 1);
    EXPECT_TRUE(run("", {}, with(kDefaultBase, limit)).success);
  }
}

TEST(BfMachine, NoStepLimit) {
  const std::string code = "++++++++[>++++++++[>++++<-]<-]>>.";
  const RunResult r = run(code, {}, with(kDefaultBase, std::nullopt));
  EXPECT_TRUE(r.success);
  EXPECT_EQ(r.output, Cells{0});  // 8 * 8 * 4 = 256
  EXPECT_EQ(r.steps, evaluate(code, {}, testing::plain(with(kDefaultBase, 1000000))).steps);
}

TEST(BfMachine, WallClockTimeout) {
  for (const Engine engine : {Engine::kFast, Engine::kPlain}) {
    RunOptions o = with(kDefaultBase, std::nullopt);
    o.timeout_s = 0.02;
    o.engine = engine;
    const RunResult r = evaluate("+[>+<]", {}, o);
    EXPECT_FALSE(r.success);
    EXPECT_EQ(r.reason, FailureReason::kTimeout);
    EXPECT_GT(r.steps, 0);
  }
}

TEST(BfMachine, InitialMemoryReplacesTheTape) {
  const RunResult r = evaluate("[-.]>.", {}, {}, Cells{3, 9});
  EXPECT_EQ(r.output, (Cells{2, 1, 0, 9}));
  EXPECT_EQ(r.memory, (Cells{0, 9}));
}

TEST(BfMachine, BaseMustBePositive) {
  EXPECT_THROW(Machine(with(0)), UsageError);
  EXPECT_THROW(Program("+", 0), UsageError);
  Machine m(with(27));
  const Program p("+", kDefaultBase);
  EXPECT_THROW(m.run(p, nullptr, 0), UsageError);
}

TEST(BfMachine, ProgramRecordsSyntax) {
  EXPECT_TRUE(Program("+[>[-]<]", kDefaultBase).syntax_ok());
  EXPECT_TRUE(Program("", kDefaultBase).syntax_ok());
  for (const std::string_view code : {"[", "]", "][", "[[]", "[]]", "[[[]]"}) {
    EXPECT_FALSE(Program(code, kDefaultBase).syntax_ok()) << code;
  }
  Program reused("[", kDefaultBase);
  reused.compile("[]", kDefaultBase);
  EXPECT_TRUE(reused.syntax_ok());
  EXPECT_NE(Program("+", kDefaultBase).id(), Program("+", kDefaultBase).id());
}

TEST(BfMachine, ReusedMachineStartsEveryRunFresh) {
  Machine m;
  m.run(">>>+++.,", {5});
  const RunSummary r = m.run(".", {});
  EXPECT_TRUE(r.success);
  EXPECT_EQ(m.output(), Cells{0});
  EXPECT_EQ(m.memory(), Cells{0});
}

// Each fast path, with the step limit swept over every value up to past the natural end,
// so the limit falls on every instruction of it at least once.
TEST(BfMachine, FastPathsStopOnExactlyTheLimitStep) {
  const std::vector<std::pair<std::string, Cells>> programs = {
      {"+++++[>++<-]>.", {}},       // closed-form loop
      {"++>+++[<[-]>-]<.", {}},     // nested closed forms
      {"+>+>+>+<<<[>]>.", {}},      // scan right
      {"+>+>+>+[<]>.", {}},         // scan left
      {"+<<[<<+>]>.", {}},          // clamped, pointer returns: closed form
      {"+[<+].", {}},               // clamped at cell 0
      {"+[>+]", {}},                // marches right forever
      {"+[.+]", {}},                // flat loop with output
      {",[.,]", {4, 3, 2, 1}},      // flat loop with input
      {"+[,+]", {1, 2}},            // input exhausted, then loops forever
      {"+[>+<-+]", {}},             // never ends: pointer-neutral, cell unchanged
      {"+[[>+<-]>]", {}},           // nested loops, marching
      {"+[<]", {}},                 // clamps and repeats the state forever
      {"++[>++[>++<-]<-]>>.", {}},  // nested loops, finite
      {"-[>-[-.]<-]", {}},          // long nested loops with output
      {"+[>,.<]", {9, 8}},          // state repeats after EOF
      {"+[>[]-]", {}},              // repeats shifted right, nested loop
      {"+[>[-]+.]", {}},            // the same, with output
      {"+++[-.]", {}},              // output progression
      {"+[>+.<-.]", {}},            // output at two offsets
      {"+[<.+]", {}},               // clamped, neutral, with output
      {",[.-]", {200}},             // long output progression
      {"-[>+<-.]>.", {}},           // long closed form with output
  };
  for (const auto& [code, input] : programs) {
    const std::int64_t natural = evaluate(code, input, testing::plain(with(kDefaultBase, 3000))).steps;
    for (std::int64_t limit = 1; limit <= natural + 2; ++limit) {
      expect_engines_agree(code, input, with(kDefaultBase, limit));
      if (::testing::Test::HasFatalFailure()) return;
    }
    for (const std::int64_t base : {2, 3, 20, 27}) {
      expect_engines_agree(code, input, with(base, 777));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(BfMachine, FastMatchesPlainOnRandomPrograms) {
  constexpr int kPrograms = 20000;
  const std::string_view alphabets[] = {testing::kOps, "><+-[].,_x", "+-<>[]", "><+-[[]]..,"};
  const std::int64_t bases[] = {256, 2, 3, 27, 20, 1};
  const std::int64_t limits[] = {5000, 1, 2, 17, 100, 1000, 20000};
  std::mt19937_64 rng(20180123);
  for (int k = 0; k < kPrograms; ++k) {
    const std::string code = testing::random_program(rng, rng() % 110, alphabets[rng() % std::size(alphabets)]);
    const RunOptions o = with(bases[rng() % std::size(bases)], limits[rng() % std::size(limits)]);
    expect_engines_agree(code, testing::random_input(rng, 7, o.base), o);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(BfMachine, ReusedMachineMatchesPlainOnRandomPrograms) {
  // One machine for all runs, each program run twice: the second run starts on the cached
  // op stream when the first ran long.
  constexpr int kPrograms = 3000;
  RunOptions o = with(kDefaultBase, 5000);
  Machine fast(o);
  Machine plain(testing::plain(o));
  std::mt19937_64 rng(7);
  for (int k = 0; k < kPrograms; ++k) {
    const Program p(testing::random_program(rng, 100), kDefaultBase);
    const Cells input = testing::random_input(rng, 6, 256);
    for (int rep = 0; rep < 2; ++rep) {
      const RunSummary want = plain.run(p, input.data(), input.size());
      const RunSummary got = fast.run(p, input.data(), input.size());
      ASSERT_EQ(got.steps, want.steps) << p.code();
      ASSERT_EQ(got.reason, want.reason) << p.code();
      ASSERT_EQ(fast.output(), plain.output()) << p.code();
      ASSERT_EQ(fast.memory(), plain.memory()) << p.code();
    }
  }
}

}  // namespace
}  // namespace ringrl::bf
