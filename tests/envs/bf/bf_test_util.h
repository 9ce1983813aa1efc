// Helpers shared by the envs/bf tests: random programs and an engine-by-engine comparison.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "envs/bf/machine.h"

namespace ringrl::bf::testing {

inline constexpr std::string_view kOps = "><+-[].,";  // the 8 instructions

/// Uniform random program of `length` characters over `alphabet`.
inline std::string random_program(std::mt19937_64& rng, std::size_t length, std::string_view alphabet = kOps) {
  std::string code(length, ' ');
  for (char& c : code) c = alphabet[rng() % alphabet.size()];
  return code;
}

/// Random input of up to `max_length` values in [0, bound).
inline std::vector<std::int64_t> random_input(std::mt19937_64& rng, std::size_t max_length, std::int64_t bound) {
  std::vector<std::int64_t> input(rng() % (max_length + 1));
  for (std::int64_t& v : input) v = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(bound));
  return input;
}

inline RunOptions plain(RunOptions options) {
  options.engine = Engine::kPlain;
  return options;
}

/// Expects the fast engine (exact and verdict mode) to agree with the plain one.
inline void expect_engines_agree(std::string_view code, const std::vector<std::int64_t>& input,
                                 const RunOptions& options) {
  const RunResult want = evaluate(code, input, plain(options));
  const RunResult got = evaluate(code, input, options);
  const std::string where = "code '" + std::string(code) + "' base " + std::to_string(options.base) + " max_steps " +
                            (options.max_steps ? std::to_string(*options.max_steps) : "none");
  ASSERT_EQ(got.reason, want.reason) << where;
  ASSERT_EQ(got.steps, want.steps) << where;
  ASSERT_EQ(got.success, want.success) << where;
  ASSERT_EQ(got.output, want.output) << where;
  ASSERT_EQ(got.memory, want.memory) << where;
  RunOptions verdict = options;
  verdict.exact_failure_state = false;
  Machine machine(verdict);
  const RunSummary v = machine.run(code, input);
  ASSERT_EQ(v.reason, want.reason) << where << " (verdict mode)";
  ASSERT_EQ(v.steps, want.steps) << where << " (verdict mode)";
  if (v.success) {
    ASSERT_EQ(machine.output(), want.output) << where << " (verdict mode)";
  }
}

}  // namespace ringrl::bf::testing
