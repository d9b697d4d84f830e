#pragma once
// What GPUs this process can see, and the checks that must pass before any NCCL call:
// one rank per GPU (NCCL refuses two ranks on one GPU). Never throws for a machine
// without a GPU or driver: it reports none, with the reason.
#include <cstdint>
#include <string>
#include <vector>

#include "core/errors.hpp"

namespace symmesh::hw {

// No usable GPU for what was asked (none visible, too few for the ranks). The CLI maps it
// (a symmesh::Unavailable) to exit code 1 with its message.
class DeviceUnavailable : public Unavailable {
 public:
  using Unavailable::Unavailable;
};

struct GpuInfo {
  std::string name;
  int compute_capability = 0;  // major·10 + minor, e.g. 90
  int64_t memory_bytes = 0;
  int multiprocessors = 0;
};

struct GpuInventory {
  std::vector<GpuInfo> gpus;
  std::string why_none;  // when gpus is empty: the runtime's reason ("no CUDA driver", …)
  int count() const { return static_cast<int>(gpus.size()); }
};

GpuInventory visible_gpus();

// Throws DeviceUnavailable "N ranks but only M GPUs visible; NCCL refuses two ranks on
// one GPU" when world_size > visible (and "no GPU visible: …" when visible is 0).
void check_world_fits(int world_size, int visible, const std::string& command = "symmesh run");

// "no GPU visible: symmesh run needs one GPU per rank (cudaGetDeviceCount: …)"; `needs`
// replaces "one GPU per rank" for commands without ranks.
std::string no_gpu_message(const std::string& command, const std::string& why = "",
                           const std::string& needs = "one GPU per rank");

}  // namespace symmesh::hw
