#include "evaluation/memory_estimate.hpp"

#include <algorithm>

#include "core/device_mesh.hpp"
#include "core/errors.hpp"
#include "core/program.hpp"
#include "strategies/plan.hpp"
#include "strategies/workload_lowering.hpp"

namespace symmesh::evaluation {
namespace {

struct Count {
  int64_t ops = 0;
  int64_t emulated_bytes = 0;
};

// Ops of one ring collective on every group of a mesh dim of p ranks, over all W ranks.
int64_t collective_ops(CollectiveKind kind, int64_t p, int64_t world) {
  const int64_t steps = p - 1;
  switch (kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::all_to_all:
      return 2 * steps * world;  // put_signal + wait_signal
    case CollectiveKind::reduce_scatter:
      return 3 * steps * world;  // + reduce
    case CollectiveKind::all_reduce:
      return 5 * steps * world;  // reduce-scatter, then all-gather
    default:
      return 0;
  }
}

// One redistribution step of a planned matmul input, as plan_lowering.cpp writes it.
int64_t step_ops(const RedistributionStep& step, const DeviceMesh& mesh) {
  const int64_t world = mesh.size();
  const int64_t p = mesh.size(step.mesh_dim);
  const int64_t ring = collective_ops(step.collective, p, world);
  switch (step.collective) {
    case CollectiveKind::all_gather: {
      // A copy into each rank's slot; concatenating along a non-leading dim: p copies.
      const bool leading = step.from.shard_dim() == 0;
      return world + ring + (leading ? 0 : p * world);
    }
    case CollectiveKind::reduce_scatter: {
      // Staging: one copy (leading dim) or p split copies; at most one unpad copy.
      const bool leading = step.to.shard_dim() == 0;
      return (leading ? world : p * world) + ring + (leading ? 0 : world);
    }
    case CollectiveKind::all_reduce:
      return world + ring;  // one staging copy per rank
    case CollectiveKind::all_to_all:
      return 2 * p * world + ring;  // p split copies and p concat copies per rank
    case CollectiveKind::local_chunk:
      return step.to.shard_dim() == 0 ? 0 : world;
    case CollectiveKind::local_partial:
      return 0;
  }
  return 0;
}

Count matmul_count(const Scenario& scenario, const WorkloadOp& op, const DeviceMesh& mesh,
                   const strategies::CostModel& model, bool emulate) {
  Count c;
  const strategies::OpProblem problem = strategies::matmul_problem(scenario, op, mesh);
  const strategies::Plan plan = strategies::build_plan(problem, model);
  const strategies::Candidate& chosen = plan.chosen_candidate();
  const bool fused = chosen.implementation == strategies::Implementation::fused_allgather_mm;
  for (const auto& r : plan.redistributions) {
    const auto& steps = r.redistribution.steps;
    // Fused: a's last all-gather and the matmul are one overlapped ring (below).
    const size_t n = steps.size() - (fused && r.input == problem.lhs_index() ? 1 : 0);
    for (size_t i = 0; i < n; ++i) c.ops += step_ops(steps[i], mesh);
  }
  const int64_t chunks = chosen.chunks;
  if (fused) {
    // strategies/collective_matmul.cpp, per rank: a ready event and its wait, p·c matmuls,
    // (p-1)·c × (put, wait, record, wait event), a done event and its wait.
    int64_t p = 1;
    for (const auto& r : plan.redistributions)
      if (r.input == problem.lhs_index()) p = mesh.size(r.redistribution.steps.back().mesh_dim);
    c.ops += mesh.size() * (4 + p * chunks + 4 * (p - 1) * chunks);
  } else if (chosen.implementation == strategies::Implementation::fused_mm_reducescatter) {
    // Per rank: round 0's c products and events; each of p-1 rounds c × (wait event, put,
    // wait, record) on the comm stream and c × (product, wait event, add) plus c events but
    // in the last round; a done event and its wait: c(8p - 7) + 2.
    const int64_t p = mesh.size(plan.output_redistribution->redistribution.steps[0].mesh_dim);
    c.ops += mesh.size() * (chunks * (8 * p - 7) + 2);
  } else {
    c.ops += mesh.size();  // the local matmuls
    if (plan.output_redistribution)
      for (const auto& step : plan.output_redistribution->redistribution.steps)
        c.ops += step_ops(step, mesh);
  }
  if (emulate) {
    // As the lowering bounds it: every rank may hold the whole inputs and output.
    int64_t global = numel(problem.output_shape());
    for (const auto& t : problem.inputs) global += numel(t.shape);
    c.emulated_bytes = global * element_size_bytes(problem.dtype()) * mesh.size();
  }
  return c;
}

Count op_count(const Scenario& scenario, const WorkloadOp& op, const DeviceMesh& mesh,
               const strategies::CostModel& model, bool emulate) {
  const int64_t world = mesh.size();
  if (is_matmul(op.kind)) return matmul_count(scenario, op, mesh, model, emulate);
  if (op.kind == OpKind::put_signal)  // a world-sized symmetric buffer + the source
    return {2, emulate ? op.bytes * (world + 1) : 0};
  if (op.mesh_dim < 0 || op.mesh_dim >= mesh.ndim()) return {};
  const int64_t p = mesh.size(op.mesh_dim);
  CollectiveKind kind = CollectiveKind::local_chunk;
  int64_t buffers = 1;  // per rank, in units of op.bytes: data, plus staging below
  switch (op.kind) {
    case OpKind::all_gather:
      kind = CollectiveKind::all_gather;
      break;
    case OpKind::reduce_scatter:
      kind = CollectiveKind::reduce_scatter;
      buffers = p > 1 ? 2 : 1;
      break;
    case OpKind::all_reduce:
      kind = CollectiveKind::all_reduce;
      buffers = p > 1 ? 2 : 1;
      break;
    case OpKind::all_to_all:
      kind = CollectiveKind::all_to_all;
      buffers = 2;
      break;
    default:
      return {};
  }
  return {collective_ops(kind, p, world), emulate ? buffers * op.bytes * world : 0};
}

}  // namespace

int64_t bytes_per_stream_op() {
  // The label's detail ("ring reduce_scatter step 12/63") is past libstdc++'s 15-character
  // small-string buffer on most ops: a 32- or 48-byte heap block.
  constexpr int64_t label_heap_bytes = 40;
  return static_cast<int64_t>(sizeof(StreamOp)) * 3 / 2 + label_heap_bytes;
}

HostMemoryEstimate estimate_host_memory(const Scenario& scenario,
                                        const strategies::CostModel& model, bool emulate) {
  HostMemoryEstimate out;
  std::optional<DeviceMesh> mesh;
  try {
    mesh.emplace(scenario.mesh_shape, scenario.mesh_names);
  } catch (const Error&) {
    return out;  // the lowering says what is wrong with the mesh
  }
  for (const WorkloadOp& op : scenario.workload) {
    Count c;
    try {
      c = op_count(scenario, op, *mesh, model, emulate);
    } catch (const Error&) {
      // Invalid at this size: the lowering reports it, naming the op and where it is.
    }
    out.stream_ops += c.ops + mesh->size();  // + the barrier that ends every op
    out.emulated_bytes += c.emulated_bytes;
    out.largest_emulated_op_bytes = std::max(out.largest_emulated_op_bytes, c.emulated_bytes);
  }
  out.program_bytes = out.stream_ops * bytes_per_stream_op();
  out.simulator_bytes = int64_t{mesh->size()} << 20;
  return out;
}

void check_host_memory(const Scenario& scenario, const HostMemoryEstimate& estimate, bool emulate,
                       const std::optional<HostMemory>& available) {
  if (emulate &&
      estimate.largest_emulated_op_bytes > strategies::WorkloadOptions{}.max_emulated_bytes)
    return;
  if (admit(estimate.total_bytes(), 0, available) != Admission::skip) return;
  std::string message = "scenario '" + scenario.name + "' " +
                        not_enough_memory_text(estimate.total_bytes(), *available,
                                               emulate ? "to emulate" : "to simulate");
  if (emulate)
    message += " (every rank's real buffers: " + gigabytes_text(estimate.emulated_bytes) +
               "); emulation is meant for small shapes";
  else
    message += " (" + std::to_string(estimate.stream_ops) +
               " stream ops); try fewer GPUs or fewer workload ops";
  throw InvalidArgument(message, scenario.path.empty() ? "scenario" : scenario.path);
}

}  // namespace symmesh::evaluation
