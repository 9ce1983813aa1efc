// `ringrl bf ...` (run, score, cases, tasks) and `ringrl bench bf`.
//
// Output is JSON (one object per line for the --jsonl streams); bad arguments throw
// UsageError. In a --jsonl stream a bad line yields {"error": "line N: ..."} in its place
// and the stream goes on.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "app/cli_numbers.h"
#include "app/commands.h"
#include "app/flat_json.h"
#include "bench/bf_bench.h"
#include "common/errors.h"
#include "common/supervisor.h"
#include "envs/bf/machine.h"
#include "envs/bf/scorer.h"
#include "envs/bf/tasks.h"

namespace ringrl::app {
namespace {

using Json = nlohmann::ordered_json;
using Cells = std::vector<std::int64_t>;

constexpr std::size_t kJsonlReadBytes = std::size_t{1} << 16;    // stdin read(2) size
constexpr std::size_t kJsonlOutputBytes = std::size_t{1} << 16;  // answers buffered before a write
constexpr std::size_t kMaxMemoisedNumbers = 4096;                // reward texts kept by ScoreLineWriter

// --- Parsing helpers -----------------------------------------------------------------------

// CODE or @FILE. A file's single trailing newline (LF or CRLF) is not part of the program.
std::string load_code(const std::string& arg) {
  if (arg.empty() || arg[0] != '@') return arg;
  const std::string path = arg.substr(1);
  std::ifstream file(path, std::ios::binary);
  if (!file) throw UsageError("bf: cannot read program file '" + path + "'");
  std::ostringstream text;
  text << file.rdbuf();
  std::string code = text.str();
  if (!code.empty() && code.back() == '\n') code.pop_back();
  if (!code.empty() && code.back() == '\r') code.pop_back();
  return code;
}

// "1,2,3" (optionally in brackets, spaces allowed); "" is the empty input.
Cells parse_int_list(const std::string& text, const std::string& what) {
  std::string body;
  for (const char c : text) {
    if (c != ' ' && c != '[' && c != ']') body += c;
  }
  Cells values;
  if (body.empty()) return values;
  std::size_t start = 0;
  while (start <= body.size()) {
    const std::size_t comma = std::min(body.find(',', start), body.size());
    const std::string item = body.substr(start, comma - start);
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = std::string::npos;
    }
    if (item.empty() || used != item.size()) {
      throw UsageError("bf: " + what + " must be comma-separated integers, got '" + text + "'");
    }
    values.push_back(v);
    start = comma + 1;
  }
  return values;
}

std::optional<std::int64_t> parse_max_steps(const std::string& text) {
  if (text == "none" || text == "null") return std::nullopt;
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = std::string::npos;
  }
  if (used != text.size()) {
    throw UsageError("bf: --max-steps must be an integer or 'none', got '" + text + "'");
  }
  return v;
}

std::int64_t json_int(const Json& j, const char* key) {
  if (!j.is_number_integer()) throw UsageError(std::string("\"") + key + "\" must be an integer");
  if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    throw UsageError(std::string("\"") + key + "\" is out of range");
  }
  return j.get<std::int64_t>();
}

Cells json_cells(const Json& j, const char* key) {
  if (!j.is_array()) throw UsageError(std::string("\"") + key + "\" must be a list of integers");
  Cells cells;
  for (const Json& v : j) cells.push_back(json_int(v, key));
  return cells;
}

bool json_bool(const Json& j, const char* key) {
  if (!j.is_boolean()) throw UsageError(std::string("\"") + key + "\" must be true or false");
  return j.get<bool>();
}

std::string json_string(const Json& j, const char* key) {
  if (!j.is_string()) throw UsageError(std::string("\"") + key + "\" must be a string");
  return j.get<std::string>();
}

// --- Result rendering --------------------------------------------------------------------

Json run_json(const bf::RunResult& r) {
  Json j;
  j["output"] = r.output;
  j["success"] = r.success;
  j["failure_reason"] = std::string(bf::to_string(r.reason));
  j["steps"] = r.steps;
  j["memory"] = r.memory;
  return j;
}

Json score_json(const bf::ScoreResult& r) {
  Json j;
  j["total_reward"] = r.total_reward;
  j["correct"] = r.correct;
  j["reason"] = std::string(bf::to_string(r.reason));
  return j;
}

