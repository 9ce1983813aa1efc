// Numbers from the user: common/parse_number.h on its own, then the real `ringrl` binary over
// a table of every command's numeric options, the unsigned keys of configs/pqt.json (as
// `--set key=value` and in a config file) and the HIRO command's options. Each bad value must
// end the process with status 2 and one stderr line naming the option, the value and the
// range, and must leave its working directory (which holds --run-dir) empty: nothing starts.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <typeinfo>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/cli_numbers.h"
#include "common/errors.h"
#include "common/exit_status.h"
#include "common/parse_number.h"

namespace ringrl {
namespace {

namespace fs = std::filesystem;

constexpr auto kCaseLimit = std::chrono::seconds(60);  // a refused value exits in well under 1 s
constexpr std::size_t kMinParallelRuns = 4;            // processes started at once (at least)
constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();

// What every unsigned option is run with: a negative value, a fraction, a word, and 2^64.
const std::vector<std::string> kBadWholeNumbers = {"-1", "1.5", "abc", "18446744073709551616"};
// What every real-valued option (durations) is run with; 1.5 and 2^64 are numbers there, and
// the ParseReal tests cover nan, inf and overflow.
const std::vector<std::string> kBadRealNumbers = {"-1", "abc"};

// The UsageError message of `fn`, or "" if it does not throw one.
template <class Fn>
std::string usage_error(Fn fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// --- common/parse_number.h ----------------------------------------------------------------

TEST(ParseUnsigned, ReadsDecimalDigitsInRange) {
  EXPECT_EQ(parse_unsigned("0", "--n", 0, 10), 0u);
  EXPECT_EQ(parse_unsigned("10", "--n", 0, 10), 10u);
  EXPECT_EQ(parse_unsigned("010", "--n", 0, 10), 10u);  // decimal, never octal
  EXPECT_EQ(parse_unsigned("18446744073709551615", "--n", 0, kU64Max), kU64Max);
  EXPECT_EQ(parse_unsigned("000000000000000000000000007", "--n", 0, kU64Max), 7u);
}

TEST(ParseUnsigned, RefusesEverythingElseInOneLine) {
  for (const char* text : {"", "-1", "-0", "+1", "1.5", "1.0", "1e3", "0x10", " 1", "1 ", "abc", "1a", "11",
                           "18446744073709551616", "99999999999999999999999"}) {
    EXPECT_EQ(usage_error([&] { parse_unsigned(text, "--n", 0, 10); }),
              std::string("--n '") + text + "': expected a whole number from 0 to 10")
        << text;
  }
  EXPECT_EQ(usage_error([&] { parse_unsigned("0", "--actors", 1, 256); }),
            "--actors '0': expected a whole number from 1 to 256");
  EXPECT_EQ(usage_error([&] { parse_unsigned("18446744073709551616", "--seed", 0, kU64Max); }),
            "--seed '18446744073709551616': expected a whole number from 0 to 18446744073709551615");
}

TEST(ParseReal, ReadsFiniteDecimalNumbersInRange) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(parse_real("0", "--s", 0, inf), 0.0);
  EXPECT_EQ(parse_real("1.5", "--s", 0, inf), 1.5);
  EXPECT_EQ(parse_real(".5", "--s", 0, inf), 0.5);
  EXPECT_EQ(parse_real("2e3", "--s", 0, inf), 2000.0);
  EXPECT_EQ(parse_real("-0.25", "--s", -1, 1), -0.25);
  EXPECT_EQ(parse_real("600", "--s", 0.05, 600), 600.0);
}

TEST(ParseReal, RefusesEverythingElseInOneLine) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const char* text : {"", "-1", "abc", "nan", "inf", "-inf", "1e999", " 1", "1 ", "0x10", "1.5s", "--1"}) {
    EXPECT_EQ(usage_error([&] { parse_real(text, "--s", 0, inf); }),
              std::string("--s '") + text + "': expected a number of at least 0")
        << text;
  }
  EXPECT_EQ(usage_error([&] { parse_real("0.01", "--seconds", 0.05, 600); }),
            "--seconds '0.01': expected a number from 0.05 to 600");
}

// --- app/cli_numbers.h, in process -------------------------------------------------------------

