// Registry of actor kinds for the internal `ringrl actor` role.
//
// The supervisor starts each actor as `ringrl actor <ActorLaunch::to_args()>`
// (common/actor_launch.h). Each command family registers the entry point of the actor kinds
// it provides when it adds its commands; `ringrl actor` parses the launch and runs the kind.
// Registration happens on the main thread before parsing; lookups happen after.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/actor_launch.h"

namespace ringrl::app {

/// Entry point of one actor kind; returns the process exit status.
using ActorMain = std::function<int(const ActorLaunch&)>;

void register_actor_kind(const std::string& kind, ActorMain main);
/// Returns nullptr when `kind` is unknown.
const ActorMain* find_actor_kind(const std::string& kind);
std::vector<std::string> actor_kinds();

}  // namespace ringrl::app
