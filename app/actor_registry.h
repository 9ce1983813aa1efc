// Registry of actor kinds for the internal `ringrl actor` role.
//
// The supervisor starts each actor as `ringrl actor --kind K --segment NAME --slot I
// [--config FILE] [--seed S] [--param key=value ...]`. Components register the entry point of each kind they provide
// at start-up (from their add_*_commands function); `ringrl actor` looks the kind up and runs it.
// Registration happens on the main thread before parsing; lookups happen after.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ringrl::app {

struct ActorLaunch {
  std::string segment;      // shared-memory segment name to attach
  std::uint32_t slot = 0;   // this actor's slot (and ring) index
  std::string config_path;  // resolved run config (JSON), may be empty
  std::uint64_t seed = 0;   // per-actor seed chosen by the learner
  std::map<std::string, std::string> params;  // kind-specific `--param key=value` settings
};

/// The value of `key` in launch.params; throws UsageError naming the key when missing.
const std::string& actor_param(const ActorLaunch& launch, const std::string& key);

/// Entry point of one actor kind; returns the process exit status.
using ActorMain = std::function<int(const ActorLaunch&)>;

void register_actor_kind(const std::string& kind, ActorMain main);
/// Returns nullptr when `kind` is unknown.
const ActorMain* find_actor_kind(const std::string& kind);
std::vector<std::string> actor_kinds();

}  // namespace ringrl::app
