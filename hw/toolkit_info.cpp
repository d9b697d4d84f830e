#include "hw/toolkit_info.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

namespace symmesh::hw {

std::string toolkit_description() {
  return "NCCL " + std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." +
         std::to_string(NCCL_PATCH) + " (headers), CUDA runtime API " +
         std::to_string(CUDART_VERSION);
}

bool mpi_bootstrap_built() {
#ifdef SYMMESH_HW_HAVE_MPI
  return true;
#else
  return false;
#endif
}

std::string executor_description() {
  return std::string("ranks as threads of one process (one node)") +
#ifdef SYMMESH_HW_HAVE_MPI
         " or as MPI processes under mpirun" +
#endif
         "; " + toolkit_description();
}

std::string one_sided_path() {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 29, 0)
  return "CUDA kernels on the NCCL device API (LSA); this NCCL also has host "
         "ncclPutSignal/ncclWaitSignal, not used";
#else
  return "CUDA kernels on the NCCL device API (LSA pointers, system-scope release/acquire "
         "counters); NCCL < 2.29 has no host ncclPutSignal/ncclWaitSignal";
#endif
}

}  // namespace symmesh::hw
