// Placeholder until `ringrl tune` lands.
#include "app/tune_cmd.h"

namespace ringrl::app {
void add_tune_command(CLI::App&) {}
}  // namespace ringrl::app
