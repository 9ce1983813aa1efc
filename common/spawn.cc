#include "common/spawn.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "common/exit_status.h"

namespace ringrl {
namespace {

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  p.reserve(strings.size() + 1);
  for (auto& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

}  // namespace

pid_t spawn_process(const SpawnOptions& o) {
  std::vector<std::string> argv_storage = {o.executable};
  argv_storage.insert(argv_storage.end(), o.args.begin(), o.args.end());
  std::vector<char*> argv = pointers(argv_storage);
  std::vector<std::string> env_storage = o.environment;
  std::vector<char*> envp = pointers(env_storage);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork of " + o.executable);
  if (pid != 0) return pid;
  // The child: only async-signal-safe calls until exec.
  if (o.own_process_group) setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, o.death_signal);
  if (getppid() != parent) _exit(kExitFailure);  // the parent died before prctl took effect
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) signal(sig, SIG_DFL);
  if (!o.log.empty()) {
    const int fd = open(o.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
  }
  if (o.inherit_environment)
    execv(o.executable.c_str(), argv.data());
  else
    execve(o.executable.c_str(), argv.data(), envp.data());
  _exit(kExitExecFailed);
}

}  // namespace ringrl
