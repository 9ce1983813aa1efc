#include "bench/bf_bench.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "envs/bf/machine.h"
#include "envs/bf/scorer.h"

namespace ringrl::bench {
namespace {

// Rates are per core: they use this thread's CPU time, not wall time (the machine may be
// shared with other work).
double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

constexpr std::string_view kOps = "><+-[].,";  // the 8 BF instructions (GA gene order)
// Long-running set: known-code reference programs on long inputs, no step limit.
constexpr std::size_t kLongInputLength = 1500;
constexpr std::int64_t kLongValueBound = 20;  // values 1..19: no 0 ends a read loop early
constexpr double kMinTimedSeconds = 0.3;      // repeat short timings up to this long
constexpr double kOriginalTimeoutS = 0.1;     // the original scorer's per-case timeout

// Programs that finish on any 0-free input and run super-linearly on long ones.
constexpr std::string_view kLongPrograms[] = {
    ">,[>,]<[.[-]<[<]>.[-]>[>]<]",                                     // riffle
    ">>+>,[[<]>+[>],]<[<]>-[-[-<<+>]<[>]>]<<[->+<]>[[>]>.,<+[<]>-].",  // echo-half
    ">,[>,]<<[[>]<[,<[<]>,>[>]][>]<<]>.",                              // middle-char
    ">+>,[[<]>+[>],]<[<]>-.",                                          // length
    ">,.[>,.]<[.<].>[.>].",                                            // copy-reverse
    ",>>+<<[>>[-<+>]<[->+<<.>]>+<<,].",                                // cascade
};

double seconds_since(double start) { return thread_cpu_seconds() - start; }

std::vector<std::string> random_programs(std::size_t count, std::size_t length, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> programs(count, std::string(length, ' '));
  for (std::string& p : programs) {
    for (char& c : p) c = kOps[rng() % kOps.size()];
  }
  return programs;
}

struct ScoreTiming {
  double programs_per_s = 0;
  std::size_t step_limited = 0;
};

ScoreTiming time_scorer(bf::Scorer& scorer, const std::vector<std::string>& programs, std::size_t count) {
  ScoreTiming timing;
  std::size_t scored = 0;
  const double start = thread_cpu_seconds();
  double elapsed = 0;
  do {
    for (std::size_t k = 0; k < count; ++k) {
      const bf::ScoreResult r = scorer.score(programs[k]);
      if (scored < count && r.reason == bf::ScoreReason::kStepLimit) ++timing.step_limited;
      ++scored;
    }
    elapsed = seconds_since(start);
  } while (elapsed < kMinTimedSeconds);
  timing.programs_per_s = static_cast<double>(scored) / elapsed;
  return timing;
}

// Steps per second over the long-running set with `engine`; also returns one pass's steps.
double time_long_programs(bf::Engine engine, std::int64_t* steps_per_pass) {
  std::vector<std::int64_t> input;
  std::mt19937_64 rng(kLongInputLength);
  for (std::size_t k = 0; k < kLongInputLength; ++k) {
    input.push_back(1 + static_cast<std::int64_t>(rng() % (kLongValueBound - 1)));
  }
  bf::RunOptions options;
  options.max_steps = std::nullopt;
  options.engine = engine;
  bf::Machine machine(options);
  std::vector<bf::Program> programs;
  for (const std::string_view code : kLongPrograms) programs.emplace_back(code, options.base);
  std::int64_t steps = 0;
  std::int64_t pass_steps = 0;
  const double start = thread_cpu_seconds();
  double elapsed = 0;
  bool first = true;
  do {
    for (const bf::Program& p : programs) {
      const bf::RunSummary r = machine.run(p, input.data(), input.size());
      if (!r.success) throw std::runtime_error("bf bench: a long-running program failed");
      steps += r.steps;
      if (first) pass_steps += r.steps;
    }
    first = false;
    elapsed = seconds_since(start);
  } while (elapsed < kMinTimedSeconds);
  *steps_per_pass = pass_steps;
  return static_cast<double>(steps) / elapsed;
}

std::string default_reference_script() {
  // This file is <root>/bench/bf_bench.cc; the script is <root>/scripts/bf_reference.py.
  std::string here = __FILE__;
  const std::size_t slash = here.rfind('/');
  const std::size_t parent = slash == std::string::npos ? std::string::npos : here.rfind('/', slash - 1);
  const std::string root = parent == std::string::npos ? "." : here.substr(0, parent);
  return root + "/scripts/bf_reference.py";
}

struct BaselineRun {
  double programs_per_s = 0;
  std::size_t mismatches = 0;
};

// Scores programs[0, count) with the Python reference and compares with `scorer`.
BaselineRun run_baseline(const BfBenchOptions& options, bf::Scorer& scorer, const std::vector<std::string>& programs,
                         std::size_t count) {
  const bf::Task& task = scorer.task();
  const bf::ScoreOptions& so = scorer.options();
  nlohmann::json header = {
      {"base", task.base},
      {"max_steps", so.max_execution_steps},
      {"min_code_length", so.min_code_length()},
      {"max_code_length", so.max_code_length},
      {"correct_bonus", so.correct_bonus},
      {"code_length_bonus", so.code_length_bonus},
      {"failure_reward", so.failure_reward},
      {"require_correct_syntax", so.require_correct_syntax},
      {"timeout", kOriginalTimeoutS},
  };
  nlohmann::json cases = nlohmann::json::array();
  for (const bf::TestCase& c : task.cases) cases.push_back({c.input, c.output});
  header["cases"] = cases;

  char path[] = "/tmp/ringrl-bf-bench-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) throw std::runtime_error("bf bench: cannot create a temporary file");
  close(fd);
  {
    std::ofstream file(path);
    file << header.dump() << '\n';
    for (std::size_t k = 0; k < count; ++k) file << nlohmann::json(programs[k]).dump() << '\n';
  }
  const std::string script = options.reference_script.empty() ? default_reference_script() : options.reference_script;
  const std::string command = options.python + " '" + script + "' score < '" + path + "'";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    unlink(path);
    throw std::runtime_error("bf bench: cannot run " + command);
  }
  std::string text;
  char buffer[4096];
  for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
    text.append(buffer, got);
  }
  const int status = pclose(pipe);
  unlink(path);
  if (status != 0) throw std::runtime_error("bf bench: `" + command + "` failed");

