#include "hw/toolkit_info.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

namespace symmesh::hw {

std::string toolkit_description() {
  return "NCCL " + std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." +
         std::to_string(NCCL_PATCH) + " (headers), CUDA runtime API " +
         std::to_string(CUDART_VERSION);
}

}  // namespace symmesh::hw
