// `ringrl actor`: the internal role the supervisor starts for each actor process.
#include <cstdlib>

#include <fmt/format.h>

#include "app/actor_registry.h"
#include "app/commands.h"
#include "common/actor_launch.h"
#include "common/errors.h"

namespace ringrl::app {
namespace {

void run_actor(const std::vector<std::string>& args) {
  const ActorLaunch launch = ActorLaunch::parse(args);
  const ActorMain* main = find_actor_kind(launch.kind);
  if (main == nullptr) {
    std::string known;
    for (const auto& k : actor_kinds()) known += (known.empty() ? "" : ", ") + k;
    throw UsageError(fmt::format("--kind '{}' is not an actor kind: expected one of {}", launch.kind, known));
  }
  const int rc = (*main)(launch);
  if (rc != 0) std::exit(rc);
}

void add_actor_command(CommandTree& tree) {
  CLI::App* actor = tree.root.add_subcommand("actor", "Internal: run one actor process (started by the supervisor)");
  actor->group("Internal");
  // The arguments are ActorLaunch's, parsed in one place (common/actor_launch.cc).
  actor->allow_extras();
  actor->prefix_command();
  actor->callback([actor] { run_actor(actor->remaining()); });
}

const CommandFamily kRegistration(kOrderActor, add_actor_command);

}  // namespace
}  // namespace ringrl::app