// Parses `--n value` into a fresh target of type T declared with add_unsigned(1, 100); returns
// the UsageError message ("" when accepted) and the stored value.
template <class T>
std::pair<std::string, T> parse_unsigned_option(const std::string& value) {
  CLI::App app;
  T target{};
  CLI::Option* option = app::add_unsigned(app, "--n", target, "count", 1, 100);
  if constexpr (std::is_same_v<T, std::vector<std::uint32_t>>) option->delimiter(',');
  std::vector<std::string> args{value, "--n"};  // CLI11 takes the arguments reversed
  return {usage_error([&] { app.parse(args); }), target};
}

template <class T>
void expect_every_bad_value_refused() {
  for (const char* value :
       {"-1", "1.5", "abc", "18446744073709551616", "0", "101", "-0", "+1", "1e3", "0x10", " 1", ""}) {
    EXPECT_EQ(parse_unsigned_option<T>(value).first,
              std::string("--n '") + value + "': expected a whole number from 1 to 100")
        << value << " into " << typeid(T).name();
  }
}

TEST(CliNumbers, AddUnsignedRefusesBadValuesForEveryTargetType) {
  expect_every_bad_value_refused<std::uint32_t>();
  expect_every_bad_value_refused<std::uint64_t>();
  expect_every_bad_value_refused<int>();
  expect_every_bad_value_refused<long>();
  expect_every_bad_value_refused<std::size_t>();
  expect_every_bad_value_refused<std::optional<std::uint64_t>>();
  expect_every_bad_value_refused<std::vector<std::uint32_t>>();
}

TEST(CliNumbers, AddUnsignedStoresTheDecimalValue) {
  EXPECT_EQ(parse_unsigned_option<std::uint64_t>("010"), (std::pair<std::string, std::uint64_t>{"", 10}));  // not octal
  EXPECT_EQ(parse_unsigned_option<int>("100"), (std::pair<std::string, int>{"", 100}));
  EXPECT_EQ(parse_unsigned_option<std::optional<std::uint64_t>>("1").second, std::optional<std::uint64_t>(1));
  EXPECT_EQ(parse_unsigned_option<std::vector<std::uint32_t>>("1,07,100").second,
            (std::vector<std::uint32_t>{1, 7, 100}));
  EXPECT_EQ(parse_unsigned_option<std::vector<std::uint32_t>>("1,-1").first,
            "--n '-1': expected a whole number from 1 to 100");
  // The default range is the target type's.
  CLI::App app;
  std::uint64_t seed = 0;
  app::add_unsigned(app, "--seed", seed, "seed");
  std::vector<std::string> args{"18446744073709551615", "--seed"};
  app.parse(args);
  EXPECT_EQ(seed, kU64Max);
  // A range that does not fit the type is a programming error.
  std::uint32_t small = 0;
  EXPECT_THROW(app::add_unsigned(app, "--small", small, "small", 0, kU64Max), std::logic_error);
}

TEST(CliNumbers, AddRealRefusesWordsNanInfAndOutOfRange) {
  for (const char* value : {"-1", "abc", "nan", "inf", "1e999", "601", " 1"}) {
    CLI::App app;
    double seconds = 0;
    app::add_real(app, "--seconds", seconds, "seconds", 0.05, 600);
    std::vector<std::string> args{value, "--seconds"};
    EXPECT_EQ(usage_error([&] { app.parse(args); }),
              std::string("--seconds '") + value + "': expected a number from 0.05 to 600")
        << value;
  }
  CLI::App app;
  std::optional<double> seconds;
  app::add_real(app, "--seconds", seconds, "seconds", 0);
  std::vector<std::string> args{"1.5", "--seconds"};
  app.parse(args);
  EXPECT_EQ(seconds, 1.5);
}

// --- The binary -------------------------------------------------------------------------------

struct RunResult {
  int status = -1;
  bool timed_out = false;
  std::string out, err;
};

// Runs `ringrl args...` in `cwd`, in its own process group, for at most kCaseLimit.
RunResult run_in(const fs::path& cwd, const std::vector<std::string>& args) {
  std::vector<std::string> all{RINGRL_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string dir = cwd.string();
  RunResult r;
  int out[2], err[2];
  if (pipe(out) != 0) return r;
  if (pipe(err) != 0) {
    close(out[0]);
    close(out[1]);
    return r;
  }
  const pid_t pid = fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    setpgid(0, 0);
    if (chdir(dir.c_str()) != 0) _exit(127);
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    close(err[0]);
    close(err[1]);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    return r;
  }
  setpgid(pid, pid);
  // Read both pipes until both close; past the limit, kill the whole group.
  const auto deadline = std::chrono::steady_clock::now() + kCaseLimit;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 && !r.timed_out) {
      r.timed_out = true;
      kill(-pid, SIGKILL);
    }
    const int ready = poll(fds, 2, r.timed_out ? 1000 : static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (const pollfd& p : fds) {
    if (p.fd >= 0) close(p.fd);
  }
  waitpid(pid, &r.status, 0);
  return r;
}

