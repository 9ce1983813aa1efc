// ringrl: one binary, one subcommand per user task (see `ringrl --help`).
#include <cstdio>
#include <exception>
#include <system_error>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "common/errors.h"

int main(int argc, char** argv) {
  // Logs go to stderr; stdout carries results (JSON lines, tables) only.
  spdlog::set_default_logger(spdlog::stderr_color_mt("ringrl"));
  spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] %v");
  CLI::App root{"ringrl: actor-learner reinforcement learning on one machine"};
  root.require_subcommand(1);
  root.set_version_flag("--version", "ringrl 0.1.0");
  CLI::App* train =
      root.add_subcommand("train", "Train with actor processes and a learner (one subcommand per algorithm)");
  train->require_subcommand(1);
  CLI::App* profile = root.add_subcommand("profile", "Profile a component and write a Chrome trace");
  profile->require_subcommand(1);
  CLI::App* bench = root.add_subcommand("bench", "Measure throughput (ring, bf, env, npe)");
  bench->require_subcommand(1);
  ringrl::app::CommandTree tree{root, *train, *bench, *profile};
  ringrl::app::add_registered_commands(tree);

  try {
    root.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return root.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return root.exit(e);
  } catch (const CLI::Success& e) {
    return root.exit(e);  // --version
  } catch (const CLI::ParseError& e) {
    // Bad command line: one line naming the value and what was expected, status 2.
    std::fprintf(stderr, "ringrl: error: %s (see --help)\n", e.what());
    return 2;
  } catch (const ringrl::UsageError& e) {
    std::fprintf(stderr, "ringrl: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ringrl: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
