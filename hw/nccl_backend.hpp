#pragma once
// This machine's GPUs behind the Backend seam (core/backend.hpp): a run is the hardware
// executor (hw/program_executor.hpp) with its measurement as a RunResult, the dry run is
// the hardware plan (hw/execution_plan.hpp), and calibration's GEMMs are
// hw/microbench.hpp's. The CLI loads this as a module (libsymmesh_hw.so, entry point
// symmesh_create_nccl_backend), so no process that only plans or simulates maps CUDA.
#include "core/backend.hpp"
#include "hw/measurement.hpp"
#include "hw/program_executor.hpp"

namespace symmesh::hw {

// The executor's options a run request asks for.
ExecutorOptions executor_options_for(const RunRequest& request);

// A measurement in the backend-neutral shape: timeline entries by op (an NCCL collective's
// entry covers the ops it replaced and says so in RunResult::details), per-op spans,
// device memory, outputs, notes.
RunResult run_result_of(const Measurement& measured, const Program& program);

class NcclBackend final : public Backend, public RunPlanner, public DeviceBenchmarks {
 public:
  std::string name() const override { return "nccl"; }
  RunResult run(const Program& program, const RunRequest& request) override;
  const RunPlanner* planner() const override { return this; }
  DeviceBenchmarks* device_benchmarks() override { return this; }

  std::string describe(const Program& program, const RunRequest& request) const override;
  std::vector<symmesh::DeviceInfo> devices(const std::string& command) override;
  symmesh::GemmTiming gemm(DType dtype, int64_t m, int64_t n, int64_t k, int iterations) override;
};

}  // namespace symmesh::hw

// The module's entry point: a new backend the caller owns (delete it through Backend).
extern "C" symmesh::Backend* symmesh_create_nccl_backend();
