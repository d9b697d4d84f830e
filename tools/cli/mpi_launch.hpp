#pragma once
// Whether an MPI launcher (mpirun, mpiexec) started this process, and MPI for it. The rule
// reads the environment only, so deciding initialises nothing: a process is launched when
// OMPI_COMM_WORLD_SIZE (Open MPI's mpirun), PMIX_RANK (any PMIx launcher: Open MPI, srun
// --mpi=pmix) or PMI_RANK (MPICH's and Intel MPI's hydra) is set. A plain `symmesh sweep`
// sets none of them, never opens libsymmesh_mpi.so and never calls MPI.
#include <memory>
#include <optional>
#include <string>

#include "tools/cli/communicator.hpp"

namespace symmesh::cli {

struct MpiLaunch {
  bool launched = false;
  std::optional<int> world_size;  // when the launcher says (OMPI_COMM_WORLD_SIZE, PMI_SIZE)
  int rank = 0;                   // from the launcher's variables; 0 when unknown
  int ranks_on_node = 1;          // OMPI_COMM_WORLD_LOCAL_SIZE / MPI_LOCALNRANKS; 1 when unknown
};
MpiLaunch mpi_launch();

// Whether this symmesh was built with MPI (libsymmesh_mpi.so, OpenMPI at configure time).
bool mpi_built();

// MPI_COMM_WORLD, initialised now. Throws Unavailable naming `command` when symmesh was
// built without MPI or the module cannot be loaded.
std::unique_ptr<Communicator> open_mpi(const std::string& command);

}  // namespace symmesh::cli
