// `ringrl train random`: the uniform random-search baseline of spec brain_coder §6.5.
// Each repetition draws programs of T i.i.d. uniform characters over the 8 BF ops (no EOS),
// scores them with the paper settings, and stops at the first correct one or at max NPE;
// NPE = programs drawn. Results go to RUN_DIR/results.jsonl in the trainer's format.
#pragma once

#include <CLI/CLI.hpp>

namespace ringrl::app {
void add_random_search_command(CLI::App& train);
}
