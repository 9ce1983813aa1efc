// Helpers of the `ringrl train ...` end-to-end tests: run the real binary in its own process
// group, capture its output, read the run directory's results.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace ringrl::testing {

struct RunResult {
  int status = -1;
  std::string out, err;
};

// Runs the binary with `args` in its own process group; returns status and output.
inline pid_t start(const std::vector<std::string>& args, int* out_fd, int* err_fd) {
  std::vector<std::string> all{RINGRL_BINARY};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  int o[2], e[2];
  if (pipe(o) != 0 || pipe(e) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(o[1], 1);
    dup2(e[1], 2);
    close(o[0]);
    close(e[0]);
    execv(argv[0], argv.data());
    _exit(127);
  }
  setpgid(pid, pid);
  close(o[1]);
  close(e[1]);
  *out_fd = o[0];
  *err_fd = e[0];
  return pid;
}

inline std::string slurp(int fd) {
  std::string s;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<std::size_t>(n));
  close(fd);
  return s;
}

inline RunResult run(const std::vector<std::string>& args) {
  RunResult r;
  int o = -1, e = -1;
  const pid_t pid = start(args, &o, &e);
  std::thread te([&] { r.err = slurp(e); });
  r.out = slurp(o);
  te.join();
  waitpid(pid, &r.status, 0);
  return r;
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
