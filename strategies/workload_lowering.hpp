#pragma once
// A whole scenario workload as one Program: each mm/bmm is planned with the chosen cost
// model and lowered (strategies/plan_lowering.hpp); a put_signal moves its bytes between
// two ranks; a collective runs the core ring algorithm on every group of its mesh dim.
// Ops run in workload order, separated by a barrier of all ranks, so every op's time is
// its own. Backend-neutral: the simulator evaluates it, the hardware backend executes it.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/program.hpp"
#include "core/scenario.hpp"
#include "strategies/cost_model.hpp"
#include "strategies/plan.hpp"
#include "strategies/plan_lowering.hpp"

namespace symmesh::strategies {

// Turns values into the bytes of a dtype (bf16/fp16 rounding lives with the backend).
using ValueEncoder = std::function<std::vector<unsigned char>(const std::vector<double>&, DType)>;

struct WorkloadOptions {
  // Emulation: matmul inputs get seeded random values, outputs are requested.
  bool emulate = false;
  ValueEncoder encode;  // required when emulate
  uint64_t seed = 20261130;
  // Emulation refuses ops whose buffers would exceed this many bytes over all ranks.
  int64_t max_emulated_bytes = int64_t{2} << 30;
};

struct LoweredOp {
  const WorkloadOp* op = nullptr;
  std::optional<Plan> plan;  // matmuls
  std::optional<LoweredPlan> lowered;
  int64_t peak_memory_bytes_per_rank = 0;          // what the op allocates on its busiest rank
  std::vector<std::vector<double>> global_inputs;  // emulation: the values used
};

struct LoweredWorkload {
  Program program;
  DeviceMesh mesh;
  std::vector<LoweredOp> ops;
};

// Throws InvalidArgument (naming the op and its file:line:col) for a workload that does
// not fit the mesh, or one too large to emulate.
LoweredWorkload lower_workload(const Scenario& scenario, const CostModel& model,
                               const WorkloadOptions& options);

// The OpProblem of a matmul workload op on `mesh`.
OpProblem matmul_problem(const Scenario& scenario, const WorkloadOp& op, const DeviceMesh& mesh);

}  // namespace symmesh::strategies
