// Running a command with a given stdin and capturing stdout, stderr and the exit status
// (for the tests of `ringrl bf ...` and of scripts/bf_reference.py).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace ringrl::bf::testing {

struct CommandResult {
  int status = -1;  // exit status
  std::string out;
  std::string err;
};

/// `text` in single quotes for the shell.
inline std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

inline std::string temp_path(const char* tag) {
  std::string path = std::string("/tmp/ringrl-bf-test-") + tag + "-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd >= 0) close(fd);
  return path;
}

/// Runs `command` (a shell command line) with `input` on stdin.
inline CommandResult run_command(const std::string& command, const std::string& input = "") {
  const std::string in_path = temp_path("in");
  const std::string err_path = temp_path("err");
  {
    std::ofstream in(in_path, std::ios::binary);
    in << input;
  }
  CommandResult result;
  FILE* pipe = popen((command + " < " + in_path + " 2> " + err_path).c_str(), "r");
  if (pipe != nullptr) {
    char buffer[4096];
    for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
      result.out.append(buffer, got);
    }
    const int status = pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::ifstream err(err_path, std::ios::binary);
  std::ostringstream text;
  text << err.rdbuf();
  result.err = text.str();
  std::remove(in_path.c_str());
  std::remove(err_path.c_str());
  return result;
}

/// Runs `ringrl <args>`.
inline CommandResult run_ringrl(const std::string& args, const std::string& input = "") {
  return run_command(std::string(RINGRL_BINARY) + " " + args, input);
}

}  // namespace ringrl::bf::testing
