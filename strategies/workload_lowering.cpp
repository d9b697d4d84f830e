#include "strategies/workload_lowering.hpp"

#include <random>

#include "core/collectives.hpp"
#include "core/errors.hpp"

namespace symmesh::strategies {
namespace {

// Bytes allocated per rank so far: local buffers on their rank, symmetric ones on every
// member of their group.
std::vector<int64_t> allocated_per_rank(const Program& program) {
  std::vector<int64_t> bytes(program.world_size(), 0);
  for (const auto& a : program.local_allocations()) bytes[a.rank] += a.size_bytes;
  for (const auto& h : program.symmetric_allocations())
    for (int r : program.group(h.group).ranks) bytes[r] += h.size_bytes;
  return bytes;
}

std::string where_of(const WorkloadOp& op) {
  return op.where.to_string();
}

void lower_put_signal(Program& program, const WorkloadOp& op) {
  const GroupId world = program.world_group();
  const SymmetricHandle buffer = program.symm_alloc(world, op.bytes);
  const BufferRef src = program.local_alloc(op.src, op.bytes);
  const OpLabel label{op.name, OpCategory::comm,
                      "put_signal " + std::to_string(op.src) + " -> " + std::to_string(op.dst)};
  program.put_signal(op.src, program.stream(op.src, "main"), src, buffer, 0, op.dst, label);
  program.wait_signal(op.dst, program.stream(op.dst, "main"), buffer, op.src, label);
}

void lower_collective(Program& program, const DeviceMesh& mesh, const WorkloadOp& op, DType dtype) {
  if (op.mesh_dim < 0 || op.mesh_dim >= mesh.ndim())
    throw InvalidArgument(
        "mesh dim " + std::to_string(op.mesh_dim) + " is not in mesh " + to_string(mesh),
        where_of(op));
  const CollectiveOp collective = collective_op_of(op.kind);
  for (const auto& group : mesh.groups(op.mesh_dim)) {
    const CollectiveSpec spec{
        program.add_group(group), op.bytes, dtype, ReduceOp::sum, "main", op.name};
    run_collective(program, collective, spec);
  }
}

}  // namespace

OpProblem matmul_problem(const Scenario& scenario, const WorkloadOp& op, const DeviceMesh& mesh) {
  OpProblem problem;
  if (!is_matmul(op.kind))
    throw InvalidArgument("not a matrix op: " + to_string(op.kind), op.where.to_string());
  problem.op = op.kind;
  problem.mesh = mesh;
  const DType dtype = scenario.dtype_of(op);
  problem.inputs.push_back({op.a, dtype, op.a_placements});
  problem.inputs.push_back({op.b, dtype, op.b_placements});
  // The bias where the op's signature puts it among the inputs (ATen order).
  if (!op.bias.empty()) {
    const TensorSpec bias{op.bias, dtype, op.bias_placements};
    if (matmul_signature(op.kind).bias_first)
      problem.inputs.insert(problem.inputs.begin(), bias);
    else
      problem.inputs.push_back(bias);
  }
  problem.output_target = op.out_placements;
  return problem;
}

LoweredWorkload lower_workload(const Scenario& scenario, const CostModel& model,
                               const WorkloadOptions& options) {
  const DeviceMesh mesh(scenario.mesh_shape, scenario.mesh_names);
  if (mesh.size() != scenario.cluster.num_gpus())
    throw InvalidArgument("mesh " + to_string(mesh) + " has " + std::to_string(mesh.size()) +
                              " ranks but the cluster has " +
                              std::to_string(scenario.cluster.num_gpus()) + " GPUs",
                          scenario.path.empty() ? "scenario" : scenario.path);
  if (options.emulate && !options.encode)
    throw InvalidArgument("emulation needs a value encoder", "workload");
  LoweredWorkload out{Program(mesh.size()), mesh, {}};
  Program& program = out.program;
  const GroupId world = program.world_group();
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);

  for (const WorkloadOp& op : scenario.workload) {
    LoweredOp lowered;
    lowered.op = &op;
    const auto before = allocated_per_rank(program);
    if (is_matmul(op.kind)) {
      OpProblem problem = matmul_problem(scenario, op, mesh);
      try {
        problem.validate();
      } catch (const InvalidArgument& e) {
        throw InvalidArgument("op '" + op.name + "': " + e.what(), where_of(op));
      }
      LoweringOptions lowering;
      lowering.name = op.name;
      if (options.emulate) {
        // Emulated bytes: every rank may end up holding whole inputs and the output.
        int64_t global = numel(problem.output_shape());
        for (const auto& t : problem.inputs) global += numel(t.shape);
        const int64_t need = global * element_size_bytes(problem.dtype()) * mesh.size();
        if (need > options.max_emulated_bytes)
          throw InvalidArgument(
              "op '" + op.name + "' is too large to emulate: up to " + std::to_string(need >> 20) +
                  " MiB of real buffers over " + std::to_string(mesh.size()) + " ranks (limit " +
                  std::to_string(options.max_emulated_bytes >> 20) +
                  " MiB); emulation (simulate --emulate, run --check) is meant for small shapes",
              where_of(op));
        for (const auto& t : problem.inputs) {
          std::vector<double> values(numel(t.shape));
          for (double& v : values) v = value(rng);
          lowering.global_inputs.push_back(options.encode(values, t.dtype));
          lowered.global_inputs.push_back(std::move(values));
        }
      }
      lowered.plan = build_plan(problem, model);
      lowered.lowered = lower_plan(*lowered.plan, program, lowering);
    } else if (op.kind == OpKind::put_signal) {
      lower_put_signal(program, op);
    } else {
      lower_collective(program, mesh, op, scenario.dtype_of(op));
    }
    const auto after = allocated_per_rank(program);
    for (int r = 0; r < program.world_size(); ++r)
      lowered.peak_memory_bytes_per_rank =
          std::max(lowered.peak_memory_bytes_per_rank, after[r] - before[r]);
    program.barrier(world, "main", {op.name, OpCategory::sync, "end of op"});
    out.ops.push_back(std::move(lowered));
  }
  return out;
}

}  // namespace symmesh::strategies