  BaselineRun run;
  std::istringstream lines(text);
  std::string line;
  std::size_t index = 0;
  while (std::getline(lines, line)) {
    const nlohmann::json j = nlohmann::json::parse(line);
    if (j.contains("elapsed_s")) {
      run.programs_per_s = static_cast<double>(count) / j.at("elapsed_s").get<double>();
      continue;
    }
    const bf::ScoreResult mine = scorer.score(programs[index++]);
    if (j.at("total_reward").get<double>() != mine.total_reward ||
        j.at("reason").get<std::string>() != bf::to_string(mine.reason)) {
      ++run.mismatches;
    }
  }
  if (index != count) throw std::runtime_error("bf bench: the reference scored too few programs");
  return run;
}

struct CliRun {
  double programs_per_s = 0;
  double cpu_programs_per_s = 0;
};

// Streams programs[0, count) through `cli bf score --jsonl` (a child process reading a file of
// JSON lines, answering into a pipe that this thread reads to the end).
CliRun run_cli_stream(const std::string& cli, const std::string& task, const std::vector<std::string>& programs) {
  char path[] = "/tmp/ringrl-bf-bench-XXXXXX";
  const int input = mkstemp(path);
  if (input < 0) throw std::runtime_error("bf bench: cannot create a temporary file");
  {
    std::ofstream file(path);
    for (const std::string& code : programs) {
      file << nlohmann::json{{"task", task}, {"code", code}}.dump() << '\n';
    }
  }
  unlink(path);  // the open descriptor keeps the file until the child is done
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    close(input);
    throw std::runtime_error("bf bench: pipe: " + std::string(std::strerror(errno)));
  }
  rusage before{};
  getrusage(RUSAGE_CHILDREN, &before);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    lseek(input, 0, SEEK_SET);
    dup2(input, STDIN_FILENO);
    dup2(pipe_fds[1], STDOUT_FILENO);
    close(pipe_fds[0]);
    execl(cli.c_str(), cli.c_str(), "bf", "score", "--jsonl", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(input);
  close(pipe_fds[1]);
  if (pid < 0) {
    close(pipe_fds[0]);
    throw std::runtime_error("bf bench: fork: " + std::string(std::strerror(errno)));
  }
  std::size_t lines = 0;
  std::size_t errors = 0;
  char buffer[1 << 16];
  std::size_t column = 0;  // of the next byte in its line
  for (ssize_t got; (got = read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (ssize_t k = 0; k < got; ++k) {
      // An answer is {"total_reward":...}; an error line is {"error":...}.
      if (column == 2 && buffer[k] == 'e') ++errors;
      ++column;
      if (buffer[k] == '\n') {
        ++lines;
        column = 0;
      }
    }
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage after{};
  getrusage(RUSAGE_CHILDREN, &after);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("bf bench: `" + cli + " bf score --jsonl` failed");
  }
  if (lines != programs.size() || errors != 0) {
    throw std::runtime_error("bf bench: `" + cli + " bf score --jsonl` answered " + std::to_string(lines) +
                             " lines (" + std::to_string(errors) + " errors) for " +
                             std::to_string(programs.size()) + " programs");
  }
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  const double cpu = seconds(after.ru_utime) - seconds(before.ru_utime) + seconds(after.ru_stime) -
                     seconds(before.ru_stime);
  const double n = static_cast<double>(programs.size());
  return {n / wall, cpu > 0 ? n / cpu : 0.0};
}

}  // namespace

BfBenchReport run_bf_bench(const BfBenchOptions& options) {
  bf::Scorer scorer = bf::make_task(options.task, bf::Variant::kPaper);
  const std::vector<std::string> programs = random_programs(options.programs, options.program_length, options.seed);

  BfBenchReport report;
  const ScoreTiming all = time_scorer(scorer, programs, programs.size());
  report.programs_per_s = all.programs_per_s;
  report.step_limited_fraction =
      programs.empty() ? 0.0 : static_cast<double>(all.step_limited) / static_cast<double>(programs.size());
  report.instructions_per_s = time_long_programs(bf::Engine::kFast, &report.instructions);
  std::int64_t plain_steps = 0;
  report.plain_instructions_per_s = time_long_programs(bf::Engine::kPlain, &plain_steps);

  if (!options.cli.empty()) {
    const CliRun cli = run_cli_stream(options.cli, options.task, programs);
    report.cli_programs_per_s = cli.programs_per_s;
    report.cli_cpu_programs_per_s = cli.cpu_programs_per_s;
  }
  if (options.baseline) {
    const std::size_t count = std::min(options.baseline_programs, programs.size());
    const BaselineRun baseline = run_baseline(options, scorer, programs, count);
    report.baseline_programs_per_s = baseline.programs_per_s;
    report.baseline_mismatches = baseline.mismatches;
    report.subset_programs_per_s = time_scorer(scorer, programs, count).programs_per_s;
    report.speedup = *report.subset_programs_per_s / baseline.programs_per_s;
  }
  return report;
}

}  // namespace ringrl::bench
