// The ringrl command line: each command family registers itself from its own file.
//
// A family is one file in app/ (bf_cmd.cc, env_cmd.cc, pqt_train_cmd.cc, ...). At namespace
// scope it declares `const CommandFamily kRegistration(kOrderX, add_x_commands);`, and main()
// calls every registered family, in `order`, on the one CommandTree. A family adds its
// subcommands with callbacks; a callback does the work and throws ringrl::UsageError for bad
// input (printed as one line by main, exit status 2) or any other std::exception for a runtime
// failure (exit status 1).
//
// Registration runs during static initialisation, before main(); it only appends to a list.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ringrl::app {

/// The parents that several families add to.
struct CommandTree {
  CLI::App& root;     // `ringrl`
  CLI::App& train;    // `ringrl train`: one subcommand per algorithm
  CLI::App& bench;    // `ringrl bench`: throughput measurements
  CLI::App& profile;  // `ringrl profile`: traces of one component
  /// Objects a command hands to main() to outlive its error report: an MPI job's communicator
  /// and rank 0's nodes, so that the one error line is printed before MPI_Finalize. main()
  /// owns the vector and clears it, last first, after printing.
  std::vector<std::shared_ptr<void>>& until_exit;
  /// The exit status a command's callback sets when it is not 0 (main returns it, so that
  /// `until_exit` is released: std::exit would skip that).
  int& status;
};

using AddCommands = void (*)(CommandTree& tree);

/// Where a family's commands appear in --help (lower first).
enum CommandOrder : int {
  kOrderTrain = 10,
  kOrderTune = 20,
  kOrderProfile = 30,
  kOrderBench = 40,
  kOrderBf = 50,
  kOrderEnv = 60,
  kOrderTransport = 70,
  kOrderActor = 90,
};

/// Registers `add` as a command family (see the file comment).
class CommandFamily {
 public:
  CommandFamily(int order, AddCommands add);
};

/// Calls every registered family in order.
void add_registered_commands(CommandTree& tree);

/// main() keeps the command line here (the words after the executable), for commands that
/// start copies of themselves with it (sweeps/train_spread.h).
void set_command_line(int argc, char** argv);
const std::vector<std::string>& command_line();

}  // namespace ringrl::app
