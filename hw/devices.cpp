#include "hw/devices.hpp"

#include <cuda_runtime_api.h>

namespace symmesh::hw {

GpuInventory visible_gpus() {
  GpuInventory out;
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    out.why_none = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status) + " (" +
                   cudaGetErrorString(status) + ")";
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return out;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    out.gpus.push_back({prop.name, prop.major * 10 + prop.minor,
                        static_cast<int64_t>(prop.totalGlobalMem), prop.multiProcessorCount});
  }
  if (out.gpus.empty() && out.why_none.empty()) out.why_none = "cudaGetDeviceCount reports 0";
  return out;
}

std::string no_gpu_message(const std::string& command, const std::string& why,
                           const std::string& needs) {
  return "no GPU visible: " + command + " needs " + needs + (why.empty() ? "" : " (" + why + ")");
}

void check_world_fits(int world_size, int visible, const std::string& command) {
  if (visible <= 0) throw DeviceUnavailable(no_gpu_message(command), command);
  if (world_size > visible)
    throw DeviceUnavailable(std::to_string(world_size) + " ranks but only " +
                                std::to_string(visible) + " GPU" + (visible == 1 ? "" : "s") +
                                " visible; NCCL refuses two ranks on one GPU",
                            command);
}

}  // namespace symmesh::hw
