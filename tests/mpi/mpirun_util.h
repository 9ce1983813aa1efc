// Helpers of the tests that run `mpirun ... ringrl ...` on localhost: start a command in its own
// process group, capture its output, read run directories, find processes.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/common/child_process.h"

namespace ringrl::testing {

namespace fs = std::filesystem;

using Outcome = ChildOutcome;

// mpirun on localhost, oversubscribed (2 cores here), as root where the tests run as root.
inline std::vector<std::string> mpirun(int np) {
  std::vector<std::string> a = {RINGRL_MPIEXEC, "--oversubscribe", "--mca", "btl_vader_single_copy_mechanism", "none"};
  if (geteuid() == 0) a.push_back("--allow-run-as-root");
  a.push_back("-np");
  a.push_back(std::to_string(np));
  return a;
}

inline pid_t start(std::vector<std::string> args, int* out_fd, int* err_fd) {
  return start_child(std::move(args), out_fd, err_fd);
}

inline Outcome finish(pid_t pid, int o, int e) { return finish_child(pid, o, e); }

inline Outcome run(const std::vector<std::string>& args) {
  int o = -1, e = -1;
  const pid_t pid = start(args, &o, &e);
  return finish(pid, o, e);
}

inline std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

inline std::vector<nlohmann::json> lines(const fs::path& file) {
  std::vector<nlohmann::json> v;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) v.push_back(nlohmann::json::parse(line));
  return v;
}

inline std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Processes whose command line holds every string of `needles` (only ours name the test's dir).
inline std::vector<pid_t> processes_naming(const std::vector<std::string>& needles) {
  std::vector<pid_t> pids;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = read_text(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    bool all = !cmdline.empty();
    for (const auto& n : needles) all = all && cmdline.find(n) != std::string::npos;
    if (all) pids.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return pids;
}

}  // namespace ringrl::testing
