// Helpers of the `ringrl train ...` end-to-end tests: run the real binary in its own process
// group, capture its output, read the run directory's results.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/common/child_process.h"

namespace ringrl::testing {

using RunResult = ChildOutcome;

// Runs the binary with `args` in its own process group (tests/common/child_process.h).
inline pid_t start(const std::vector<std::string>& args, int* out_fd, int* err_fd) {
  std::vector<std::string> all{RINGRL_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  return start_child(std::move(all), out_fd, err_fd);
}

inline RunResult run(const std::vector<std::string>& args) {
  int o = -1, e = -1;
  const pid_t pid = start(args, &o, &e);
  return finish_child(pid, o, e);
}

inline std::vector<nlohmann::json> results(const std::filesystem::path& dir) {
  std::vector<nlohmann::json> v;
  std::ifstream in(dir / "results.jsonl");
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) v.push_back(nlohmann::json::parse(line));
  return v;
}

}  // namespace ringrl::testing
