// mpi/launch.h: which environments are one rank of an MPI job, and what a rank's children
// do not inherit.
#include "mpi/launch.h"

#include <cstdlib>
#include <map>

#include <gtest/gtest.h>

namespace ringrl::mpi {
namespace {

LaunchEnvironment detect(const std::map<std::string, std::string>& env) {
  return detect_launcher([&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(Launch, NamesTheLauncher) {
  EXPECT_FALSE(detect({}).under_launcher);
  EXPECT_FALSE(detect({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}}).under_launcher)
      << "an sbatch script without srun is one process";
  const LaunchEnvironment ompi = detect({{"OMPI_COMM_WORLD_SIZE", "3"}, {"OMPI_COMM_WORLD_RANK", "1"}});
  EXPECT_TRUE(ompi.under_launcher);
  EXPECT_EQ(ompi.launcher, "mpirun");
  EXPECT_EQ(ompi.size_hint, 3);
  EXPECT_EQ(ompi.rank_hint, 1);
  const LaunchEnvironment pmix = detect({{"PMIX_RANK", "0"}, {"SLURM_PROCID", "0"}});
  EXPECT_TRUE(pmix.under_launcher);
  EXPECT_EQ(pmix.launcher, "pmix");
  EXPECT_EQ(pmix.size_hint, 0) << "PMIx names no size: MPI says";
  EXPECT_EQ(pmix.rank_hint, 0);
  EXPECT_EQ(detect({{"PMI_SIZE", "2"}, {"PMI_RANK", "0"}}).size_hint, 2);
  EXPECT_EQ(detect({{"PMI_SIZE", "2"}, {"PMI_RANK", "1"}}).rank_hint, 1);
  EXPECT_EQ(detect({}).rank_hint, -1);
  EXPECT_EQ(detect({{"OMPI_COMM_WORLD_SIZE", "x1"}}).size_hint, 0) << "not a number: unknown";
}

TEST(Launch, ChildrenDoNotInheritTheLaunchersVariables) {
  EXPECT_TRUE(is_launcher_variable("OMPI_COMM_WORLD_RANK=1"));
  EXPECT_TRUE(is_launcher_variable("PMIX_NAMESPACE"));
  EXPECT_TRUE(is_launcher_variable("PMI_FD=3"));
  EXPECT_FALSE(is_launcher_variable("SLURM_JOB_ID=7"));
  EXPECT_FALSE(is_launcher_variable("PATH=/bin"));
  ASSERT_EQ(setenv("OMPI_COMM_WORLD_SIZE", "4", 1), 0);
  ASSERT_EQ(setenv("RINGRL_LAUNCH_TEST", "kept", 1), 0);
  bool kept = false;
  for (const auto& e : child_environment()) {
    EXPECT_FALSE(is_launcher_variable(e)) << e;
    kept |= e == "RINGRL_LAUNCH_TEST=kept";
  }
  EXPECT_TRUE(kept);
  unsetenv("OMPI_COMM_WORLD_SIZE");
  unsetenv("RINGRL_LAUNCH_TEST");
}

}  // namespace
}  // namespace ringrl::mpi