// Appends score_json(r).dump() to `out` without building the JSON value. Numbers keep the
// JSON library's text, memoised per value (a task's rewards take few distinct values).
class ScoreLineWriter {
 public:
  void append(std::string& out, const bf::ScoreResult& r) {
    out += "{\"total_reward\":";
    out += number(r.total_reward);
    out += r.correct ? ",\"correct\":true,\"reason\":\"" : ",\"correct\":false,\"reason\":\"";
    out += bf::to_string(r.reason);  // fixed lower-case names: nothing to escape
    out += "\"}";
  }

 private:
  const std::string& number(double value) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    const auto it = numbers_.find(bits);
    if (it != numbers_.end()) return it->second;
    if (numbers_.size() >= kMaxMemoisedNumbers) {
      scratch_ = Json(value).dump();
      return scratch_;
    }
    return numbers_.emplace(bits, Json(value).dump()).first->second;
  }

  std::unordered_map<std::uint64_t, std::string> numbers_;  // bit pattern -> JSON text
  std::string scratch_;
};

// The full parser's reading of one request line.
Json parse_line(std::string_view line) { return Json::parse(line.data(), line.data() + line.size()); }

// Writes `out` to stdout, flushes, and empties it.
void flush_out(std::string& out) {
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  out.clear();
}

// Runs a --jsonl stream: one request per stdin line (the last may lack its newline), one
// JSON line out per request, in order. `handle(line, out)` appends the answer to `out`
// without its newline, or throws; a throw becomes {"error": "line N: ..."} in its place.
// stdin is read with read(2) in chunks, and a read error ends the stream as end of input
// does; output is flushed whenever no further complete line is already buffered (so an
// interactive client gets each answer before it sends the next request) and whenever
// kJsonlOutputBytes have piled up.
template <class Handle>
void jsonl_stream(Handle&& handle) {
  std::string in;  // unread input: in[pos, in.size())
  std::size_t pos = 0;
  std::string out;
  std::size_t number = 0;
  auto answer = [&](std::string_view line) {
    ++number;
    const std::size_t mark = out.size();
    try {
      handle(line, out);
    } catch (const std::exception& e) {
      out.resize(mark);
      std::string message = e.what();
      if (dynamic_cast<const Json::parse_error*>(&e) != nullptr) message = "invalid JSON";
      out += Json{{"error", "line " + std::to_string(number) + ": " + message}}.dump();
    }
    out += '\n';
    if (out.size() >= kJsonlOutputBytes) flush_out(out);
  };
  for (;;) {
    for (std::size_t nl; (nl = in.find('\n', pos)) != std::string::npos; pos = nl + 1) {
      answer(std::string_view(in).substr(pos, nl - pos));
    }
    in.erase(0, pos);
    pos = 0;
    flush_out(out);  // nothing complete is buffered: answer before waiting for more
    const std::size_t have = in.size();
    in.resize(have + kJsonlReadBytes);
    const ssize_t got = ::read(STDIN_FILENO, in.data() + have, kJsonlReadBytes);
    in.resize(have + static_cast<std::size_t>(std::max<ssize_t>(got, 0)));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
  }
  if (!in.empty()) answer(in);
  flush_out(out);
}

void print_line(const Json& j) { std::printf("%s\n", j.dump().c_str()); }

// CLI11 reads an argument such as "-." or "-[+]" as an unknown short option. Commands that
// take CODE allow extras and accept one such argument as the program; anything else left
// over is an error.
void take_code_from_extras(const CLI::App& cmd, const CLI::Option& code_option, std::string& code) {
  std::vector<std::string> extras = cmd.remaining();
  extras.erase(std::remove(extras.begin(), extras.end(), "--"), extras.end());
  if (extras.empty()) return;
  const std::string& first = extras[0];
  const bool option_like =
      first.size() > 1 && first[0] == '-' &&
      (std::isalpha(static_cast<unsigned char>(first[1])) ||
       (first[1] == '-' && first.size() > 2 && std::isalpha(static_cast<unsigned char>(first[2]))));
  if (extras.size() == 1 && code_option.count() == 0 && !option_like) {
    code = first;
    return;
  }
  throw UsageError("unexpected argument '" + first + "'");
}

// --- bf run ------------------------------------------------------------------------------

struct RunArgs {
  std::string code;
  std::string input;
  std::int64_t base = bf::kDefaultBase;
  std::string max_steps = std::to_string(bf::kDefaultMaxSteps);
  bool require_correct_syntax = false;
  double timeout_s = 0;
  bool jsonl = false;
};

