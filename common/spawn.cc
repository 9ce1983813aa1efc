#include "common/spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <system_error>

#include "common/exit_status.h"

namespace ringrl {
namespace {

constexpr std::size_t kChildStackBytes = 256 * 1024;  // the child runs only until exec

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> p;
  p.reserve(strings.size() + 1);
  for (auto& s : strings) p.push_back(s.data());
  p.push_back(nullptr);
  return p;
}

// What the child needs, all of it built before the clone.
struct ChildPlan {
  const SpawnOptions* o;
  const char* executable;
  char** argv;
  char** envp;
  pid_t parent;
  sigset_t mask;  // the child's signal mask (empty)
};

// The child, on its own stack in the parent's memory until exec (CLONE_VM | CLONE_VFORK): it
// makes only system calls and touches no memory the parent uses afterwards.
int child_main(void* arg) {
  const ChildPlan& p = *static_cast<const ChildPlan*>(arg);
  // Every signal is blocked (the parent blocked them all before the clone): default dispositions
  // first, so that no handler of the parent's runs here, then the mask opens.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_DFL) sigaction(sig, &dfl, nullptr);
  }
  if (p.o->own_process_group) setpgid(0, 0);
  if (p.o->nice > 0) (void)nice(p.o->nice);  // raising one's own nice value is always permitted
  prctl(PR_SET_PDEATHSIG, p.o->death_signal);
  if (getppid() != p.parent) _exit(kExitFailure);  // the parent died before prctl took effect
  if (!p.o->log.empty()) {
    const int fd = open(p.o->log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
  }
  sigprocmask(SIG_SETMASK, &p.mask, nullptr);
  if (p.envp == nullptr)
    execv(p.executable, p.argv);
  else
    execve(p.executable, p.argv, p.envp);
  _exit(kExitExecFailed);
}

}  // namespace

pid_t spawn_process(const SpawnOptions& o) {
  std::vector<std::string> argv_storage = {o.executable};
  argv_storage.insert(argv_storage.end(), o.args.begin(), o.args.end());
  std::vector<char*> argv = pointers(argv_storage);
  std::vector<std::string> env_storage = o.environment;
  std::vector<char*> envp = pointers(env_storage);
  ChildPlan plan{&o, o.executable.c_str(), argv.data(), o.inherit_environment ? nullptr : envp.data(), getpid(), {}};
  sigemptyset(&plan.mask);
  void* stack = mmap(nullptr, kChildStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "stack for a child of " + o.executable);
  // No signal may reach a handler of this process on the child's side before it resets them.
  sigset_t all, before;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before);
  const pid_t pid = clone(child_main, static_cast<char*>(stack) + kChildStackBytes, CLONE_VM | CLONE_VFORK | SIGCHLD,
                          &plan);
  const int err = errno;
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  munmap(stack, kChildStackBytes);
  if (pid < 0) throw std::system_error(err, std::generic_category(), "start of " + o.executable);
  return pid;
}

}  // namespace ringrl