// A scratch directory, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "ringrl-numbers-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// One refused command line: `args`, whose error line must contain `expected_text`.
struct RefusedCase {
  std::vector<std::string> args;
  std::string expected_text;
};

std::string shown(const std::vector<std::string>& args) {
  std::string s = "ringrl";
  for (const std::string& a : args) s += " " + a;
  return s;
}

// Runs every case (several at a time), each in its own empty working directory, and
// checks: status 2, nothing on stdout, exactly one stderr line "ringrl: error: ..." that holds
// the expected text, and the working directory (with --run-dir run inside it) still empty.
void expect_refused(const std::vector<RefusedCase>& cases) {
  ScratchDir scratch;
  std::vector<RunResult> results(cases.size());
  std::vector<fs::path> dirs(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    dirs[i] = scratch.path() / ("case" + std::to_string(i));
    fs::create_directories(dirs[i]);
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> workers;
  const std::size_t parallel = std::max<std::size_t>(kMinParallelRuns, std::thread::hardware_concurrency());
  for (std::size_t w = 0; w < parallel; ++w) {
    workers.emplace_back([&] {
      for (std::size_t i = next++; i < cases.size(); i = next++) results[i] = run_in(dirs[i], cases[i].args);
    });
  }
  for (std::thread& t : workers) t.join();
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const RunResult& r = results[i];
    const std::string what = shown(cases[i].args);
    ASSERT_FALSE(r.timed_out) << what << ": still running after " << kCaseLimit.count() << " s";
    EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == kExitUsage) << what << ": status " << r.status << "\n"
                                                                              << r.err;
    EXPECT_EQ(r.out, "") << what;
    EXPECT_EQ(r.err.rfind("ringrl: error: ", 0), 0u) << what << ":\n" << r.err;
    EXPECT_TRUE(!r.err.empty() && r.err.find('\n') == r.err.size() - 1) << what << ": not one line:\n" << r.err;
    EXPECT_NE(r.err.find(cases[i].expected_text), std::string::npos)
        << what << ": expected \"" << cases[i].expected_text << "\" in\n"
        << r.err;
    EXPECT_TRUE(fs::is_empty(dirs[i])) << what << ": wrote into its working directory";
  }
}

enum class Kind {
  kWhole,      // app/cli_numbers.h add_unsigned: "<option> '<value>': expected a whole number from"
  kReal,       // app/cli_numbers.h add_real: "<option> '<value>': expected a number"
  kOwnParser,  // a list or range option with its own parser: "<option> <value>: ..."
};

// One numeric option of one command. `command` holds the command and whatever else it needs
// (its required options, `--run-dir run`); the option and a bad value are appended.
struct OptionRow {
  std::vector<std::string> command;
  std::string option;
  Kind kind = Kind::kWhole;
  bool every_value = false;  // run with every bad value even without RINGRL_TEST_EVERY_VALUE
};

// Each start of the torch build's `ringrl` costs about 0.3 s of CPU (LibTorch's static
// initialisation), so by default a row runs with one bad value, taken in turn down the table
// (every value meets every command several times), and the rows the issue names run with all
// of them. RINGRL_TEST_EVERY_VALUE=1 runs every row with every value (about 200 processes).
bool every_value() {
  const char* v = std::getenv("RINGRL_TEST_EVERY_VALUE");
  return v != nullptr && std::string(v) == "1";
}

std::vector<RefusedCase> option_cases(const std::vector<OptionRow>& rows) {
  std::vector<RefusedCase> cases;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const OptionRow& row = rows[r];
    const std::vector<std::string>& all = row.kind == Kind::kReal ? kBadRealNumbers : kBadWholeNumbers;
    const std::vector<std::string> values =
        row.every_value || every_value() ? all : std::vector<std::string>{all[r % all.size()]};
    for (const std::string& value : values) {
      RefusedCase c{row.command, ""};
      c.args.push_back(row.option);
      c.args.push_back(value);
      switch (row.kind) {
        case Kind::kWhole:
          c.expected_text = row.option + " '" + value + "': expected a whole number from ";
          break;
        case Kind::kReal:
          c.expected_text = row.option + " '" + value + "': expected a number ";
          break;
        case Kind::kOwnParser:
          c.expected_text = row.option + " " + value + ":";
          break;
      }
      cases.push_back(std::move(c));
    }
  }
  return cases;
}

