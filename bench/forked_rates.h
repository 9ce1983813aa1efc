// Measures a per-process rate in several processes at once and adds them up: the actor-only
// ceilings of `bench npe` and `bench hiro` run N actors' work side by side, as N actor
// processes would, with no transport.
#pragma once

#include <cstdint>
#include <functional>

namespace ringrl::bench {

/// Forks `n` children; child i returns measure(i) (a rate, e.g. items per second) to the
/// parent through a pipe and exits. Returns the sum of the rates; a child that fails or throws
/// counts as 0. `what` names the benchmark in errors. Throws std::system_error with errno when
/// pipe or fork fails. Call it from a single-threaded process (it forks).
double sum_of_forked_rates(std::uint32_t n, const std::function<double(std::uint32_t)>& measure, const char* what);

}  // namespace ringrl::bench
