// Whether this process is one rank of an MPI job, read from the environment alone (no MPI call).
//
// Contract:
// * detect_launcher() looks for the variables a launcher sets in every rank it starts:
//   Open MPI's mpirun (OMPI_COMM_WORLD_SIZE), PMIx (PMIX_RANK: srun --mpi=pmix, prterun) and
//   PMI-1/PMI-2 (PMI_SIZE: srun --mpi=pmi2, MPICH's hydra). Slurm's own SLURM_* variables do
//   not count: an sbatch script that runs `ringrl tune` without srun is one process.
// * A rank's child processes (the trials and repetitions it runs, their actors) are not ranks:
//   is_launcher_variable() names the variables to leave out of their environment, and
//   child_environment() is the environment without them.
// * Pure functions of their arguments; any thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ringrl::mpi {

/// What the environment says about the launch.
struct LaunchEnvironment {
  bool under_launcher = false;  // started by mpirun, srun or another PMI launcher
  std::string launcher;         // "mpirun", "pmix", "pmi" (empty when not under a launcher)
  int size_hint = 0;            // the world size when the environment names it, else 0
  int rank_hint = -1;           // this process's rank when the environment names it, else -1
};

/// Reads the launch from `get` (by default std::getenv).
LaunchEnvironment detect_launcher(const std::function<const char*(const char*)>& get = {});

/// True for a NAME (or NAME=VALUE) that a launcher sets for its ranks: OMPI_*, PMIX_*, PMI_*.
bool is_launcher_variable(std::string_view name_or_assignment);

/// `environ` without the launcher's variables (NAME=VALUE strings), for a rank's children.
std::vector<std::string> child_environment();

}  // namespace ringrl::mpi
