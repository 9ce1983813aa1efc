#include "app/actor_registry.h"

#include <map>

namespace ringrl::app {
namespace {
std::map<std::string, ActorMain>& registry() {
  static std::map<std::string, ActorMain> kinds;
  return kinds;
}
}  // namespace

void register_actor_kind(const std::string& kind, ActorMain main) { registry()[kind] = std::move(main); }

const ActorMain* find_actor_kind(const std::string& kind) {
  auto it = registry().find(kind);
  return it == registry().end() ? nullptr : &it->second;
}

std::vector<std::string> actor_kinds() {
  std::vector<std::string> names;
  for (const auto& [name, main] : registry()) names.push_back(name);
  return names;
}

}  // namespace ringrl::app
