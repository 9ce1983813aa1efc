// Tests of envs/bf/tasks.h: the registry (spec §4.1, §4.2) and the seeded test cases
// (§4.3, §4.4). Golden values come from CPython 2.7 and numpy running the spec's generators.
#include "envs/bf/tasks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "common/errors.h"
#include "envs/bf/machine.h"

namespace ringrl::bf {
namespace {

using Cells = std::vector<std::int64_t>;

const std::vector<std::string> kPaperTasks = {"reverse",          "remove-char",
                                              "count-char",       "add",
                                              "bool-logic",       "print-hello",
                                              "echo-twice",       "echo-thrice",
                                              "copy-reverse",     "zero-cascade",
                                              "cascade",          "shift-left",
                                              "shift-right",      "riffle",
                                              "unriffle",         "middle-char",
                                              "remove-last",      "remove-last-two",
                                              "echo-alternating", "echo-half",
                                              "length",           "echo-second-seq",
                                              "echo-nth-seq",     "substring",
                                              "divide-2",         "dedup"};
const std::vector<std::string> kOtherTasks = {
    "print",     "echo",         "reverse-tune", "remove-char-tune", "prefix",
    "find",      "sort3",        "fib",          "count-down",       "split",
    "trim-left", "circle-route", "multiply",     "divmod",           "remove-target-char",
    "list-index"};

// Known-code tasks and their reference programs (spec §4.2).
const std::map<std::string, std::string> kKnownCode = {
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
};

TEST(BfTasks, RegistryHoldsThe42TasksInOrder) {
  const std::vector<TaskInfo>& table = task_table();
  ASSERT_EQ(table.size(), 42U);
  std::vector<std::string> names;
  for (const TaskInfo& t : table) names.emplace_back(t.name);
  std::vector<std::string> expected = kPaperTasks;
  expected.insert(expected.end(), kOtherTasks.begin(), kOtherTasks.end());
  EXPECT_EQ(names, expected);
  for (std::size_t k = 0; k < table.size(); ++k) EXPECT_EQ(table[k].paper, k < 26) << names[k];
}

TEST(BfTasks, BasesIncludingTheClassAttributeQuirk) {
  const std::map<std::string, std::int64_t> bases = {
      {"count-char", 27}, {"bool-logic", 2},  {"print-hello", 27},  {"echo", 27},   {"remove-char-tune", 27},
      {"prefix", 27},     {"find", 27},       {"sort3", 27},        {"split", 256}, {"multiply", 256},
      {"divmod", 256},    {"trim-left", 256}, {"circle-route", 256}};
  for (const TaskInfo& t : task_table()) {
    const auto it = bases.find(std::string(t.name));
    EXPECT_EQ(t.base, it == bases.end() ? 256 : it->second) << t.name;
    EXPECT_EQ(make_task_cases(t.name).base, t.base) << t.name;
  }
}

TEST(BfTasks, CaseCountsAndInputRange) {
  for (const TaskInfo& t : task_table()) {
    const Task task = make_task_cases(t.name);
    EXPECT_EQ(task.cases.size(), t.num_cases) << t.name;
    EXPECT_EQ(task.name, t.name);
    for (const TestCase& c : task.cases) {
      for (const std::int64_t v : c.input) {
        EXPECT_TRUE(v >= 0 && v < task.base) << t.name;
      }
    }
  }
  EXPECT_EQ(make_task_cases("sort3").cases.size(), 150U);
  EXPECT_EQ(make_task_cases("circle-route").cases.size(), 109U);
  EXPECT_EQ(make_task_cases("echo").cases.size(), 25U);
}

TEST(BfTasks, CasesAreDeterministic) {
  for (const TaskInfo& t : task_table()) {
    const Task a = make_task_cases(t.name);
    const Task b = make_task_cases(t.name);
    ASSERT_EQ(a.cases.size(), b.cases.size());
    for (std::size_t k = 0; k < a.cases.size(); ++k) {
      EXPECT_EQ(a.cases[k].input, b.cases[k].input) << t.name;
      EXPECT_EQ(a.cases[k].output, b.cases[k].output) << t.name;
    }
  }
}

void expect_case(const std::string& task, std::size_t index, const Cells& input, const Cells& output) {
  const Task t = make_task_cases(task);
  ASSERT_LT(index, t.cases.size());
  EXPECT_EQ(t.cases[index].input, input) << task << " case " << index;
  EXPECT_EQ(t.cases[index].output, output) << task << " case " << index;
}

TEST(BfTasks, SeededCasesMatchCPython27) {
  expect_case("reverse", 0, {50, 175, 243, 103, 40}, {40, 103, 243, 175, 50, 0});
  expect_case("reverse", 1, {130, 176, 137, 245}, {245, 137, 176, 130, 0});
  expect_case("remove-char", 0, {1, 243, 103, 40, 142}, {243, 103, 40, 142, 0});
  expect_case("remove-char", 1, {137, 245, 1, 124}, {137, 245, 124, 0});
  expect_case("count-char", 5, {15, 1, 14, 19, 15}, {1});
  expect_case("count-char", 6, {13, 1, 22, 1, 1, 1}, {4});
  expect_case("sort3", 0, {18, 6, 18}, {6, 18, 18});
  expect_case("sort3", 1, {25, 11, 5}, {5, 11, 25});
  expect_case("divmod", 0, {172, 50}, {3, 22});
  expect_case("divmod", 1, {175, 243}, {0, 175});
  expect_case("circle-route", 9, {3, 3, 1, 1, 2, 4, 0}, {1});
  expect_case("multiply", 0, {172, 1}, {172});
  expect_case("multiply", 1, {3, 81}, {243});
  expect_case("multiply", 2, {47, 3}, {141});
  expect_case("multiply", 5, {4, 51}, {204});
  expect_case("divide-2", 0, {172}, {86});
  expect_case("echo-second-seq", 0, {49, 175, 243, 102, 0, 141, 0}, {141, 0});
  expect_case("list-index", 0, {2, 175, 243, 102, 39, 141, 130, 176, 137, 245, 151, 124, 0}, {102});
  expect_case("echo-nth-seq", 0, {1, 243, 102, 0, 0, 130, 176, 0, 245, 151, 0, 162, 0}, {243, 102, 0});
  expect_case("remove-target-char", 0, {4, 176, 243, 0}, {176, 243, 0});
}

TEST(BfTasks, NumpySeededCasesMatchNumpy) {
  expect_case("echo", 0, {7, 16, 13, 0}, {7, 16, 13, 0});
  expect_case("dedup", 0, {2, 2, 2, 0}, {2, 0});
}

TEST(BfTasks, FixedCases) {
  expect_case("add", 6, {221, 251}, {216, 0});
  expect_case("bool-logic", 0, {0, 0, 0}, {1});
  expect_case("bool-logic", 3, {0, 1, 1}, {1});
  expect_case("bool-logic", 7, {1, 1, 1}, {0});
  expect_case("print-hello", 0, {}, {8, 5, 12, 12, 15});
  expect_case("print", 0, {}, {1, 2, 3, 4, 5});
  expect_case("count-char", 4, {24, 11, 26, 1, 15, 0}, {1});
  expect_case("reverse-tune", 4, {10, 12, 5, 2, 7, 0}, {7, 2, 5, 12, 10, 0});
  expect_case("remove-char-tune", 7, {9, 10, 22, 1, 4, 0}, {9, 10, 22, 4, 0});
  expect_case("prefix", 1, {1, 2, 3, 0, 1, 2, 17, 14, 0}, {1, 2, 0});
  expect_case("find", 5, {1, 2, 12, 0}, {1});
  expect_case("find", 4, {24, 6, 10, 16, 4, 0}, {0});
  expect_case("fib", 13, {13}, {233, 121});
  expect_case("count-down", 2, {3}, {3, 0, 2, 0, 1, 0});
  expect_case("split", 0, {8, 5, 12, 12, 15}, {8, 5, 12, 27, 12, 15});
  expect_case("split", 1, {15, 18, 1, 14, 7, 5}, {15, 18, 1, 27, 14, 7, 5});
  expect_case("trim-left", 4, {'A', '"', 'B', '"'}, {'"', 'B', '"'});
  expect_case("circle-route", 0, {0}, {1});
  expect_case("circle-route", 8, {4, 0}, {0});
}

TEST(BfTasks, OutputsFollowTheTaskRules) {
  for (const TestCase& c : make_task_cases("reverse").cases) {
    Cells want(c.input.rbegin(), c.input.rend());
    want.push_back(0);
    EXPECT_EQ(c.output, want);
  }
  for (const TestCase& c : make_task_cases("remove-char").cases) {
    EXPECT_NE(std::find(c.input.begin(), c.input.end(), 1), c.input.end());
    EXPECT_EQ(c.output.size(), c.input.size());
    EXPECT_EQ(c.output.back(), 0);
  }
  for (const TestCase& c : make_task_cases("count-char").cases) {
    EXPECT_EQ(c.output, Cells{std::count(c.input.begin(), c.input.end(), 1)});
  }
  for (const TestCase& c : make_task_cases("sort3").cases) {
    EXPECT_TRUE(std::is_sorted(c.output.begin(), c.output.end()));
  }
  for (const TestCase& c : make_task_cases("multiply").cases) {
    EXPECT_EQ(c.input[0] * c.input[1], c.output[0]);
  }
  for (const TestCase& c : make_task_cases("divmod").cases) {
    EXPECT_EQ(c.output, (Cells{c.input[0] / c.input[1], c.input[0] % c.input[1]}));
  }
  for (const TestCase& c : make_task_cases("circle-route").cases) {
    std::int64_t x = 0, y = 0;
    for (const std::int64_t m : c.input) {
      x += m == 2 ? 1 : m == 4 ? -1 : 0;
      y += m == 1 ? 1 : m == 3 ? -1 : 0;
    }
    EXPECT_EQ(c.output, Cells{x == 0 && y == 0 ? 1 : 0});
  }
  for (const TestCase& c : make_task_cases("echo").cases) {
    EXPECT_EQ(c.output, c.input);
    EXPECT_EQ(c.input.back(), 0);
  }
}

TEST(BfTasks, KnownCodeOutputsAreTheReferenceProgramsOutputs) {
  RunOptions o;
  o.engine = Engine::kPlain;
  for (const auto& [name, code] : kKnownCode) {
    const Task task = make_task_cases(name);
    for (const TestCase& c : task.cases) {
      const RunResult r = evaluate(code, c.input, o);
      ASSERT_TRUE(r.success) << name;
      EXPECT_EQ(r.output, c.output) << name;
    }
  }
}

TEST(BfTasks, UnknownNameListsTheClosest) {
  try {
    make_task_cases("revers");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("unknown task 'revers'"), std::string::npos) << message;
    EXPECT_NE(message.find("reverse"), std::string::npos) << message;
  }
  EXPECT_EQ(closest_task_names("echo-twise", 1), std::vector<std::string_view>{"echo-twice"});
  EXPECT_THROW(make_task_cases("test-hill-climb"), UsageError);
}

}  // namespace
}  // namespace ringrl::bf
