#include "bench/forked_rates.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>
#include <vector>

namespace ringrl::bench {

double sum_of_forked_rates(std::uint32_t n, const std::function<double(std::uint32_t)>& measure, const char* what) {
  std::vector<pid_t> pids;
  std::vector<int> fds;
  for (std::uint32_t i = 0; i < n; ++i) {
    int p[2];
    if (pipe(p) != 0) throw std::system_error(errno, std::generic_category(), std::string(what) + ": pipe");
    const pid_t pid = fork();
    if (pid < 0) throw std::system_error(errno, std::generic_category(), std::string(what) + ": fork");
    if (pid == 0) {
      close(p[0]);
      double rate = 0;
      try {
        rate = measure(i);
      } catch (...) {
        rate = 0;
      }
      const ssize_t w = write(p[1], &rate, sizeof rate);
      _exit(w == static_cast<ssize_t>(sizeof rate) ? 0 : 1);
    }
    close(p[1]);
    pids.push_back(pid);
    fds.push_back(p[0]);
  }
  double total = 0;
  for (std::size_t i = 0; i < pids.size(); ++i) {
    double rate = 0;
    if (read(fds[i], &rate, sizeof rate) != static_cast<ssize_t>(sizeof rate)) rate = 0;
    close(fds[i]);
    while (waitpid(pids[i], nullptr, 0) < 0 && errno == EINTR) {
    }
    total += rate;
  }
  return total;
}

}  // namespace ringrl::bench
