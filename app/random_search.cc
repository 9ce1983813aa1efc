// `ringrl train random`: the uniform random program-search baseline (spec brain_coder §6.5).
#include "app/cli_numbers.h"
#include "app/commands.h"
#include "sweeps/train_spread.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "common/runfiles/results_jsonl.h"
#include "envs/bf/scorer.h"

namespace ringrl::app {
using namespace ringrl::sweeps;  // child runs, the spread, tuning grids
namespace {

constexpr char kOps[] = "><+-[].,";
constexpr int kNumOps = 8;

struct RandomCli {
  std::string task, run_dir;
  std::uint64_t max_npe = 20000000;
  std::uint32_t repetitions = 1;
  std::uint64_t seed = 0;
  int length = 100;
};

void run_random(const RandomCli& c) {
  refuse_several_ranks("train random");
  if (c.task.empty()) throw UsageError("no task given: expected --task NAME (see `ringrl bf tasks`)");
  if (c.run_dir.empty()) throw UsageError("--run-dir DIR is required");
  if (c.max_npe == 0) throw UsageError("--max-npe 0: random search needs a finite budget");
  if (c.length < 1) throw UsageError(fmt::format("--length {}: expected at least 1", c.length));
  bf::ScoreOptions so = bf::ScoreOptions::for_variant(bf::Variant::kPaper);
  so.max_code_length = c.length;
  bf::Scorer scorer = bf::make_task(c.task, so);
  const std::filesystem::path results = std::filesystem::path(c.run_dir) / runfiles::kResultsFileName;
  std::filesystem::create_directories(c.run_dir);
  const auto done = runfiles::completed_values(runfiles::read_json_lines(results));
  std::string code(static_cast<std::size_t>(c.length), '>');
  for (std::uint32_t rep = 0; rep < c.repetitions; ++rep) {
    if (done.count(rep) != 0) continue;
    std::mt19937_64 rng(c.seed * 1000003ULL + rep);
    std::uniform_int_distribution<int> op(0, kNumOps - 1);
    const auto t0 = std::chrono::steady_clock::now();
    std::uint64_t npe = 0;
    double best = -10.0;
    std::string best_code, solution;
    while (npe < c.max_npe) {
      for (auto& ch : code) ch = kOps[op(rng)];
      const bf::ScoreResult r = scorer.score(code);
      ++npe;
      if (r.total_reward > best) {
        best = r.total_reward;
        best_code = code;
      }
      if (r.correct) {
        solution = code;
        break;
      }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    runfiles::append_json_line(results, {{"found_solution", !solution.empty()},
                                         {"npe", npe},
                                         {"code_solution", solution},
                                         {"best_reward", best},
                                         {"best_code", best_code},
                                         {"num_batches", npe},
                                         {"task", c.task},
                                         {"max_npe", c.max_npe},
                                         {"global_rep", rep},
                                         {"max_global_repetitions", c.repetitions},
                                         {"batch_size", 1},
                                         {"mode", "random"},
                                         {"seconds", secs}});
    std::printf("repetition %u: %s  npe=%llu  %.1f s  best_reward=%.4f\n", rep,
                solution.empty() ? "not solved" : "SOLVED", static_cast<unsigned long long>(npe), secs, best);
    std::fflush(stdout);
  }
}

void add_random_search_command(CommandTree& tree) {
  CLI::App& train = tree.train;
  auto c = std::make_shared<RandomCli>();
  CLI::App* cmd = train.add_subcommand("random", "Baseline: uniform random program search (spec §6.5)");
  cmd->add_option("--task", c->task, "BF task")->required();
  add_unsigned(*cmd, "--max-npe", c->max_npe, "Programs per repetition")->capture_default_str();
  add_unsigned(*cmd, "--repetitions", c->repetitions, "Independent repetitions", 1)->capture_default_str();
  add_unsigned(*cmd, "--seed", c->seed, "Base seed")->capture_default_str();
  add_unsigned(*cmd, "--length", c->length, "Program length (timestep_limit)", 1)->capture_default_str();
  cmd->add_option("--run-dir", c->run_dir, "Run directory")->required();
  cmd->callback([c] { run_random(*c); });
}

const CommandFamily kRegistration(kOrderTrain, add_random_search_command);

}  // namespace
}  // namespace ringrl::app
