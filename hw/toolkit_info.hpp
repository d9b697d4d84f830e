#pragma once
// What the NCCL/CUDA backend was built against; the backend itself arrives with the
// hardware issue. Nothing here needs a GPU.
#include <string>

namespace symmesh::hw {

// "NCCL 2.28.9 (headers), CUDA runtime 13000" — versions known at compile time.
std::string toolkit_description();

}  // namespace symmesh::hw
