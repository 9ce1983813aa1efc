// Helpers of the tests that run `mpirun ... ringrl ...` on localhost: start a command in its own
// process group, capture its output, read run directories, find processes.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
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

// A fresh directory for the running test: TMP/<prefix>-<test name>-<pid>, removed first.
inline fs::path test_dir(const std::string& prefix) {
  const fs::path d = fs::temp_directory_path() /
                     (prefix + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
                      std::to_string(getpid()));
  fs::remove_all(d);
  return d;
}

// Runs `job` (an mpirun line whose ranks use `dir`/node-{rank} as their node directory) with a
// file where rank 2's node directory should be, and checks that the job ended at once, exit 2,
// in one error line naming rank 2 and the directory, leaving no process.
inline void expect_refused_for_node_directory(const fs::path& dir, const std::vector<std::string>& job) {
  fs::create_directories(dir);
  std::ofstream(dir / "node-2") << "in the way";
  const auto t0 = std::chrono::steady_clock::now();
  const Outcome r = run(job);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2) << r.err;
  EXPECT_EQ(count(r.err, "ringrl: error:"), 1u) << r.err;
  EXPECT_NE(r.err.find("ringrl: error: rank 2 on "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("its node directory " + (dir / "node-2").string()), std::string::npos) << r.err;
  EXPECT_EQ(processes_naming({dir.string()}).size(), 0u);
}

}  // namespace ringrl::testing