// The commands a torch-free build has too.
TEST(UnsignedOptions, TransportBenchEnvAndBfCommands) {
  using V = std::vector<std::string>;
  const V demo{"demo"};
  const V ring{"bench", "ring"};
  const V bf_bench{"bench", "bf"};
  const V env_bench{"bench", "env", "--env", "point-maze"};
  const V rollout{"env", "rollout", "--env", "point-maze", "--policy", "random"};
  const V rollout_steps{"env", "rollout", "--env", "point-maze", "--policy", "random", "--steps", "1"};
  const V render{"env", "render", "--env", "point-maze", "--out", "maze.png"};
  const V bf_run{"bf", "run", "+"};
  const std::vector<OptionRow> rows = {
      {demo, "--actors"},
      {demo, "--record-bytes"},
      {demo, "--dim"},
      {demo, "--seconds", Kind::kReal},
      {ring, "--ring-bytes"},
      {ring, "--publish-every"},
      {ring, "--sizes"},
      {ring, "--blobs"},
      {ring, "--samples"},
      {ring, "--seconds", Kind::kReal},
      {bf_bench, "--programs"},
      {bf_bench, "--seed"},
      {bf_bench, "--baseline-programs"},
      {env_bench, "--steps"},
      {env_bench, "--rounds"},
      {env_bench, "--seed"},
      {env_bench, "--seconds", Kind::kReal},
      {rollout, "--steps"},
      {rollout_steps, "--seed"},
      {render, "--px-per-cell"},
      {bf_run, "--base"},
      {bf_run, "--timeout", Kind::kReal},
  };
  std::vector<RefusedCase> cases = option_cases(rows);
  // A list option checks every element.
  cases.push_back(
      {{"bench", "ring", "--sizes", "64,-1"}, "--sizes '-1': expected a whole number from 0 to 4294967295"});
  expect_refused(cases);
}

// `bf run --max-steps` keeps spec §1.5's meaning for values <= 0 (the first instruction ends
// the run on the step limit); only a malformed number is refused.
TEST(UnsignedOptions, BfRunMaxStepsRefusesOnlyMalformedNumbers) {
  expect_refused({{{"bf", "run", "+++", "--max-steps", "1.5"}, "--max-steps"},
                  {{"bf", "run", "+++", "--max-steps", "abc"}, "--max-steps"},
                  {{"bf", "run", "+++", "--max-steps", "18446744073709551616"}, "--max-steps"}});
  ScratchDir scratch;
  for (const char* limit : {"0", "-1"}) {
    const RunResult r = run_in(scratch.path(), {"bf", "run", "+++", "--max-steps", limit});
    EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << limit << ": " << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_object()) << limit << ": " << r.out;
    EXPECT_EQ(j["failure_reason"], "step-limit") << limit;
    EXPECT_EQ(j["steps"], 1) << limit;
  }
  const RunResult help = run_in(scratch.path(), {"bf", "run", "--help"});
  EXPECT_NE(help.out.find("spec §1.5"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("only a malformed number is refused"), std::string::npos) << help.out;
}

#if RINGRL_TEST_TORCH_COMMANDS

