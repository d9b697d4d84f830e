#pragma once
// Runs a Program on real GPUs and measures it: one rank per GPU — host threads of this
// process on one node, or one process per rank under mpirun (when built with OpenMPI) —
// NCCL communicators per group, symmetric arenas, one CUDA stream per Program stream,
// CUDA events for events and per-op timing (docs/architecture.md, "hw/"). No CUDA type here:
// the CLI includes it as plain C++.
//
// Before any NCCL call, in this order: the options, the plan (hw/execution_plan.hpp: dtypes,
// use after free, event cycles), the GPU count (one per rank: NCCL refuses two ranks on one
// GPU), each GPU's memory and compute capability. Then setup, `warmup_runs` unmeasured runs
// and one measured run. A wait that is never satisfied is a symmesh::Timeout naming the
// rank, the peer and the buffer; nothing hangs on a device wait.
#include <cstdint>
#include <string>
#include <vector>

#include "core/program.hpp"
#include "hw/devices.hpp"
#include "hw/execution_plan.hpp"
#include "hw/measurement.hpp"

namespace symmesh::hw {

struct ExecutorOptions {
  CollectivesChoice collectives;  // one-sided, or NCCL for all or some ops' collectives
  double wait_timeout_s = 10;     // per wait_signal / barrier kernel
  double host_deadline_s = 600;   // per run, for NCCL collectives (no device timeout)
  int warmup_runs = 1;            // unmeasured runs first (NCCL connections, cuBLASLt)
  int64_t cublaslt_workspace_bytes = int64_t{32} << 20;
  std::string command = "symmesh run";  // who runs the program, for messages
  // Throws InvalidArgument naming the field.
  void validate() const;
};

// The host-only part: options checked and the Program planned for the GPUs.
ExecutionPlan plan_for_hardware(const Program& program, const ExecutorOptions& options);

// Throws DeviceUnavailable when the GPUs `gpus` (those of this node) cannot hold the ranks
// `local_ranks` (rank → device `rank % gpus`… as `device_of` says): too few GPUs, too little
// memory; Unsupported for fp8 matmuls below compute capability 8.9.
void check_devices_for(const ExecutionPlan& plan, const GpuInventory& gpus,
                       const std::vector<int>& local_ranks, int ranks_on_node,
                       const std::vector<int>& device_of_rank,
                       const std::string& command = "symmesh run");

Measurement execute_program(const Program& program, const ExecutorOptions& options);

}  // namespace symmesh::hw