Json run_request(const Json& req, double timeout_s) {
  if (!req.is_object()) throw UsageError("expected a JSON object");
  if (!req.contains("code")) throw UsageError("missing \"code\"");
  bf::RunOptions options;
  options.timeout_s = timeout_s;
  const std::string code = json_string(req.at("code"), "code");
  Cells input;
  if (req.contains("input")) input = json_cells(req.at("input"), "input");
  if (req.contains("base")) options.base = json_int(req.at("base"), "base");
  if (req.contains("max_steps")) {
    const Json& m = req.at("max_steps");
    options.max_steps = m.is_null() ? std::nullopt : std::optional<std::int64_t>(json_int(m, "max_steps"));
  }
  if (req.contains("require_correct_syntax")) {
    options.require_correct_syntax = json_bool(req.at("require_correct_syntax"), "require_correct_syntax");
  }
  Cells init_memory;
  if (req.contains("init_memory")) init_memory = json_cells(req.at("init_memory"), "init_memory");
  bf::validate(options);
  return run_json(bf::evaluate(code, input, options, init_memory));
}

void add_run(CLI::App& bf) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = bf.add_subcommand("run",
                                    "Run one BF program (or a --jsonl stream) and print "
                                    "output, success, failure_reason, steps, memory");
  CLI::Option* code = run->add_option("code", args->code,
                                      "Program text, or @FILE (its one trailing newline is dropped); put "
                                      "options first and `--` before a program that looks like an option");
  run->add_option("--input", args->input, "Input values, comma-separated (e.g. 1,2,3)");
  add_unsigned(*run, "--base", args->base, "Cell modulus", 1)->capture_default_str();
  run->add_option("--max-steps", args->max_steps,
                  "Step limit, or 'none'. Values <= 0 keep spec §1.5's meaning (the limit is checked "
                  "after each instruction, so the first one ends the run with step-limit); only a "
                  "malformed number is refused")
      ->capture_default_str();
  run->add_flag("--require-correct-syntax", args->require_correct_syntax,
                "Fail with syntax-error on unmatched brackets");
  add_real(*run, "--timeout", args->timeout_s, "Wall-clock limit in seconds (0: none)", 0)->capture_default_str();
  run->add_flag("--jsonl", args->jsonl, "Read {code,input,base,max_steps,require_correct_syntax} lines from stdin");
  run->allow_extras();
  run->callback([args, code, run] {
    take_code_from_extras(*run, *code, args->code);
    const bool have_code = code->count() > 0 || !args->code.empty();
    if (args->jsonl) {
      if (have_code) throw UsageError("bf run: give CODE or --jsonl, not both");
      jsonl_stream([&](std::string_view line, std::string& out) {
        out += run_request(parse_line(line), args->timeout_s).dump();
      });
      return;
    }
    if (!have_code) throw UsageError("bf run: CODE (or --jsonl) is required");
    bf::RunOptions options;
    options.base = args->base;
    options.max_steps = parse_max_steps(args->max_steps);
    options.require_correct_syntax = args->require_correct_syntax;
    options.timeout_s = args->timeout_s;
    bf::validate(options);
    const Cells input = parse_int_list(args->input, "--input");
    print_line(run_json(bf::evaluate(load_code(args->code), input, options)));
  });
}

// --- bf score ----------------------------------------------------------------------------

struct ScoreArgs {
  std::string task;
  std::string variant = "paper";
  std::string code;
  bool jsonl = false;
};

// Scorers built on first use, one per (task, variant). The last one used is found without
// a lookup (a stream usually scores many programs on one task).
class ScorerCache {
 public:
  bf::Scorer& get(std::string_view task, bf::Variant variant) {
    if (last_ != nullptr && last_variant_ == variant && last_task_ == task) return *last_;
    auto it = scorers_.find(std::make_pair(std::string(task), variant));
    if (it == scorers_.end()) {
      auto scorer = std::make_unique<bf::Scorer>(bf::make_task(std::string(task), variant));
      it = scorers_.emplace(std::make_pair(std::string(task), variant), std::move(scorer)).first;
    }
    last_ = it->second.get();
    last_task_ = it->first.first;
    last_variant_ = variant;
    return *last_;
  }

