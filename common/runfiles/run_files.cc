#include "common/runfiles/run_files.h"

#include <ctime>

namespace ringrl::runfiles {

std::string timestamped_run_dir(const std::string& stem) {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return "runs/" + stem + "-" + stamp;
}

}  // namespace ringrl::runfiles
