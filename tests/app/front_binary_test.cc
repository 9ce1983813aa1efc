// The two executables of a torch build (app/CMakeLists.txt): `ringrl` runs the torch-free
// commands without loading LibTorch and hands every other command to `ringrl-torch` next to it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/envs/bf/cli_util.h"

namespace ringrl {
namespace {

using bf::testing::CommandResult;
using bf::testing::run_command;
using bf::testing::shell_quote;

namespace fs = std::filesystem;

// The shared objects the dynamic loader opened for `ringrl <args>` (LD_DEBUG=libs on stderr).
CommandResult run_with_loader_log(const std::string& args) {
  return run_command("LD_DEBUG=libs " + shell_quote(RINGRL_BINARY) + " " + args);
}

bool loads_libtorch(const CommandResult& r) { return r.err.find("libtorch_cpu.so") != std::string::npos; }

class FrontBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!RINGRL_TEST_TORCH_COMMANDS) GTEST_SKIP() << "built without torch: one executable";
  }
};

TEST_F(FrontBinary, TorchFreeCommandsDoNotLoadLibTorch) {
  const CommandResult score = run_with_loader_log("bf score --task reverse ',[.,]'");
  EXPECT_EQ(score.status, 0) << score.err.substr(0, 2000);
  EXPECT_EQ(score.out.rfind("{\"total_reward\":", 0), 0u) << score.out;
  EXPECT_FALSE(loads_libtorch(score));
  const CommandResult tasks = run_with_loader_log("bf tasks");
  EXPECT_EQ(tasks.status, 0);
  EXPECT_FALSE(loads_libtorch(tasks));
}

TEST_F(FrontBinary, OtherCommandsRunInTheTorchBinary) {
  const CommandResult help = run_with_loader_log("train pqt --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("--task"), std::string::npos) << help.out;
  EXPECT_TRUE(loads_libtorch(help));
  // The root's help lists every command, torch or not.
  const CommandResult root = run_command(shell_quote(RINGRL_BINARY) + " --help");
  EXPECT_EQ(root.status, 0);
  for (const char* name : {"train", "tune", "checkpoint", "bf", "env"}) {
    EXPECT_NE(root.out.find(std::string("  ") + name + " "), std::string::npos) << name << "\n" << root.out;
  }
  // A usage error keeps its status through the hand-over.
  const CommandResult bad = run_command(shell_quote(RINGRL_BINARY) + " train pqt --no-such-option");
  EXPECT_EQ(bad.status, 2) << bad.err;
}

TEST_F(FrontBinary, MissingTorchBinaryIsNamed) {
  const fs::path dir = fs::temp_directory_path() / ("ringrl-front-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path alone = dir / "ringrl";
  fs::copy_file(RINGRL_BINARY, alone, fs::copy_options::overwrite_existing);
  const CommandResult train = run_command(shell_quote(alone.string()) + " train pqt --help");
  const CommandResult bf = run_command(shell_quote(alone.string()) + " bf score --task reverse ',[.,]'");
  fs::remove_all(dir);
  EXPECT_EQ(train.status, 1);
  EXPECT_EQ(train.err, "ringrl: error: this command runs in " + (dir / "ringrl-torch").string() +
                           ", which cannot be started: No such file or directory\n");
  EXPECT_EQ(bf.status, 0) << bf.err;
}

}  // namespace
}  // namespace ringrl
