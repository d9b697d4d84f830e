// The one symbol the hardware module exports (see hw/CMakeLists.txt): everything else of
// hw/ and of its copy of core/ stays inside the module.
#include "hw/nccl_backend.hpp"

extern "C" __attribute__((visibility("default"))) symmesh::Backend* symmesh_create_nccl_backend() {
  return new symmesh::hw::NcclBackend();
}
