// Placeholder until the bf commands land.
#include "app/commands.h"

namespace ringrl::app {
void add_bf_commands(CLI::App&, CLI::App&) {}
}  // namespace ringrl::app
