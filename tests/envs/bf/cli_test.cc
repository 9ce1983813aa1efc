// Tests of `ringrl bf run|score|cases|tasks` (app/bf_cmd.cc).
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

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

// Every answer line is, byte for byte, the JSON object `bf score` prints for one program;
// the last request may lack its newline.
TEST(BfCli, ScoreJsonlLinesAreTheScoreObjects) {
  std::mt19937_64 rng(5);
  std::string stream;
  std::vector<std::string> want;
  const char* const tasks[] = {"print-hello", "reverse", "add", "count-char"};
  for (int k = 0; k < 300; ++k) {
    const std::string task = tasks[k % 4];
    const Variant variant = k % 3 == 0 ? Variant::kSimplify : Variant::kPaper;
    // Short programs over a print-heavy alphabet: varied rewards, some correct ones.
    std::string code = testing::random_program(rng, 1 + rng() % 40, "+++...-<>[]");
    if (k % 50 == 0) code = "++++++++.---.+++++++..+++.";
    json req = {{"task", task}, {"code", code}};
    if (variant == Variant::kSimplify) req["variant"] = "simplify";
    stream += req.dump() + "\n";
    const ScoreResult r = make_task(task, variant).score(code);
    nlohmann::ordered_json line;
    line["total_reward"] = r.total_reward;
    line["correct"] = r.correct;
    line["reason"] = std::string(to_string(r.reason));
    want.push_back(line.dump());
  }
  stream.pop_back();  // no newline after the last request
  const auto r = run_ringrl("bf score --jsonl", stream);
  ASSERT_EQ(r.status, 0) << r.err;
  std::istringstream out(r.out);
  std::string line;
  std::size_t k = 0;
  bool some_correct = false;
  for (; std::getline(out, line); ++k) {
    ASSERT_LT(k, want.size());
    EXPECT_EQ(line, want[k]) << "line " << k + 1;
    some_correct = some_correct || line.find("\"correct\":true") != std::string::npos;
  }
  EXPECT_EQ(k, want.size());
  EXPECT_TRUE(some_correct);
}

// Requests the fast reader leaves to the full JSON parser (escapes, other value types, a
// repeated key, spacing, CRLF, bad bytes) mean what they always meant.
TEST(BfCli, ScoreJsonlUnusualLinesKeepTheirMeaning) {
  const std::string input =
      "{\"task\":\"revers\",\"task\":\"reverse\",\"code\":\"+\"}\n"
      "{\"task\":\"print-hello\",\"code\":\"++++++++.---.+++++++..+++\\u002e\"}\n"
      "{ \"code\" : \"+\" , \"task\":\"reverse\", \"id\": 7 }\r\n"
      "[1]\n"
      "\n"
      "{\"task\":null,\"code\":\"+\"}\n"
      "{\"task\":\"reverse\",\"code\":\"+\",\"variant\":null}\n"
      "{\"task\":\"reverse\",\"code\":\"+\",\"variant\":5}\n"
      "{\"task\":\"reverse\"}\n"
      "{\"task\":\"reverse\",\"code\":\"\xc3\xa9\"}\n"
      "{\"task\":\"reverse\",\"code\":\"\xff\"}\n"
      "{\"task\":\"reverse\",\"code\":\"a\tb\"}\n"
      "{\"task\":\"reverse\",\"code\":\"+\"}x\n"
      "{\"task\":\"revers\",\"code\":\"+\"}\n"
      "{\"task\":\"reverse\",\"code\":\"+\",\"variant\":\"odd\"}\n";
  const auto r = run_ringrl("bf score --jsonl", input);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "{\"total_reward\":0.0,\"correct\":false,\"reason\":\"wrong\"}\n"
            "{\"total_reward\":1.0,\"correct\":true,\"reason\":\"correct\"}\n"
            "{\"total_reward\":0.0,\"correct\":false,\"reason\":\"wrong\"}\n"
            "{\"error\":\"line 4: expected a JSON object\"}\n"
            "{\"error\":\"line 5: invalid JSON\"}\n"
            "{\"error\":\"line 6: \\\"task\\\" must be a string\"}\n"
            "{\"total_reward\":0.0,\"correct\":false,\"reason\":\"wrong\"}\n"
            "{\"error\":\"line 8: \\\"variant\\\" must be a string\"}\n"
            "{\"error\":\"line 9: missing \\\"code\\\"\"}\n"
            "{\"total_reward\":0.0,\"correct\":false,\"reason\":\"wrong\"}\n"
            "{\"error\":\"line 11: invalid JSON\"}\n"
            "{\"error\":\"line 12: invalid JSON\"}\n"
            "{\"error\":\"line 13: invalid JSON\"}\n"
            "{\"error\":\"line 14: bf: unknown task 'revers'; closest: reverse riffle length (`ringrl bf tasks` "
            "lists all)\"}\n"
            "{\"error\":\"line 15: bf: unknown variant 'odd' (expected paper|simplify)\"}\n");
}

// An interactive client gets each answer before it sends its next request.
TEST(BfCli, ScoreJsonlAnswersEachLineBeforeTheNext) {
  int to_child[2], from_child[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(from_child), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(to_child[0], STDIN_FILENO);
    dup2(from_child[1], STDOUT_FILENO);
    for (const int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) close(fd);
    execl(RINGRL_BINARY, RINGRL_BINARY, "bf", "score", "--jsonl", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  // One line of the child's output, waiting at most kWaitMs for each byte.
  constexpr int kWaitMs = 30000;
  auto read_line = [&] {
    std::string line;
    char c = 0;
    while (c != '\n') {
      pollfd p{from_child[0], POLLIN, 0};
      if (poll(&p, 1, kWaitMs) != 1 || read(from_child[0], &c, 1) != 1) return line + "<no answer>";
      line += c;
    }
    return line;
  };
  const std::string request = "{\"task\":\"reverse\",\"code\":\"+\"}\n";
  const std::string answer = "{\"total_reward\":0.0,\"correct\":false,\"reason\":\"wrong\"}\n";
  for (int k = 0; k < 3; ++k) {
    ASSERT_EQ(write(to_child[1], request.data(), request.size()), static_cast<ssize_t>(request.size()));
    EXPECT_EQ(read_line(), answer) << "request " << k + 1;
  }
  close(to_child[1]);
  EXPECT_EQ(read_line(), "<no answer>") << "nothing more after end of input";
  close(from_child[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
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