TEST(UnsignedOptions, TrainTuneProfileAndBenchNpe) {
  using V = std::vector<std::string>;
  const V pqt{"train", "pqt", "--task", "reverse", "--run-dir", "run"};
  const V random{"train", "random", "--task", "reverse", "--run-dir", "run"};
  const V tune{"tune", "--space", "topk", "--run-dir", "run"};
  const V npe{"bench", "npe", "--task", "reverse"};
  const V profile{"profile", "learner", "--trace", "trace.json"};
  const std::vector<OptionRow> rows = {
      {pqt, "--actors"},
      {pqt, "--max-npe", Kind::kWhole, /*every_value=*/true},
      {pqt, "--repetitions"},
      {pqt, "--seed", Kind::kWhole, /*every_value=*/true},
      {pqt, "--max-seconds", Kind::kReal},
      {random, "--max-npe", Kind::kWhole, /*every_value=*/true},
      {random, "--repetitions"},
      {random, "--seed"},
      {random, "--length"},
      {tune, "--repetitions"},
      {tune, "--max-npe"},
      {tune, "--parallel"},
      {tune, "--actors"},
      {tune, "--trials", Kind::kOwnParser},
      {tune, "--trial-range", Kind::kOwnParser},
      {npe, "--actors"},
      {npe, "--seconds", Kind::kReal},
      {profile, "--steps"},
  };
  std::vector<RefusedCase> cases = option_cases(rows);
  // The issue's own command line, word for word, and the whole message.
  cases.push_back({{"train", "pqt", "--task", "reverse", "--max-npe", "-5", "--run-dir", "run"},
                   "ringrl: error: --max-npe '-5': expected a whole number from 0 to 18446744073709551615\n"});
  expect_refused(cases);
}

// The unsigned keys of configs/pqt.json (config/pqt_config.cc's table).
const std::vector<std::string> kPqtUnsignedKeys = {
    "batch_size", "timestep_limit", "topk", "topk_batch_size", "obs_embedding_size", "replay_capacity", "max_npe",
    "actors",     "max_lag",        "seed", "repetitions"};

// Every key once, the bad values taken in turn (each several times); with
// RINGRL_TEST_EVERY_VALUE=1 every key with every value. tests/common/runfiles/config_test.cc
// runs every bad value through the same code in process.
TEST(UnsignedOptions, PqtSetOverrides) {
  std::vector<RefusedCase> cases;
  auto add = [&](const std::string& key, const std::string& value) {
    cases.push_back({{"train", "pqt", "--task", "reverse", "--set", key + "=" + value, "--run-dir", "run"},
                     "--set " + key + " '" + value + "': expected a whole number from "});
  };
  for (std::size_t k = 0; k < kPqtUnsignedKeys.size(); ++k) {
    for (std::size_t v = 0; v < kBadWholeNumbers.size(); ++v) {
      if (every_value() || v == k % kBadWholeNumbers.size()) add(kPqtUnsignedKeys[k], kBadWholeNumbers[v]);
    }
  }
  // Past a key's own range, and through the other commands that read the same config.
  cases.push_back({{"train", "pqt", "--task", "reverse", "--set", "actors=257", "--run-dir", "run"},
                   "--set actors '257': expected a whole number from 1 to 256"});
  cases.push_back({{"train", "pqt", "--task", "reverse", "--set", "batch_size=0", "--run-dir", "run"},
                   "--set batch_size '0': expected a whole number from 1 to 2147483647"});
  cases.push_back({{"bench", "npe", "--task", "reverse", "--set", "batch_size=-1"},
                   "--set batch_size '-1': expected a whole number from 1 to 2147483647"});
  cases.push_back({{"profile", "learner", "--trace", "trace.json", "--set", "timestep_limit=1.5"},
                   "--set timestep_limit '1.5': expected a whole number from 1 to 2147483647"});
  cases.push_back({{"tune", "--space", "topk", "--run-dir", "run", "--set", "topk_batch_size=-1"},
                   "--set topk_batch_size '-1': expected a whole number from 0 to 2147483647"});
  expect_refused(cases);
}

TEST(UnsignedOptions, PqtConfigFileValues) {
  ScratchDir configs;
  std::ifstream in(fs::path(RINGRL_SOURCE_DIR) / "configs/pqt.json");
  const nlohmann::json base = nlohmann::json::parse(in);
  // JSON texts written into the file as they are (2^64 stays a literal, not a rounded float).
  const std::vector<std::string> values = {"-1", "1.5", "\"abc\"", "18446744073709551616", "1e30"};
  constexpr const char* kPlaceholder = "@bad@";
  std::vector<RefusedCase> cases;
  auto add = [&](const std::string& key, std::size_t v) {
    nlohmann::json cfg = base;
    cfg[key] = kPlaceholder;
    std::string text = cfg.dump(2);
    text.replace(text.find(std::string("\"") + kPlaceholder + "\""), std::string(kPlaceholder).size() + 2, values[v]);
    const fs::path file = configs.path() / (key + std::to_string(v) + ".json");
    std::ofstream(file) << text;
    cases.push_back({{"train", "pqt", "--task", "reverse", "--config", file.string(), "--run-dir", "run"},
                     "config key " + key + " '"});
  };
  // Every key once, the values taken in turn (or all of them, as above). Keys the `pqt` preset
  // also sets (batch_size, topk, max_npe, ...) are refused too: the file is checked first.
  for (std::size_t k = 0; k < kPqtUnsignedKeys.size(); ++k) {
    for (std::size_t v = 0; v < values.size(); ++v) {
      if (every_value() || v == k % values.size()) add(kPqtUnsignedKeys[k], v);
    }
  }
  expect_refused(cases);
}