 private:
  std::map<std::pair<std::string, bf::Variant>, std::unique_ptr<bf::Scorer>> scorers_;
  bf::Scorer* last_ = nullptr;  // the scorer of (last_task_, last_variant_)
  std::string_view last_task_;  // views the key in scorers_, which never moves
  bf::Variant last_variant_ = bf::Variant::kPaper;
};

void add_score(CLI::App& bf) {
  auto args = std::make_shared<ScoreArgs>();
  CLI::App* score = bf.add_subcommand("score", "Score a program on a task: total_reward, correct, reason");
  score->add_option("--task", args->task, "Task name (see `ringrl bf tasks`)");
  score->add_option("--variant", args->variant, "paper | simplify")->capture_default_str();
  CLI::Option* code = score->add_option("code", args->code, "Program text, or @FILE");
  score->add_flag("--jsonl", args->jsonl, "Read {task,variant,code} lines from stdin");
  score->allow_extras();
  score->callback([args, code, score] {
    take_code_from_extras(*score, *code, args->code);
    const bool have_code = code->count() > 0 || !args->code.empty();
    if (args->jsonl) {
      if (have_code) throw UsageError("bf score: give CODE or --jsonl, not both");
      ScorerCache cache;
      ScoreLineWriter writer;
      std::vector<FlatMember> members;
      jsonl_stream([&](std::string_view line, std::string& out) {
        // Fast path: a flat object whose task and code are strings (the common request).
        if (parse_flat_object(line, &members)) {
          const FlatMember* task = find_member(members, "task");
          const FlatMember* code = find_member(members, "code");
          const FlatMember* variant = find_member(members, "variant");
          if (task != nullptr && !task->is_null && code != nullptr && !code->is_null) {
            const bf::Variant v = variant != nullptr && !variant->is_null
                                      ? bf::parse_variant(std::string(variant->value))
                                      : bf::Variant::kPaper;
            writer.append(out, cache.get(task->value, v).score(code->value));
            return;
          }
        }
        const Json req = parse_line(line);
        if (!req.is_object()) throw UsageError("expected a JSON object");
        if (!req.contains("task")) throw UsageError("missing \"task\"");
        if (!req.contains("code")) throw UsageError("missing \"code\"");
        const bf::Variant variant = req.contains("variant") && !req.at("variant").is_null()
                                        ? bf::parse_variant(json_string(req.at("variant"), "variant"))
                                        : bf::Variant::kPaper;
        bf::Scorer& scorer = cache.get(json_string(req.at("task"), "task"), variant);
        writer.append(out, scorer.score(json_string(req.at("code"), "code")));
      });
      return;
    }
    if (args->task.empty()) throw UsageError("bf score: --task is required");
    if (!have_code) throw UsageError("bf score: CODE (or --jsonl) is required");
    bf::Scorer scorer = bf::make_task(args->task, bf::parse_variant(args->variant));
    print_line(score_json(scorer.score(load_code(args->code))));
  });
}

// --- bf cases / bf tasks -----------------------------------------------------------------

void add_cases(CLI::App& bf) {
  auto task = std::make_shared<std::string>();
  auto variant = std::make_shared<std::string>("paper");
  CLI::App* cases = bf.add_subcommand("cases",
                                      "Print a task's test cases as JSON "
                                      "[[input, output], ...] in scoring order");
  cases->add_option("--task", *task, "Task name")->required();
  cases->add_option("--variant", *variant, "paper | simplify (cases are the same)")->capture_default_str();
  cases->callback([task, variant] {
    bf::parse_variant(*variant);
    const bf::Task t = bf::make_task_cases(*task);
    Json list = Json::array();
    for (const bf::TestCase& c : t.cases) list.push_back(Json::array({c.input, c.output}));
    print_line(list);
  });
}

void add_tasks(CLI::App& bf) {
  auto json = std::make_shared<bool>(false);
  CLI::App* tasks = bf.add_subcommand("tasks", "List every task: name, base, cases, description");
  tasks->add_flag("--json", *json, "One JSON object per task");
  tasks->callback([json] {
    for (const bf::TaskInfo& t : bf::task_table()) {
      if (*json) {
        print_line(Json{{"name", std::string(t.name)},
                        {"base", t.base},
                        {"cases", t.num_cases},
                        {"paper", t.paper},
                        {"description", std::string(t.description)}});
      } else {
        std::printf("%-19s base %3lld  %3zu cases  %s%s\n", std::string(t.name).c_str(), static_cast<long long>(t.base),
                    t.num_cases, std::string(t.description).c_str(), t.paper ? "" : "  [not in paper]");
      }
    }
  });
}

