#include "common/supervisor.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/spawn.h"

namespace ringrl {
namespace {

constexpr auto kReapPoll = std::chrono::milliseconds(5);

}  // namespace

std::string self_executable() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::system_error(errno, std::generic_category(), "readlink /proc/self/exe");
  buf[n] = '\0';
  return buf;
}

std::string sibling_executable(std::string_view name) {
  const std::string self = self_executable();
  return self.substr(0, self.rfind('/') + 1) + std::string(name);
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return fmt::format("wait status {:#x}", status);
}

Supervisor::Supervisor(RunSegment& segment, SupervisorOptions options)
    : segment_(segment), options_(std::move(options)), children_(segment.num_actors()) {
  if (options_.executable.empty()) options_.executable = self_executable();
}

Supervisor::~Supervisor() {
  try {
    stop();
  } catch (...) {
    // stop() only logs; nothing may escape a destructor.
  }
}

void Supervisor::start() {
  stopped_ = false;
  for (std::uint32_t i = 0; i < children_.size(); ++i) spawn(i);
}

void Supervisor::spawn(std::uint32_t slot) {
  SpawnOptions o;
  o.executable = options_.executable;
  if (options_.args) o.args = options_.args(slot);
  o.death_signal = SIGKILL;
  o.nice = options_.nice ? options_.nice(slot) : 0;
  ActorSlot& s = segment_.slot(slot);
  s.state.store(static_cast<std::uint32_t>(ActorState::kStarting), std::memory_order_relaxed);  // display only
  s.heartbeat_ns.store(steady_now_ns(), std::memory_order_relaxed);  // a timestamp: only its age is read
  s.incarnation.fetch_add(1, std::memory_order_relaxed);             // a counter read as a snapshot; guards no data
  const pid_t pid = spawn_process(o);
  Child& c = children_[slot];
  c.pid = pid;
  c.started_at = std::chrono::steady_clock::now();
  s.pid.store(pid, std::memory_order_relaxed);  // informational: children_ holds the pid the supervisor uses
}

void Supervisor::on_exit(std::uint32_t slot, int status) {
  Child& c = children_[slot];
  ActorSlot& s = segment_.slot(slot);
  const pid_t pid = c.pid;
  c.pid = 0;
  s.pid.store(0, std::memory_order_relaxed);  // informational: children_ holds the pid the supervisor uses
  const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (stopped_ || (clean && segment_.stop_requested())) {
    s.state.store(static_cast<std::uint32_t>(ActorState::kExited), std::memory_order_relaxed);  // display only
    return;
  }
  // The dead producer's published records stay in its ring for the learner; a frame it had
  // reserved but not published is overwritten, since the next writer starts at the published head.
  if (c.restarts >= options_.max_restarts) {
    c.failed = true;
    s.state.store(static_cast<std::uint32_t>(ActorState::kFailed), std::memory_order_relaxed);  // display only
    spdlog::error("actor {} (pid {}) ended with {}; it used all {} restarts and stays down", slot, pid,
                  describe_wait_status(status), options_.max_restarts);
    return;
  }
  auto delay = options_.restart_backoff * (1u << std::min<std::uint32_t>(c.restarts, 16));
  if (delay > options_.max_restart_backoff) delay = options_.max_restart_backoff;
  c.restart_at = std::chrono::steady_clock::now() + delay;
  ++c.restarts;
  s.restarts.store(c.restarts, std::memory_order_relaxed);  // a counter for display; c.restarts is the truth
  s.state.store(static_cast<std::uint32_t>(ActorState::kExited), std::memory_order_relaxed);  // display only
  spdlog::warn("actor {} (pid {}) ended with {}; restart {}/{} in {} ms", slot, pid, describe_wait_status(status),
               c.restarts, options_.max_restarts, delay.count());
}

std::uint32_t Supervisor::poll() {
  const auto now = std::chrono::steady_clock::now();
  std::uint32_t running = 0;
  for (std::uint32_t i = 0; i < children_.size(); ++i) {
    Child& c = children_[i];
    if (c.pid > 0) {
      int status = 0;
      const pid_t r = waitpid(c.pid, &status, WNOHANG);
      if (r == c.pid) {
        on_exit(i, status);
      } else if (options_.heartbeat_timeout.count() > 0 && !stopped_) {
        const std::uint64_t hb = segment_.slot(i).heartbeat_ns.load(std::memory_order_relaxed);  // age only
        const auto age = std::chrono::nanoseconds(steady_now_ns() - hb);
        if (age > options_.heartbeat_timeout) {
          spdlog::warn("actor {} (pid {}) sent no heartbeat for {} ms; killing it", i, c.pid,
                       std::chrono::duration_cast<std::chrono::milliseconds>(age).count());
          kill(c.pid, SIGKILL);
        }
      }
    }
    if (c.pid == 0 && !c.failed && !stopped_ && c.restart_at != std::chrono::steady_clock::time_point{} &&
        now >= c.restart_at) {
      c.restart_at = {};
      spawn(i);
    }
    if (c.pid > 0) ++running;
  }
  return running;
}

void Supervisor::stop() {
  if (stopped_) return;
  stopped_ = true;
  segment_.request_stop();
  auto reap_until = [&](std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      bool any = false;
      for (std::uint32_t i = 0; i < children_.size(); ++i) {
        Child& c = children_[i];
        if (c.pid <= 0) continue;
        int status = 0;
        const pid_t r = waitpid(c.pid, &status, WNOHANG);
        if (r == c.pid || (r < 0 && errno == ECHILD)) {
          on_exit(i, status);
        } else {
          any = true;
        }
      }
      if (!any || std::chrono::steady_clock::now() >= deadline) return !any;
      std::this_thread::sleep_for(kReapPoll);
    }
  };
  if (reap_until(std::chrono::steady_clock::now() + options_.stop_grace)) return;
  for (auto& c : children_)
    if (c.pid > 0) kill(c.pid, SIGTERM);
  if (reap_until(std::chrono::steady_clock::now() + options_.stop_grace)) return;
  for (auto& c : children_)
    if (c.pid > 0) kill(c.pid, SIGKILL);
  reap_until(std::chrono::steady_clock::time_point::max());
}

std::uint32_t Supervisor::restarts(std::uint32_t slot) const { return children_.at(slot).restarts; }
std::uint32_t Supervisor::total_restarts() const {
  std::uint32_t n = 0;
  for (const auto& c : children_) n += c.restarts;
  return n;
}
bool Supervisor::failed(std::uint32_t slot) const { return children_.at(slot).failed; }
bool Supervisor::all_failed() const {
  for (const auto& c : children_)
    if (!c.failed) return false;
  return true;
}
pid_t Supervisor::pid(std::uint32_t slot) const { return children_.at(slot).pid; }

}  // namespace ringrl