// The HIRO commands (app/hiro_train_cmd.cc, app/hiro_bench_cmd.cc, `profile learner --algo
// hiro`): their options, and the keys of configs/hiro.json read as unsigned integers.
TEST(UnsignedOptions, HiroCommands) {
  using V = std::vector<std::string>;
  const V hiro{"train", "hiro", "--env", "point-maze", "--run-dir", "run"};
  const V bench{"bench", "hiro", "--env", "point-maze"};
  const V profile{"profile", "learner", "--algo", "hiro", "--trace", "trace.json"};
  const std::vector<OptionRow> rows = {
      {hiro, "--actors", Kind::kWhole, /*every_value=*/true},
      {hiro, "--max-env-steps", Kind::kWhole, /*every_value=*/true},
      {hiro, "--seed"},
      {hiro, "--repetitions"},
      {hiro, "--max-seconds", Kind::kReal},
      {bench, "--actors"},
      {bench, "--seconds", Kind::kReal},
      {profile, "--steps"},
  };
  std::vector<RefusedCase> cases = option_cases(rows);
  // Each key once, the bad values taken in turn; the error line names the key.
  const std::vector<std::string> keys = {"max_env_steps", "actors",         "repetitions",     "seed",
                                         "initial_steps", "eval_every",     "eval_episodes",   "high_every",
                                         "publish_every", "throttle_slack", "replay_capacity", "learner_threads"};
  for (std::size_t k = 0; k < keys.size(); ++k) {
    for (std::size_t v = 0; v < kBadWholeNumbers.size(); ++v) {
      if (!every_value() && v != k % kBadWholeNumbers.size()) continue;
      cases.push_back(
          {{"train", "hiro", "--env", "point-maze", "--set", keys[k] + "=" + kBadWholeNumbers[v], "--run-dir", "run"},
           keys[k]});
    }
  }
  cases.push_back({{"train", "hiro", "--env", "point-maze", "--set", "learner_threads=257", "--run-dir", "run"},
                   "--set learner_threads '257': expected a whole number from 0 to 256"});
  expect_refused(cases);
}

// `train ga` (app/ga_train_cmd.cc): its options, and the keys of configs/ga.json read as
// unsigned integers (config/ga_config.cc's table).
const std::vector<std::string> kGaCommand = {"train", "ga", "--task", "reverse", "--run-dir", "run"};

TEST(UnsignedOptions, GaCommandOptions) {
  std::vector<RefusedCase> cases = option_cases({
      {kGaCommand, "--actors"},
      {kGaCommand, "--max-npe"},
      {kGaCommand, "--repetitions"},
      {kGaCommand, "--max-seconds", Kind::kReal},
  });
  cases.push_back({{"train", "ga", "--task", "reverse", "--set", "population=100001", "--run-dir", "run"},
                   "--set population '100001': expected a whole number from 1 to 100000"});
  expect_refused(cases);
}

TEST(UnsignedOptions, GaSetOverrides) {
  const std::vector<std::string> keys = {"population", "timestep_limit",  "hall_of_fame", "check_every",
                                         "cache_size", "learner_threads", "max_npe",      "actors",
                                         "seed",       "repetitions"};
  std::vector<RefusedCase> cases;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    for (std::size_t v = 0; v < kBadWholeNumbers.size(); ++v) {
      if (!every_value() && v != k % kBadWholeNumbers.size()) continue;
      std::vector<std::string> args = kGaCommand;
      args.insert(args.end(), {"--set", keys[k] + "=" + kBadWholeNumbers[v]});
      cases.push_back({args, "--set " + keys[k] + " '" + kBadWholeNumbers[v] + "': expected a whole number from "});
    }
  }
  expect_refused(cases);
}

#endif  // RINGRL_TEST_TORCH_COMMANDS

}  // namespace
}  // namespace ringrl
