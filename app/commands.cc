#include "app/commands.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace ringrl::app {
namespace {

std::vector<std::pair<int, AddCommands>>& families() {
  static std::vector<std::pair<int, AddCommands>> list;  // filled before main(), read in main()
  return list;
}

}  // namespace

CommandFamily::CommandFamily(int order, AddCommands add) { families().emplace_back(order, add); }

void add_registered_commands(CommandTree& tree) {
  auto list = families();
  std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [order, add] : list) add(tree);
}

namespace {
std::vector<std::string>& words() {
  static std::vector<std::string> list;  // set once by main() before parsing
  return list;
}
}  // namespace

void set_command_line(int argc, char** argv) { words().assign(argv + (argc > 0 ? 1 : 0), argv + argc); }

const std::vector<std::string>& command_line() { return words(); }

}  // namespace ringrl::app
