#include "strategies/workload_lowering.hpp"

#include <random>

#include "core/collectives.hpp"
#include "core/errors.hpp"

namespace symmesh::strategies {
namespace {

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
  std::optional<TensorSpec> bias;
  if (!op.bias.empty()) bias = TensorSpec{op.bias, dtype, op.bias_placements};
  problem.inputs = matmul_signature(op.kind).inputs_in_order(
      {op.a, dtype, op.a_placements}, {op.b, dtype, op.b_placements}, std::move(bias));
  problem.output_target = op.out_placements;
  return problem;
}

PlannedWorkload plan_workload(const Scenario& scenario, const CostModel& model) {
  PlannedWorkload out;
  out.mesh = DeviceMesh(scenario.mesh_shape, scenario.mesh_names);
  if (out.mesh.size() != scenario.cluster.num_gpus())
    throw InvalidArgument("mesh " + to_string(out.mesh) + " has " +
                              std::to_string(out.mesh.size()) + " ranks but the cluster has " +
                              std::to_string(scenario.cluster.num_gpus()) + " GPUs",
                          scenario.path.empty() ? "scenario" : scenario.path);
  for (const WorkloadOp& op : scenario.workload) {
    auto& plan = out.plans.emplace_back();
    if (!is_matmul(op.kind)) continue;
    const OpProblem problem = matmul_problem(scenario, op, out.mesh);
    try {
      problem.validate();
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("op '" + op.name + "': " + e.what(), where_of(op));
    }
    plan = build_plan(problem, model);
  }
  return out;
}

LoweredWorkload lower_workload(const Scenario& scenario,
                               std::shared_ptr<const PlannedWorkload> planned,
                               const WorkloadOptions& options, Program program) {
  if (options.emulate && !options.encode)
    throw InvalidArgument("emulation needs a value encoder", "workload");
  const DeviceMesh& mesh = planned->mesh;
  if (program.world_size() != mesh.size())
    throw InvalidArgument("a program of " + std::to_string(program.world_size()) +
                              " ranks for a mesh of " + std::to_string(mesh.size()),
                          "workload");
  LoweredWorkload out{std::move(program), mesh, {}, planned};
  Program& p = out.program;
  const bool counting = p.is_counting();
  const GroupId world = p.world_group();
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<int64_t> before(p.world_size());

  for (size_t i = 0; i < scenario.workload.size(); ++i) {
    const WorkloadOp& op = scenario.workload[i];
    LoweredOp lowered;
    lowered.op = &op;
    for (int r = 0; r < p.world_size(); ++r) before[r] = p.allocated_bytes(r);
    if (is_matmul(op.kind)) {
      lowered.plan = &*planned->plans.at(i);
      const OpProblem& problem = lowered.plan->problem;
      LoweringOptions lowering;
      lowering.name = op.name;
      lowering.carry_data = options.emulate;
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
        if (!counting)
          for (const auto& t : problem.inputs) {
            std::vector<double> values(numel(t.shape));
            for (double& v : values) v = value(rng);
            lowering.global_inputs.push_back(options.encode(values, t.dtype));
            lowered.global_inputs.push_back(std::move(values));
          }
      }
      lowered.lowered = lower_plan(*lowered.plan, p, lowering);
    } else if (op.kind == OpKind::put_signal) {
      lower_put_signal(p, op);
    } else {
      lower_collective(p, mesh, op, scenario.dtype_of(op));
    }
    for (int r = 0; r < p.world_size(); ++r)
      lowered.peak_memory_bytes_per_rank =
          std::max(lowered.peak_memory_bytes_per_rank, p.allocated_bytes(r) - before[r]);
    p.barrier(world, "main", {op.name, OpCategory::sync, "end of op"});
    out.ops.push_back(std::move(lowered));
  }
  return out;
}

LoweredWorkload lower_workload(const Scenario& scenario, const CostModel& model,
                               const WorkloadOptions& options) {
  auto planned = std::make_shared<const PlannedWorkload>(plan_workload(scenario, model));
  const int world = planned->mesh.size();
  return lower_workload(scenario, std::move(planned), options, Program(world));
}

}  // namespace symmesh::strategies
