// A training step simulated by its replica and one data-parallel ring
// (simulated_training_step.hpp).
#include "evaluation/simulated_training_step.hpp"

#include <chrono>
#include <map>
#include <string>

#include "core/errors.hpp"
#include "core/roofline.hpp"
#include "core/trace_writer.hpp"
#include "evaluation/backends.hpp"
#include "strategies/training_step_program.hpp"

namespace symmesh::evaluation {
namespace {

using strategies::TrainingLayout;

// The span of the ops labelled `name` (0 when there is none).
double span_s(const RunResult& result, const std::string& name) {
  for (const LabelSpan& span : result.label_spans)
    if (span.name == name) return span.end_s - span.start_s;
  return 0;
}

ClusterSpec with_nodes(ClusterSpec cluster, int nodes) {
  cluster.nodes = nodes;
  return cluster;
}

}  // namespace

SimulatedTrainingStep simulate_training_step(const TransformerSpec& spec, int64_t global_batch,
                                             const ClusterSpec& cluster,
                                             const TrainingLayout& layout) {
  const auto start = std::chrono::steady_clock::now();
  SimulatedTrainingStep out;
  out.estimate = strategies::estimate_training_step(spec, global_batch, cluster, layout);
  const int64_t ops = strategies::replica_stream_ops(spec, global_batch, cluster, layout);
  if (ops > kMaxSimulatedStreamOps) {
    out.replica_stream_ops = ops;
    out.not_simulated = "its replica would hold " + std::to_string(ops) +
                        " stream ops, more than the " + std::to_string(kMaxSimulatedStreamOps) +
                        " simulated at most (" + std::to_string(out.estimate.micro_batches) +
                        " micro-batches per replica)";
    return out;
  }

  sim::SimOptions options;
  options.record_timeline = false;  // millions of ops: only the per-label spans come back
  const auto pool = simulator().make_pool(2);
  std::map<size_t, RunResult> results;
  auto collect = [&] {
    for (sim::SimulationPool::Finished& done : pool->wait()) {
      if (done.error) std::rethrow_exception(done.error);
      results[done.key] = std::move(done.result);
    }
  };
  {
    const strategies::ReplicaProgram replica =
        strategies::replica_program(spec, global_batch, cluster, layout);
    out.replica_ranks = layout.pp * layout.tp;
    out.replica_nodes = replica.nodes;
    out.replica_stream_ops = replica.program.counts().stream_ops;
    pool->start(0, replica.program, with_nodes(cluster, replica.nodes), options);
  }  // the child has its copy
  const strategies::DataParallelProgram ring =
      strategies::data_parallel_program(spec, cluster.gpus_per_node, layout);
  out.data_parallel_ranks = layout.dp > 1 ? layout.tp * layout.dp : 0;
  out.data_parallel_stream_ops = ring.program.counts().stream_ops;
  if (layout.dp > 1) pool->start(1, ring.program, with_nodes(cluster, ring.nodes), options);
  while (!pool->empty()) collect();

  const RunResult& pipeline = results.at(0);
  out.pipeline_s = pipeline.makespan_s;
  out.first_forward_s = span_s(pipeline, strategies::kFirstForwardLabel);
  out.last_backward_s = span_s(pipeline, strategies::kLastBackwardLabel);
  out.optimizer_s = span_s(pipeline, strategies::kFirstStageOptimizerLabel);
  if (layout.dp > 1) {
    const RunResult& dp = results.at(1);
    out.gradients_s = span_s(dp, strategies::kGradientReduceLabel);
    out.weights_s = span_s(dp, strategies::kWeightGatherLabel);
    out.data_parallel = strategies::data_parallel_time(
        layout.zero_stage, out.estimate.micro_batches, out.gradients_s, out.weights_s,
        out.first_forward_s, out.last_backward_s);
  }
  out.step_s = out.pipeline_s + out.data_parallel.exposed_s;
  const int64_t gpus = int64_t{layout.tp} * layout.pp * layout.dp;
  out.tokens_per_s = static_cast<double>(global_batch) * static_cast<double>(spec.seq) / out.step_s;
  out.tokens_per_s_per_gpu = out.tokens_per_s / static_cast<double>(gpus);
  out.mfu = out.tokens_per_s_per_gpu * spec.model_flops_per_token() /
            roofline::peak_flops_per_s(cluster.gpu, spec.dtype);
  out.represented_ranks = gpus;
  out.represented_stream_ops = static_cast<double>(out.replica_stream_ops) * layout.dp +
                               static_cast<double>(out.data_parallel_stream_ops) * layout.pp;
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

std::string training_step_trace_json(const TransformerSpec& spec, int64_t global_batch,
                                     const ClusterSpec& cluster, const TrainingLayout& layout,
                                     std::string& why) {
  why.clear();
  const int64_t ops = strategies::replica_stream_ops(spec, global_batch, cluster, layout);
  if (ops > kMaxTracedStreamOps) {
    why = "its replica holds " + std::to_string(ops) + " stream ops, more than the " +
          std::to_string(kMaxTracedStreamOps) + " a trace is written for";
    return "";
  }
  const strategies::ReplicaProgram replica =
      strategies::replica_program(spec, global_batch, cluster, layout);
  RunRequest request;
  request.record_timeline = true;
  const RunResult result = simulator()
                               .make_backend(with_nodes(cluster, replica.nodes))
                               ->run(replica.program, request);
  return chrome_trace_json(replica.program, result);
}

}  // namespace symmesh::evaluation
