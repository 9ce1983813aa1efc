// Process-wide signal handling: orderly shutdown and last-resort cleanup.
//
// install_shutdown_handlers() makes SIGINT, SIGTERM and SIGHUP set a flag that long-running
// loops poll with shutdown_requested(); they then stop actors, drain rings and let RAII release
// the segment. The first such signal also unlinks every registered shared-memory name at once
// (the owner and its actors keep their mappings: nothing attaches to a stopping run), so that a
// SIGKILL that follows before the orderly stop ends leaves no /dev/shm entry. A second such
// signal, or a crash signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) after
// install_crash_handlers(), unlinks them too (async-signal-safe calls) and ends the process
// with the usual signal status. request_shutdown() from code only sets the flag.
//
// The emergency table holds at most kMaxEmergencyNames names; register/unregister are called
// by the segment owner from normal code (not from handlers) and are thread-safe.
#pragma once

#include <cstddef>

namespace ringrl {

inline constexpr std::size_t kMaxEmergencyNames = 16;

void install_shutdown_handlers();
void install_crash_handlers();
/// True once SIGINT, SIGTERM or SIGHUP arrived (after install_shutdown_handlers()).
bool shutdown_requested() noexcept;
/// The signal that requested shutdown, or 0.
int shutdown_signal() noexcept;
/// For tests and for a learner that ends its run on its own: clears the request.
void clear_shutdown_request() noexcept;
/// Asks for shutdown from normal code, as if `sig` had arrived.
void request_shutdown(int sig) noexcept;

/// Names (as given to shm_unlink, without the leading '/') unlinked by the emergency path.
void register_emergency_unlink(const char* shm_name);
void unregister_emergency_unlink(const char* shm_name);

}  // namespace ringrl
