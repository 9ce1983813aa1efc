// Tests of `ringrl bf run|score|cases|tasks` (app/bf_cmd.cc).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "envs/bf/scorer.h"
#include "tests/envs/bf/bf_test_util.h"
#include "tests/envs/bf/cli_util.h"

namespace ringrl::bf {
namespace {

using nlohmann::json;
using testing::run_ringrl;
using testing::shell_quote;

std::vector<json> json_lines(const std::string& text) {
  std::vector<json> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(json::parse(line));
  return lines;
}

TEST(BfCli, RunPrintsOneJsonObject) {
  const auto r = run_ringrl("bf run " + shell_quote("++[>+++<-]>."));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "{\"output\":[6],\"success\":true,\"failure_reason\":\"success\",\"steps\":19,"
            "\"memory\":[0,6]}\n");
}

TEST(BfCli, RunOptions) {
  json j = json::parse(run_ringrl("bf run " + shell_quote(",[.,]") + " --input 3,4,5").out);
  EXPECT_EQ(j["output"], json::array({3, 4, 5}));
  j = json::parse(run_ringrl("bf run " + shell_quote("-.") + " --base 27").out);
  EXPECT_EQ(j["output"], json::array({26}));
  j = json::parse(run_ringrl("bf run " + shell_quote("+[]") + " --max-steps 7").out);
  EXPECT_EQ(j["failure_reason"], "step-limit");
  EXPECT_EQ(j["steps"], 7);
  EXPECT_FALSE(j["success"].get<bool>());
  j = json::parse(run_ringrl("bf run " + shell_quote("++[>++<-]") + " --max-steps none").out);
  EXPECT_TRUE(j["success"].get<bool>());
  j = json::parse(run_ringrl("bf run " + shell_quote("+]") + " --require-correct-syntax").out);
  EXPECT_EQ(j["failure_reason"], "syntax-error");
  EXPECT_EQ(j["memory"], json::array());
  EXPECT_EQ(run_ringrl("bf run " + shell_quote("+") + " --input 1,x").status, 2);
  // A program that looks like an option, with and without "--".
  EXPECT_EQ(json::parse(run_ringrl("bf run -- " + shell_quote("-.")).out)["output"], json::array({255}));
  EXPECT_EQ(json::parse(run_ringrl("bf run " + shell_quote("->+.") + " --input 1").out)["output"], json::array({1}));
  EXPECT_EQ(run_ringrl("bf run " + shell_quote("+") + " --no-such-option").status, 2);
  EXPECT_EQ(run_ringrl("bf run").status, 2);
}

TEST(BfCli, RunReadsAProgramFile) {
  const std::string path = testing::temp_path("code");
  {
    std::ofstream file(path);
    file << "+++.\n";  // the file's trailing newline is not part of the program
  }
  const json j = json::parse(run_ringrl("bf run @" + path).out);
  std::remove(path.c_str());
  EXPECT_EQ(j["output"], json::array({3}));
  EXPECT_EQ(j["steps"], 4);
  EXPECT_EQ(run_ringrl("bf run @/nonexistent/program").status, 2);
}

TEST(BfCli, RunJsonlDefaultsAndErrors) {
  const std::string input =
      "{\"code\":\"-.\"}\n"
      "not json\n"
      "{\"code\":\"-.\",\"base\":27,\"input\":[],\"max_steps\":null}\n"
      "{\"input\":[1]}\n"
      "{\"code\":\"+[]\"}\n"
      "{\"code\":\",.\",\"input\":\"1\"}\n"
      "{\"code\":\"+]\",\"require_correct_syntax\":true}\n";
  const auto r = run_ringrl("bf run --jsonl", input);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<json> out = json_lines(r.out);
  ASSERT_EQ(out.size(), 7U);
  EXPECT_EQ(out[0]["output"], json::array({255}));
  EXPECT_EQ(out[1]["error"].get<std::string>().rfind("line 2: ", 0), 0U) << out[1];
  EXPECT_EQ(out[2]["output"], json::array({26}));
  EXPECT_EQ(out[3]["error"].get<std::string>().rfind("line 4: ", 0), 0U) << out[3];
  EXPECT_EQ(out[4]["steps"], 5000);  // default limit
  EXPECT_EQ(out[4]["failure_reason"], "step-limit");
  EXPECT_TRUE(out[5].contains("error"));
  EXPECT_EQ(out[6]["failure_reason"], "syntax-error");
}

TEST(BfCli, JsonlAgreesWithSingleRuns) {
  constexpr int kPrograms = 30;
  std::mt19937_64 rng(11);
  std::string stream;
  std::vector<std::string> singles;
  for (int k = 0; k < kPrograms; ++k) {
    const std::string code = testing::random_program(rng, 1 + rng() % 60, "><+-[].,x");
    const std::vector<std::int64_t> input = testing::random_input(rng, 4, 27);
    const std::int64_t base = k % 2 == 0 ? 256 : 27;
    const std::int64_t max_steps = k % 3 == 0 ? 100 : 5000;
    json req = {{"code", code}, {"input", input}, {"base", base}, {"max_steps", max_steps}};
    stream += req.dump() + "\n";
    std::string input_arg;
    for (std::size_t i = 0; i < input.size(); ++i) {
      input_arg += (i ? "," : "") + std::to_string(input[i]);
    }
    // Options first, then "--": a program may look like an option ("-x").
    singles.push_back("bf run --input " + shell_quote(input_arg) + " --base " + std::to_string(base) + " --max-steps " +
                      std::to_string(max_steps) + " -- " + shell_quote(code));
  }
  const std::vector<json> batch = json_lines(run_ringrl("bf run --jsonl", stream).out);
  ASSERT_EQ(batch.size(), static_cast<std::size_t>(kPrograms));
  for (int k = 0; k < kPrograms; ++k) {
    EXPECT_EQ(json::parse(run_ringrl(singles[k]).out), batch[k]) << singles[k];
  }
}

TEST(BfCli, Score) {
  json j = json::parse(run_ringrl("bf score --task print-hello " + shell_quote("++++++++.---.+++++++..+++.")).out);
  EXPECT_EQ(j, (json{{"total_reward", 1.0}, {"correct", true}, {"reason", "correct"}}));
  j = json::parse(
      run_ringrl("bf score --task print-hello --variant simplify " + shell_quote("++++++++.---.+++++++..+++.")).out);
  EXPECT_EQ(j["total_reward"].get<double>(), (3.0 + (1.0 - 0.01 * 26.0)) / 4.0);
  j = json::parse(run_ringrl("bf score --task reverse " + shell_quote("+[]")).out);
  EXPECT_EQ(j, (json{{"total_reward", -0.03125}, {"correct", false}, {"reason", "step-limit"}}));
}

TEST(BfCli, ScoreJsonl) {
  const std::string input =
      "{\"task\":\"print-hello\",\"code\":\"++++++++.---.+++++++...\"}\n"
      "{\"task\":\"revers\",\"code\":\"+\"}\n"
      "{\"task\":\"print-hello\",\"variant\":\"simplify\",\"code\":\"++++++++.---.+++++++..+++.\"}"
      "\n"
      "{\"task\":\"reverse\",\"variant\":\"other\",\"code\":\"+\"}\n";
  const auto r = run_ringrl("bf score --jsonl", input);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<json> out = json_lines(r.out);
  ASSERT_EQ(out.size(), 4U);
  EXPECT_EQ(out[0]["total_reward"].get<double>(), ((135.0 - 3.0) / 135.0) / 4.0);
  EXPECT_EQ(out[0]["reason"], "wrong");
  const std::string error = out[1]["error"].get<std::string>();
  EXPECT_EQ(error.rfind("line 2: ", 0), 0U) << error;
  EXPECT_NE(error.find("reverse"), std::string::npos) << error;  // closest names
  EXPECT_EQ(out[2]["total_reward"].get<double>(), (3.0 + (1.0 - 0.01 * 26.0)) / 4.0);
  EXPECT_TRUE(out[3].contains("error"));
}

TEST(BfCli, ScoreJsonlAgreesWithTheLibrary) {
  std::mt19937_64 rng(3);
  Scorer scorer = make_task("count-char", Variant::kPaper);
  std::string stream;
  std::vector<ScoreResult> want;
  for (int k = 0; k < 200; ++k) {
    const std::string code = testing::random_program(rng, 100);
    stream += json({{"task", "count-char"}, {"code", code}}).dump() + "\n";
    want.push_back(scorer.score(code));
  }
  const std::vector<json> out = json_lines(run_ringrl("bf score --jsonl", stream).out);
  ASSERT_EQ(out.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(out[k]["total_reward"].get<double>(), want[k].total_reward);
    EXPECT_EQ(out[k]["reason"].get<std::string>(), to_string(want[k].reason));
  }
}

TEST(BfCli, Cases) {
  const json j = json::parse(run_ringrl("bf cases --task add").out);
  EXPECT_EQ(j, json::parse("[[[4,0],[4,0]],[[0,5],[5,0]],[[1,2],[3,0]],[[67,21],[88,0]],"
                           "[[55,56],[111,0]],[[128,33],[161,0]],[[221,251],[216,0]],"
                           "[[130,127],[1,0]],[[255,1],[0,0]]]"));
  const json reverse = json::parse(run_ringrl("bf cases --task reverse --variant simplify").out);
  ASSERT_EQ(reverse.size(), 16U);
  EXPECT_EQ(reverse[0], json::parse("[[50,175,243,103,40],[40,103,243,175,50,0]]"));
}

TEST(BfCli, TasksListsAll) {
  const auto r = run_ringrl("bf tasks");
  ASSERT_EQ(r.status, 0);
  std::istringstream in(r.out);
  std::string line;
  int count = 0;
  while (std::getline(in, line)) {
    ++count;
    EXPECT_NE(line.find("base"), std::string::npos) << line;
  }
  EXPECT_EQ(count, 42);
  const std::vector<json> rows = json_lines(run_ringrl("bf tasks --json").out);
  ASSERT_EQ(rows.size(), 42U);
  EXPECT_EQ(rows[0]["name"], "reverse");
  EXPECT_EQ(rows[2]["base"], 27);
  EXPECT_EQ(rows[2]["cases"], 16);
}

TEST(BfCli, UnknownTaskIsAUsageError) {
  const auto r = run_ringrl("bf cases --task revers");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("ringrl: error: bf: unknown task 'revers'; closest: reverse"), std::string::npos) << r.err;
  EXPECT_EQ(run_ringrl("bf score --task nope +").status, 2);
  EXPECT_EQ(run_ringrl("bf score --task reverse --variant odd +").status, 2);
}

}  // namespace
}  // namespace ringrl::bf
