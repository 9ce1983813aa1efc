// Built when RINGRL_WITH_TORCH=OFF: the torch commands exist and say how to get them.
#include "app/commands.h"
#include "common/errors.h"

namespace ringrl::app {
namespace {

void add_disabled_commands(CommandTree& tree) {
  auto disabled = [] {
    throw UsageError(
        "this ringrl was built with RINGRL_WITH_TORCH=OFF; rebuild with it ON for train/tune/profile/bench npe");
  };
  for (const char* name : {"pqt", "random"})
    tree.train.add_subcommand(name, "(needs a torch build)")->allow_extras()->callback(disabled);
  tree.root.add_subcommand("tune", "(needs a torch build)")->allow_extras()->callback(disabled);
  tree.profile.add_subcommand("learner", "(needs a torch build)")->allow_extras()->callback(disabled);
  tree.bench.add_subcommand("npe", "(needs a torch build)")->allow_extras()->callback(disabled);
}

const CommandFamily kRegistration(kOrderTrain, add_disabled_commands);

}  // namespace
}  // namespace ringrl::app
