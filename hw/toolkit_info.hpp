#pragma once
// What the NCCL/CUDA backend was built against and how it moves one-sided data: compile-time
// facts only (header macros), so that the CLI can say so (--version) without loading the
// backend or any CUDA library. Nothing here needs a GPU.
#include <string>

namespace symmesh::hw {

// "NCCL 2.28.9 (headers), CUDA runtime 13000" — versions known at compile time.
std::string toolkit_description();

// Whether hw/ was built with OpenMPI, so that a plan over several nodes can run (one MPI
// process per rank under mpirun); without it ranks are threads of one process, one node.
bool mpi_bootstrap_built();

// How ranks run (threads of one process, or MPI processes) and toolkit_description().
std::string executor_description();

// How put_signal / wait_signal run in this build. NCCL 2.28 has no host one-sided API, so
// they are CUDA kernels on its device API (LSA pointers); a build against NCCL >= 2.29,
// whose ncclPutSignal / ncclWaitSignal exist, says so — the kernels are still used, which
// keeps one code path and the device-side timeout.
std::string one_sided_path();

}  // namespace symmesh::hw
