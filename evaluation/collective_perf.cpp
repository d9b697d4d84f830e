#include "evaluation/collective_perf.hpp"

#include "core/errors.hpp"
#include "core/scenario.hpp"
#include "evaluation/scenario_evaluation.hpp"

namespace symmesh::evaluation {
ClusterSpec perf_cluster(ClusterSpec cluster, int gpus) {
  if (gpus == 0) return cluster;
  if (gpus < 1)
    throw InvalidArgument("expected a number of GPUs >= 1, got " + std::to_string(gpus), "--gpus");
  if (gpus <= cluster.gpus_per_node) {
    cluster.nodes = 1;
    cluster.gpus_per_node = gpus;
  } else if (gpus % cluster.gpus_per_node == 0) {
    cluster.nodes = gpus / cluster.gpus_per_node;
  } else {
    throw InvalidArgument(std::to_string(gpus) + " GPUs are not whole nodes of " +
                              std::to_string(cluster.gpus_per_node) + " GPUs (cluster " +
                              cluster.name + ")",
                          "--gpus");
  }
  return cluster;
}

CollectivePerf simulate_collective_perf(const CollectivePerfRequest& request) {
  if (request.op != OpKind::all_gather && request.op != OpKind::reduce_scatter &&
      request.op != OpKind::all_reduce && request.op != OpKind::all_to_all)
    throw InvalidArgument(to_string(request.op) + " is no collective nccl-tests measures",
                          "--nccl-tests");
  if (request.min_bytes < 1)
    throw InvalidArgument("expected a size >= 1 byte, got " + std::to_string(request.min_bytes),
                          "--min-bytes");
  if (request.max_bytes < request.min_bytes)
    throw InvalidArgument("the largest size (" + std::to_string(request.max_bytes) +
                              " B) is under the smallest (" + std::to_string(request.min_bytes) +
                              " B)",
                          "--max-bytes");
  if (request.step_factor < 2)
    throw InvalidArgument("expected a factor >= 2, got " + std::to_string(request.step_factor),
                          "--step-factor");
  const int ranks = request.cluster.num_gpus();
  const int64_t element = element_size_bytes(request.dtype);
  CollectivePerf out;
  out.ranks = ranks;
  Scenario scenario;
  scenario.name = "nccl-tests " + to_string(request.op);
  scenario.cluster = request.cluster;
  scenario.mesh_shape = {ranks};
  scenario.mesh_names = {"world"};
  scenario.dtype = request.dtype;
  scenario.cost_model = "analytic";
  WorkloadOp op;
  op.name = to_string(request.op);
  op.kind = request.op;
  op.mesh_dim = 0;
  EvaluationOptions options;
  options.wall_clock_limit_s = request.wall_clock_limit_s;
  options.collectives = request.collectives;
  for (int64_t size = request.min_bytes;;) {
    // nccl-tests: count = size / element size; the per-rank count of a gather, scatter or
    // all-to-all is count / n, and the buffer is that times n.
    const int64_t count = size / element;
    const bool per_rank = request.op != OpKind::all_reduce;
    const int64_t printed_count = per_rank ? count / ranks : count;
    const int64_t bytes = (per_rank ? printed_count * ranks : count) * element;
    if (printed_count < 1) {
      out.skipped_bytes.push_back(size);
    } else {
      op.bytes = bytes;
      scenario.workload = {op};
      const Evaluation evaluation = evaluate_scenario(scenario, options);
      CollectivePerfRow row;
      row.bytes = bytes;
      row.count = printed_count;
      // The report's algbw/busbw are core/bus_bandwidth's of this op's bytes, group and time.
      for (const OpReport& r : evaluation.report.ops)
        if (r.name == op.name) {
          row.time_s = r.time_s;
          if (r.bandwidth) row.bandwidth = *r.bandwidth;
        }
      for (const CollectiveCount& c : evaluation.report.collectives)
        row.implementation = c.implementation;
      out.rows.push_back(row);
    }
    if (size > request.max_bytes / request.step_factor) break;  // the next one is past max
    size *= request.step_factor;
  }
  return out;
}

}  // namespace symmesh::evaluation
