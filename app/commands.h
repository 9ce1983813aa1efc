// The ringrl command line: each component registers its own subcommands.
//
// `root` is the top-level app, `bench` the `ringrl bench` parent. A registration function adds
// subcommands with callbacks; the callback does the work and throws ringrl::UsageError for bad
// input (printed as one line by main, exit status 2) or any std::exception for a failure
// (exit status 1).
#pragma once

#include <CLI/CLI.hpp>

namespace ringrl::app {

void add_foundation_commands(CLI::App& root, CLI::App& bench);  // demo, actor, bench ring
void add_bf_commands(CLI::App& root, CLI::App& bench);          // bf ..., bench bf
void add_env_commands(CLI::App& root, CLI::App& bench);         // env ..., bench env
void add_train_commands(CLI::App& root, CLI::App& bench);       // train, tune, profile, bench npe

}  // namespace ringrl::app
