#include "evaluation/simulation_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "evaluation/dtype_values.hpp"
#include "strategies/sharded_result.hpp"

namespace symmesh::evaluation {
namespace {

// Max |sharded - unsharded| of an emulated matmul, against inputs rounded to its dtype.
double emulation_error(const strategies::LoweredOp& op, const strategies::LoweredWorkload& workload,
                       const RunResult& result) {
  const auto& plan = *op.plan;
  const DType dtype = plan.problem.dtype();
  std::vector<std::vector<double>> rounded;
  for (const auto& values : op.global_inputs)
    rounded.push_back(decode_values(encode_values(values, dtype), dtype));
  const auto expected = strategies::unsharded_result(plan.problem, rounded);
  std::vector<std::vector<double>> pieces;
  for (int r = 0; r < workload.mesh.size(); ++r)
    pieces.push_back(decode_values(result.output(op.op->name, r).bytes, dtype));
  const TensorSpec out{op.lowered->output_shape, dtype, op.lowered->output_placements};
  const auto assembled = strategies::assemble_global(out, workload.mesh, pieces);
  double err = assembled.max_replica_mismatch;
  for (size_t i = 0; i < expected.size(); ++i)
    err = std::max(err, std::abs(assembled.values[i] - expected[i]));
  return err;
}

std::string cluster_line(const ClusterSpec& c) {
  std::string line = std::to_string(c.nodes) + " node" + (c.nodes > 1 ? "s" : "") + " x " +
                     std::to_string(c.gpus_per_node) + " " + c.gpu.name + " (" + c.intra_node.kind;
  if (c.nodes > 1) line += ", " + c.inter_node.kind;
  return line + ")";
}

}  // namespace

SimulationReport build_simulation_report(const Scenario& scenario,
                                         const strategies::LoweredWorkload& workload,
                                         const RunResult& result, bool emulated,
                                         const CollectivesChoice& collectives) {
  SimulationReport report;
  report.scenario = scenario.name;
  report.cluster = cluster_line(scenario.cluster);
  report.mesh = to_string(workload.mesh);
  report.cost_model = scenario.cost_model;
  report.total_time_s = result.makespan_s;
  report.warnings = result.warnings;
  for (const auto& h : result.hazards) report.warnings.push_back("hazard: " + h.to_string());
  report.collectives = count_collectives(
      workload.program.collectives(),
      [&](const CollectiveRecord& r) { return collectives.implementation_of(r); });

  for (const auto& lowered : workload.ops) {
    const WorkloadOp& op = *lowered.op;
    OpReport r;
    r.name = op.name;
    r.op = to_string(op.kind);
    r.peak_memory_bytes_per_rank = lowered.peak_memory_bytes_per_rank;
    r.bytes = is_matmul(op.kind) ? 0 : op.bytes;
    for (const LabelSpan& span : result.label_spans)
      if (span.name == op.name) {
        r.time_s = span.end_s - span.start_s;
        r.comm_time_s = span.busiest_comm_s;
        r.compute_time_s = span.busiest_compute_s;
      }
    if (lowered.plan) {
      r.input_placements = lowered.plan->chosen_candidate().input_placements;
      r.output_placements = lowered.plan->chosen_candidate().output_placements;
      if (lowered.plan->problem.output_target)
        r.out_placements = lowered.plan->problem.output_target;
      r.implementation = to_string(lowered.plan->chosen_candidate().implementation);
      r.chunks = lowered.plan->chosen_candidate().chunks;
      if (emulated) r.max_abs_error = emulation_error(lowered, workload, result);
    }
    report.ops.push_back(r);
  }
  return report;
}

std::string strategy_text(const OpReport& op) {
  if (!op.input_placements) return "";
  std::string out;
  for (size_t i = 0; i < op.input_placements->size(); ++i)
    out += (i ? " x " : "") + to_string((*op.input_placements)[i]);
  out += " -> " + to_string(*op.output_placements);
  if (op.out_placements && *op.out_placements != *op.output_placements)
    out += " -> " + to_string(*op.out_placements);
  if (op.implementation != "unfused")
    out += ", " + op.implementation + " x" + std::to_string(op.chunks);
  return out;
}

}  // namespace symmesh::evaluation
