// `ringrl profile learner` and `ringrl bench npe`.
#pragma once

#include <CLI/CLI.hpp>

namespace ringrl::app {
void add_profile_and_npe_bench_commands(CLI::App& root, CLI::App& bench);
}
