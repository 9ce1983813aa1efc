#include "common/actor_launch.h"

#include "common/errors.h"
#include "common/parse_number.h"

namespace ringrl {
namespace {

constexpr const char* kActorRole = "actor";  // the subcommand of the actor role

}  // namespace

std::vector<std::string> ActorLaunch::to_args() const {
  std::vector<std::string> a{
      kActorRole, "--kind", kind, "--segment", segment, "--slot", std::to_string(slot), "--seed", std::to_string(seed)};
  if (!config_path.empty()) {
    a.push_back("--config");
    a.push_back(config_path);
  }
  for (const auto& [k, v] : params) {
    a.push_back("--param");
    a.push_back(k + "=" + v);
  }
  return a;
}

ActorLaunch ActorLaunch::parse(const std::vector<std::string>& args) {
  ActorLaunch l;
  bool have_kind = false, have_segment = false, have_slot = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (i + 1 >= args.size()) throw UsageError("actor argument " + flag + ": expected a value after it");
    const std::string& value = args[++i];
    if (flag == "--kind") {
      l.kind = value;
      have_kind = true;
    } else if (flag == "--segment") {
      l.segment = value;
      have_segment = true;
    } else if (flag == "--slot") {
      l.slot = static_cast<std::uint32_t>(parse_unsigned(value, flag, 0, UINT32_MAX));
      have_slot = true;
    } else if (flag == "--seed") {
      l.seed = parse_unsigned(value, flag, 0, UINT64_MAX);
    } else if (flag == "--config") {
      l.config_path = value;
    } else if (flag == "--param") {
      const auto eq = value.find('=');
      if (eq == std::string::npos || eq == 0) throw UsageError("--param '" + value + "': expected key=value");
      l.params[value.substr(0, eq)] = value.substr(eq + 1);
    } else {
      throw UsageError("actor argument '" + flag +
                       "': expected --kind, --segment, --slot, --seed, --config or --param");
    }
  }
  if (!have_kind || !have_segment || !have_slot)
    throw UsageError("actor arguments: expected --kind, --segment and --slot (the supervisor passes them)");
  return l;
}

const std::string& ActorLaunch::param(const std::string& key) const {
  auto it = params.find(key);
  if (it == params.end())
    throw UsageError("actor parameter '" + key + "' is missing: expected --param " + key + "=VALUE");
  return it->second;
}

}  // namespace ringrl
