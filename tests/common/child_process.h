// Helpers of the tests that run a command as a child: start it in its own process group with
// its stdout and stderr on pipes, read them to the end, wait for it.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

namespace ringrl::testing {

/// What a finished child did: its wait status and everything it wrote.
struct ChildOutcome {
  int status = -1;
  std::string out, err;
};

/// Reads `fd` to its end, then closes it.
inline std::string slurp(int fd) {
  std::string s;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<std::size_t>(n));
  close(fd);
  return s;
}

/// Starts argv[0] with `argv` in a process group of its own; its stdout and stderr are read
/// from *out_fd and *err_fd. -1 if the pipes could not be made.
inline pid_t start_child(std::vector<std::string> argv, int* out_fd, int* err_fd) {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  int o[2], e[2];
  if (pipe(o) != 0 || pipe(e) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(o[1], 1);
    dup2(e[1], 2);
    close(o[0]);
    close(e[0]);
    execv(args[0], args.data());
    _exit(127);
  }
  setpgid(pid, pid);  // also from here, so that a signal sent right after start() reaches it
  close(o[1]);
  close(e[1]);
  *out_fd = o[0];
  *err_fd = e[0];
  return pid;
}

/// Reads both pipes of a started child to their ends and waits for it.
inline ChildOutcome finish_child(pid_t pid, int out_fd, int err_fd) {
  ChildOutcome r;
  std::thread te([&] { r.err = slurp(err_fd); });
  r.out = slurp(out_fd);
  te.join();
  waitpid(pid, &r.status, 0);
  return r;
}

}  // namespace ringrl::testing
