#pragma once
// A whole scenario workload as one Program: each matrix op is planned with the chosen cost
// model and lowered (strategies/plan_lowering.hpp); a put_signal moves its bytes between
// two ranks; a collective runs the core algorithm on every group of its mesh dim.
// Ops run in workload order, separated by a barrier of all ranks, so every op's time is
// its own. Backend-neutral: the simulator evaluates it, the hardware backend executes it.
#include <functional>
#include <memory>
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

// Every matmul of a workload planned (the cost model's work, done once) and nothing
// lowered yet: a counting lowering sizes it, then the real one builds it.
struct PlannedWorkload {
  DeviceMesh mesh{{1}};
  std::vector<std::optional<Plan>> plans;  // by workload op: the plan of a matmul
};

struct LoweredOp {
  const WorkloadOp* op = nullptr;
  const Plan* plan = nullptr;  // matmuls (into the workload's PlannedWorkload)
  std::optional<LoweredPlan> lowered;
  int64_t peak_memory_bytes_per_rank = 0;          // what the op allocates on its busiest rank
  std::vector<std::vector<double>> global_inputs;  // emulation: the values used
};

struct LoweredWorkload {
  Program program{1};
  DeviceMesh mesh{{1}};
  std::vector<LoweredOp> ops;
  std::shared_ptr<const PlannedWorkload> planned;  // what `ops` point into
};

// Checks the mesh against the cluster and every matmul against the mesh, and plans every
// matmul with `model`. Throws InvalidArgument naming the op and its file:line:col.
PlannedWorkload plan_workload(const Scenario& scenario, const CostModel& model);

// Lowers a planned workload into `program` (of the mesh's size): a counting Program
// (Program::counting) only counts what the lowering appends — with emulation it generates
// no values, only their bytes — and a real one, reserved from that count, holds it. Throws
// InvalidArgument (naming the op and its file:line:col) for an op that does not fit the
// mesh, or one too large to emulate.
LoweredWorkload lower_workload(const Scenario& scenario,
                               std::shared_ptr<const PlannedWorkload> planned,
                               const WorkloadOptions& options, Program program);

// Both steps, into a real Program.
LoweredWorkload lower_workload(const Scenario& scenario, const CostModel& model,
                               const WorkloadOptions& options);

// The OpProblem of a matmul workload op on `mesh`.
OpProblem matmul_problem(const Scenario& scenario, const WorkloadOp& op, const DeviceMesh& mesh);

}  // namespace symmesh::strategies
