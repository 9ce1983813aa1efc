// Placeholder until the env commands land.
#include "app/commands.h"

namespace ringrl::app {
void add_env_commands(CLI::App&, CLI::App&) {}
}  // namespace ringrl::app
