// Placeholder until the training commands land.
#include "app/commands.h"

namespace ringrl::app {
void add_train_commands(CLI::App&, CLI::App&) {}
}  // namespace ringrl::app
