// Built when RINGRL_WITH_TORCH=OFF: the torch subcommands say how to get them.
#include "app/commands.h"
#include "common/errors.h"

namespace ringrl::app {

void add_train_commands(CLI::App& root, CLI::App& bench) {
  auto disabled = [] {
    throw UsageError("this ringrl was built with RINGRL_WITH_TORCH=OFF; rebuild with it ON for train/tune/profile/bench npe");
  };
  for (const char* name : {"train", "tune", "profile"})
    root.add_subcommand(name, "(needs a torch build)")->allow_extras()->callback(disabled);
  bench.add_subcommand("npe", "(needs a torch build)")->allow_extras()->callback(disabled);
}

}  // namespace ringrl::app
