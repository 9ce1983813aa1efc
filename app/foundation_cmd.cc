// Placeholder until the foundation commands land.
#include "app/commands.h"

namespace ringrl::app {
void add_foundation_commands(CLI::App&, CLI::App&) {}
}  // namespace ringrl::app
