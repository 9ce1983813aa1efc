// The registry of BF coding tasks and their test cases (spec §4).
//
// Every registered task of the original: the 26 ICLR paper tasks and 16 others. A task is
// its name, base and fixed list of (input, output) cases in scoring order; seeded cases are
// drawn exactly as the original draws them (CPython 2.7 `random`, numpy legacy RandomState:
// py_random.h), "known code" cases are whatever the reference program prints.
//
// Who may call what: all functions are thread-safe. make_task() builds a fresh Task (its
// generators run each time; cheap); a Task is an immutable value afterwards.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ringrl::bf {

/// One test case: what ',' reads and what '.' must print.
struct TestCase {
  std::vector<std::int64_t> input;
  std::vector<std::int64_t> output;
};

/// A BF task: name, cell modulus and test cases in scoring order.
struct Task {
  std::string name;
  std::int64_t base = 256;
  std::vector<TestCase> cases;
  std::string description;  // one line
  bool paper = false;       // one of the 26 tasks of the ICLR paper
};

/// Registry entry (no cases generated).
struct TaskInfo {
  std::string_view name;
  std::int64_t base;
  std::size_t num_cases;
  std::string_view description;
  bool paper;
};

/// All registered tasks: the 26 paper tasks in the paper's order, then the others.
const std::vector<TaskInfo>& task_table();

/// Builds the named task with its cases. Throws UsageError for an unknown name, listing the
/// closest registered names.
Task make_task_cases(std::string_view name);

/// Registered names closest to `name` (edit distance), best first, at most `limit`.
std::vector<std::string_view> closest_task_names(std::string_view name, std::size_t limit);

/// The seed of the original's task RNG (`random.Random(6849275409234)`).
inline constexpr std::int64_t kTaskSeed = 6849275409234;
/// The numpy seed of the echo task.
inline constexpr std::uint32_t kEchoNumpySeed = 1234567890;

}  // namespace ringrl::bf
