// How the learner describes one actor process to start, and how that process reads it back.
//
// The supervisor execs `<ringrl> <ActorLaunch::to_args()>`, which starts with the `actor`
// role; that role hands the arguments after it to ActorLaunch::parse(). Both directions live in this one file, so
// no other code spells or parses an actor command line.
//
// Pure value type; no shared state.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ringrl {

struct ActorLaunch {
  std::string kind;                           // actor kind, e.g. "pqt" (app/actor_registry.h maps it to an entry point)
  std::string segment;                        // shared-memory segment to attach
  std::uint32_t slot = 0;                     // this actor's slot (and ring) index
  std::string config_path;                    // resolved run config (JSON); may be empty
  std::uint64_t seed = 0;                     // per-actor seed chosen by the learner (common/seeds.h)
  std::map<std::string, std::string> params;  // kind-specific settings
  int nice = 0;  // added to the process's nice value when it starts (common/spawn.h); not an argument

  /// The actor process's argv[1..]: actor --kind K --segment S --slot I --seed N [--config F]
  /// [--param k=v ...].
  std::vector<std::string> to_args() const;
  /// Reads what to_args() wrote after `actor`. Throws UsageError naming the bad argument and what was expected.
  static ActorLaunch parse(const std::vector<std::string>& args);
  /// The value of params[key]; UsageError naming the key when it is missing.
  const std::string& param(const std::string& key) const;
};

}  // namespace ringrl
