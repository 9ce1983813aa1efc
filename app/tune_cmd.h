// `ringrl tune`: the spec's hyper-parameter grids (brain_coder §6.3) as separate trials.
#pragma once

#include <CLI/CLI.hpp>

namespace ringrl::app {
void add_tune_command(CLI::App& root);
}
