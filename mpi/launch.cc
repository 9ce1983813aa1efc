#include "mpi/launch.h"

#include <cstdlib>


extern char** environ;

namespace ringrl::mpi {
namespace {

constexpr std::string_view kLauncherPrefixes[] = {"OMPI_", "PMIX_", "PMI_"};

// A decimal of at most 9 digits, else `otherwise`.
int number_or(const char* value, int otherwise) {
  if (value == nullptr) return otherwise;
  const char* end = value;
  while (*end >= '0' && *end <= '9') ++end;
  if (end == value || *end != '\0' || end - value > 9) return otherwise;
  return std::atoi(value);
}

int size_from(const char* value) { return number_or(value, 0); }

}  // namespace

LaunchEnvironment detect_launcher(const std::function<const char*(const char*)>& get) {
  const auto env = [&](const char* name) -> const char* { return get ? get(name) : std::getenv(name); };
  LaunchEnvironment e;
  if (const char* v = env("OMPI_COMM_WORLD_SIZE")) {
    e = {true, "mpirun", size_from(v), -1};
    if (const char* r = env("OMPI_COMM_WORLD_RANK")) e.rank_hint = number_or(r, -1);
  } else if (const char* r = env("PMIX_RANK")) {
    e = {true, "pmix", 0, number_or(r, -1)};
  } else if (const char* v = env("PMI_SIZE")) {
    e = {true, "pmi", size_from(v), -1};
    if (const char* pr = env("PMI_RANK")) e.rank_hint = number_or(pr, -1);
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