// --- bench bf ----------------------------------------------------------------------------

void add_bench(CLI::App& bench) {
  auto options = std::make_shared<bench::BfBenchOptions>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = bench.add_subcommand("bf",
                                       "Random 100-token programs scored per second on one core, and raw BF "
                                       "instructions per second on long-running programs");
  cmd->add_flag("--json", *json, "Print one JSON object");
  cmd->add_option("--task", options->task, "Task to score on")->capture_default_str();
  add_unsigned(*cmd, "--programs", options->programs, "Random programs to score", 1)->capture_default_str();
  add_unsigned(*cmd, "--seed", options->seed, "Program generator seed")->capture_default_str();
  cmd->add_flag("--baseline", options->baseline,
                "Also score programs with scripts/bf_reference.py (Python) for the speed-up");
  add_unsigned(*cmd, "--baseline-programs", options->baseline_programs, "Programs given to the Python reference")
      ->capture_default_str();
  cmd->add_option("--python", options->python, "Python interpreter")->capture_default_str();
  cmd->add_option("--reference", options->reference_script, "Path of bf_reference.py");
  auto no_cli = std::make_shared<bool>(false);
  cmd->add_flag("--no-cli", *no_cli, "Skip timing the same programs through `ringrl bf score --jsonl`");
  cmd->callback([options, json, no_cli] {
    if (!*no_cli) options->cli = sibling_executable("ringrl");
    const bench::BfBenchReport r = bench::run_bf_bench(*options);
    Json j;
    j["bench"] = "bf";
    j["task"] = options->task;
    j["programs"] = options->programs;
    j["programs_per_s"] = r.programs_per_s;
    j["step_limited_fraction"] = r.step_limited_fraction;
    j["instructions_per_s"] = r.instructions_per_s;
    j["plain_instructions_per_s"] = r.plain_instructions_per_s;
    if (r.cli_programs_per_s) {
      j["cli_programs_per_s"] = *r.cli_programs_per_s;
      j["cli_cpu_programs_per_s"] = *r.cli_cpu_programs_per_s;
      j["in_process_over_cli"] = r.programs_per_s / *r.cli_programs_per_s;
    }
    if (r.baseline_programs_per_s) {
      j["baseline_programs"] = std::min(options->baseline_programs, options->programs);
      j["baseline_programs_per_s"] = *r.baseline_programs_per_s;
      j["subset_programs_per_s"] = *r.subset_programs_per_s;
      j["speedup"] = *r.speedup;
      j["baseline_mismatches"] = *r.baseline_mismatches;
    }
    if (*json) {
      print_line(j);
      return;
    }
    std::printf("bf scorer (%s, paper settings, 1 core): %.0f programs/s (%.1f%% step-limited)\n",
                options->task.c_str(), r.programs_per_s, 100.0 * r.step_limited_fraction);
    std::printf("bf long-running programs: %.3g instructions/s fast, %.3g plain\n", r.instructions_per_s,
                r.plain_instructions_per_s);
    if (r.cli_programs_per_s) {
      std::printf(
          "ringrl bf score --jsonl (one new process, the same programs): %.0f programs/s wall, %.0f/s CPU; "
          "in-process is %.2fx\n",
          *r.cli_programs_per_s, *r.cli_cpu_programs_per_s, r.programs_per_s / *r.cli_programs_per_s);
    }
    if (r.baseline_programs_per_s) {
      std::printf(
          "python reference: %.0f programs/s; C++ on the same programs %.0f/s; "
          "speed-up %.0fx; %zu reward mismatches\n",
          *r.baseline_programs_per_s, *r.subset_programs_per_s, *r.speedup, *r.baseline_mismatches);
    }
  });
}

void add_bf_commands(CommandTree& tree) {
  CLI::App& root = tree.root;
  CLI::App& bench = tree.bench;
  CLI::App* bf = root.add_subcommand("bf", "The BF program-synthesis environment");
  bf->require_subcommand(1);
  add_run(*bf);
  add_score(*bf);
  add_cases(*bf);
  add_tasks(*bf);
  add_bench(bench);
}

const CommandFamily kRegistration(kOrderBf, add_bf_commands);

}  // namespace
}  // namespace ringrl::app
