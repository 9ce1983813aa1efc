#include "common/signals.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace ringrl {
namespace {

constexpr std::size_t kMaxNameBytes = 128;
constexpr int kShutdownSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

std::atomic<int> g_shutdown_signal{0};

// Emergency table: a slot is in use when its flag is 1; names are written before the flag
// is set (release) and read by the handler after it sees the flag (acquire).
struct EmergencySlot {
  std::atomic<int> used{0};
  char name[kMaxNameBytes + 2] = {};  // "/" + name + NUL
};
EmergencySlot g_slots[kMaxEmergencyNames];
std::mutex g_slots_mu;  // guards writers of g_slots; the handler only reads

// Runs inside a signal handler, so it may only make async-signal-safe calls. That is why it
// calls ::shm_unlink on a prepared "/name" and not boost::interprocess::shared_memory_object::
// remove(), which the segment uses everywhere else: remove() builds a std::string (malloc, not
// async-signal-safe: a crash inside malloc would deadlock here) and catches exceptions.
void emergency_unlink_all() noexcept {
  for (auto& slot : g_slots)
    if (slot.used.load(std::memory_order_acquire) == 1) shm_unlink(slot.name);  // acquire: the name is complete
}

// Ends the process as killed by `sig`. The handler runs with `sig` blocked, so it is unblocked
// after restoring the default action; raise() then terminates at once with the signal status a
// parent and a shell expect. _exit() is the fallback should the signal somehow not end it.
[[noreturn]] void die_with(int sig) noexcept {
  signal(sig, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  raise(sig);
  _exit(128 + sig);
}

void on_shutdown_signal(int sig) {
  int expected = 0;
  // acq_rel: the first signal's store is seen by the poller's acquire load; a later one sees it.
  if (!g_shutdown_signal.compare_exchange_strong(expected, sig, std::memory_order_acq_rel, std::memory_order_acquire)) {
    // Second request: the orderly path is not finishing; clean up and go.
    emergency_unlink_all();
    die_with(sig);
  }
  // First request: the names go now, while the process and its actors keep their mappings for
  // the orderly stop, so that a SIGKILL that follows (mpirun's comes 1 s after its SIGTERM)
  // cannot leave one in /dev/shm.
  emergency_unlink_all();
}

void on_crash_signal(int sig) {
  emergency_unlink_all();
  die_with(sig);
}

void install(const int* sigs, std::size_t n, void (*handler)(int)) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (std::size_t i = 0; i < n; ++i) sigaction(sigs[i], &sa, nullptr);
}

}  // namespace

void install_shutdown_handlers() { install(kShutdownSignals, std::size(kShutdownSignals), on_shutdown_signal); }

void install_crash_handlers() { install(kCrashSignals, std::size(kCrashSignals), on_crash_signal); }

bool shutdown_requested() noexcept { return g_shutdown_signal.load(std::memory_order_acquire) != 0; }
int shutdown_signal() noexcept { return g_shutdown_signal.load(std::memory_order_acquire); }
void clear_shutdown_request() noexcept { g_shutdown_signal.store(0, std::memory_order_release); }
void request_shutdown(int sig) noexcept {
  int expected = 0;
  // Only the first request is kept; release so a poller that sees it sees what came before.
  g_shutdown_signal.compare_exchange_strong(expected, sig, std::memory_order_acq_rel, std::memory_order_relaxed);
}

void register_emergency_unlink(const char* shm_name) {
  std::lock_guard<std::mutex> lock(g_slots_mu);
  for (auto& slot : g_slots) {
    if (slot.used.load(std::memory_order_relaxed) != 0) continue;
    slot.name[0] = '/';
    std::strncpy(slot.name + 1, shm_name, kMaxNameBytes);
    slot.name[kMaxNameBytes + 1] = '\0';
    slot.used.store(1, std::memory_order_release);
    return;
  }
  // Table full: the orderly path still unlinks; only the crash path misses this name.
}

void unregister_emergency_unlink(const char* shm_name) {
  std::lock_guard<std::mutex> lock(g_slots_mu);
  for (auto& slot : g_slots) {
    if (slot.used.load(std::memory_order_relaxed) == 1 && std::strcmp(slot.name + 1, shm_name) == 0) {
      slot.used.store(0, std::memory_order_release);
      return;
    }
  }
}

}  // namespace ringrl
