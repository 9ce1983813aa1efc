#include "mpi/launch.h"

#include <cstdlib>


extern char** environ;

namespace ringrl::mpi {
namespace {

constexpr std::string_view kLauncherPrefixes[] = {"OMPI_", "PMIX_", "PMI_"};

int size_from(const char* value) {
  if (value == nullptr) return 0;
  const char* end = value;
  while (*end >= '0' && *end <= '9') ++end;
  if (end == value || *end != '\0' || end - value > 9) return 0;
  return std::atoi(value);
}

}  // namespace

LaunchEnvironment detect_launcher(const std::function<const char*(const char*)>& get) {
  const auto env = [&](const char* name) -> const char* { return get ? get(name) : std::getenv(name); };
  LaunchEnvironment e;
  if (const char* v = env("OMPI_COMM_WORLD_SIZE")) {
    e = {true, "mpirun", size_from(v)};
  } else if (env("PMIX_RANK") != nullptr) {
    e = {true, "pmix", 0};
  } else if (const char* v = env("PMI_SIZE")) {
    e = {true, "pmi", size_from(v)};
  }
  return e;
}

bool is_launcher_variable(std::string_view s) {
  for (std::string_view p : kLauncherPrefixes)
    if (s.substr(0, p.size()) == p) return true;
  return false;
}

std::vector<std::string> child_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    if (!is_launcher_variable(*e)) out.emplace_back(*e);
  return out;
}

}  // namespace ringrl::mpi
