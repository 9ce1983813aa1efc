// Differential test against scripts/bf_reference.py, a plain Python transcription of the
// original interpreter and scorer: random programs (with unmatched brackets and foreign
// characters) must give the same output, steps, failure reason, memory and reward.
// Skipped when python3 is not installed.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "envs/bf/machine.h"
#include "envs/bf/scorer.h"
#include "tests/envs/bf/bf_test_util.h"
#include "tests/envs/bf/cli_util.h"

namespace ringrl::bf {
namespace {

using nlohmann::json;

const std::string kScript = std::string(RINGRL_SOURCE_DIR) + "/scripts/bf_reference.py";

bool have_python() { return testing::run_command("python3 --version").status == 0; }

std::vector<json> reference(const std::string& mode, const std::string& input) {
  const testing::CommandResult r = testing::run_command("python3 " + testing::shell_quote(kScript) + " " + mode, input);
  EXPECT_EQ(r.status, 0) << r.err;
  std::vector<json> lines;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) lines.push_back(json::parse(line));
  return lines;
}

TEST(BfReference, RunsAgreeWithThePythonInterpreter) {
  if (!have_python()) GTEST_SKIP() << "python3 not found";
  constexpr int kPrograms = 500;
  const std::string_view alphabets[] = {testing::kOps, "><+-[].,_a", "+-<>[]]", "[[+-.,<>]"};
  const std::int64_t bases[] = {256, 27, 2, 20};
  const std::int64_t limits[] = {5000, 1, 10, 300};
  std::mt19937_64 rng(1801);
  std::string stream;
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> runs;
  std::vector<RunOptions> options;
  for (int k = 0; k < kPrograms; ++k) {
    RunOptions o;
    o.base = bases[rng() % std::size(bases)];
    o.max_steps = limits[rng() % std::size(limits)];
    o.require_correct_syntax = rng() % 5 == 0;
    const std::string code = testing::random_program(rng, rng() % 100, alphabets[rng() % std::size(alphabets)]);
    const std::vector<std::int64_t> input = testing::random_input(rng, 6, o.base);
    stream += json({{"code", code},
                    {"input", input},
                    {"base", o.base},
                    {"max_steps", *o.max_steps},
                    {"require_correct_syntax", o.require_correct_syntax}})
                  .dump() +
              "\n";
    runs.emplace_back(code, input);
    options.push_back(o);
  }
  // A terminating program without a step limit.
  stream += R"({"code":">,[>,]<[.[-]<[<]>.[-]>[>]<]","input":[3,1,4,1,5],"max_steps":null})";
  stream += "\n";
  RunOptions unlimited;
  unlimited.max_steps = std::nullopt;
  runs.emplace_back(">,[>,]<[.[-]<[<]>.[-]>[>]<]", std::vector<std::int64_t>{3, 1, 4, 1, 5});
  options.push_back(unlimited);

  const std::vector<json> want = reference("run", stream);
  ASSERT_EQ(want.size(), runs.size());
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const RunResult got = evaluate(runs[k].first, runs[k].second, options[k]);
    const std::string where = "program '" + runs[k].first + "'";
    EXPECT_EQ(json(got.output), want[k]["output"]) << where;
    EXPECT_EQ(got.success, want[k]["success"].get<bool>()) << where;
    EXPECT_EQ(to_string(got.reason), want[k]["failure_reason"].get<std::string>()) << where;
    EXPECT_EQ(got.steps, want[k]["steps"].get<std::int64_t>()) << where;
    EXPECT_EQ(json(got.memory), want[k]["memory"]) << where;
  }
}

void expect_scores_agree(const std::string& task_name, Variant variant, int programs, std::uint64_t seed) {
  Scorer scorer = make_task(task_name, variant);
  const Task& task = scorer.task();
  const ScoreOptions& o = scorer.options();
  json cases = json::array();
  for (const TestCase& c : task.cases) cases.push_back({c.input, c.output});
  const json header = {{"base", task.base},
                       {"max_steps", o.max_execution_steps},
                       {"min_code_length", o.min_code_length()},
                       {"max_code_length", o.max_code_length},
                       {"correct_bonus", o.correct_bonus},
                       {"code_length_bonus", o.code_length_bonus},
                       {"failure_reward", o.failure_reward},
                       {"require_correct_syntax", o.require_correct_syntax},
                       {"timeout", nullptr},
                       {"cases", cases}};
  std::mt19937_64 rng(seed);
  std::string stream = header.dump() + "\n";
  std::vector<std::string> codes;
  for (int k = 0; k < programs; ++k) {
    const std::size_t length = variant == Variant::kPaper ? 100 : 1 + rng() % 100;
    codes.push_back(testing::random_program(rng, length, k % 2 ? testing::kOps : "><+-[].,_"));
    stream += json(codes.back()).dump() + "\n";
  }
  const std::vector<json> want = reference("score", stream);
  ASSERT_EQ(want.size(), codes.size() + 1);  // + the timing line
  for (std::size_t k = 0; k < codes.size(); ++k) {
    const ScoreResult got = scorer.score(codes[k]);
    EXPECT_EQ(got.total_reward, want[k]["total_reward"].get<double>()) << codes[k];
    EXPECT_EQ(to_string(got.reason), want[k]["reason"].get<std::string>()) << codes[k];
    EXPECT_EQ(got.correct, want[k]["correct"].get<bool>()) << codes[k];
  }
}

TEST(BfReference, ScoresAgreeWithThePythonScorer) {
  if (!have_python()) GTEST_SKIP() << "python3 not found";
  expect_scores_agree("reverse", Variant::kPaper, 300, 1);
  expect_scores_agree("print-hello", Variant::kSimplify, 300, 2);
  expect_scores_agree("count-char", Variant::kPaper, 150, 3);
  expect_scores_agree("bool-logic", Variant::kSimplify, 150, 4);
}

}  // namespace
}  // namespace ringrl::bf
