// ringrl: one binary, one subcommand per user task (see `ringrl --help`).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "common/errors.h"
#include "common/exit_status.h"
#include "common/supervisor.h"

namespace {

#ifdef RINGRL_FULL_BINARY
// The command that argv names, as far as this executable's tree knows it: the deepest
// subcommand reached by argv's leading words (stopping at the first option).
const CLI::App* named_command(const CLI::App& root, int argc, char** argv) {
  const CLI::App* node = &root;
  for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
    const std::string word = argv[i];
    const auto found = node->get_subcommands([&](const CLI::App* sub) { return sub->check_name(word); });
    if (found.empty()) break;
    node = found.front();
  }
  return node;
}

// Replaces this process with RINGRL_FULL_BINARY from this executable's directory, with the
// same arguments (app/CMakeLists.txt). Returns only on failure, with the exit status.
int run_full_binary(char** argv) {
  std::string full;
  try {
    full = ringrl::sibling_executable(RINGRL_FULL_BINARY);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ringrl: error: %s\n", e.what());
    return ringrl::kExitFailure;
  }
  execv(full.c_str(), argv);
  std::fprintf(stderr, "ringrl: error: this command runs in %s, which cannot be started: %s\n", full.c_str(),
               std::strerror(errno));
  return ringrl::kExitFailure;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  // Logs go to stderr; stdout carries results (JSON lines, tables) only.
  spdlog::set_default_logger(spdlog::stderr_color_mt("ringrl"));
  spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] %v");
  CLI::App root{"ringrl: actor-learner reinforcement learning on one machine"};
  root.require_subcommand(1);
  root.set_version_flag("--version", "ringrl " RINGRL_VERSION);  // CMake's PROJECT_VERSION
  CLI::App* train =
      root.add_subcommand("train", "Train with actor processes and a learner (one subcommand per algorithm)");
  train->require_subcommand(1);
  CLI::App* profile = root.add_subcommand("profile", "Profile a component and write a Chrome trace");
  profile->require_subcommand(1);
  CLI::App* bench = root.add_subcommand("bench", "Measure throughput (ring, bf, env, npe)");
  bench->require_subcommand(1);
  ringrl::app::set_command_line(argc, argv);
  std::vector<std::shared_ptr<void>> until_exit;  // destroyed after any error line (commands.h)
  struct ReleaseLastFirst {
    std::vector<std::shared_ptr<void>>& held;
    ~ReleaseLastFirst() {
      while (!held.empty()) held.pop_back();
    }
  } release{until_exit};
  int status = ringrl::kExitOk;  // a command's own (commands.h)
  ringrl::app::CommandTree tree{root, *train, *bench, *profile, until_exit, status};
  ringrl::app::add_registered_commands(tree);
#ifdef RINGRL_FULL_BINARY
  // The shared parents (and the root) list every command only in the full binary.
  const CLI::App* command = named_command(root, argc, argv);
  if (command == &root || command == train || command == profile || command == bench) return run_full_binary(argv);
#endif

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
    return ringrl::kExitUsage;
  } catch (const ringrl::UsageError& e) {
    std::fprintf(stderr, "ringrl: error: %s\n", e.what());
    return ringrl::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ringrl: error: %s\n", e.what());
    return ringrl::kExitFailure;
  }
  return status;
}
