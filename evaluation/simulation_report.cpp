#include "evaluation/simulation_report.hpp"

#include "core/library_collectives.hpp"

#include <string_view>
#include <unordered_map>

#include <algorithm>
#include <map>
#include <cmath>
#include <cstdio>

#include "core/roofline.hpp"
#include "core/text.hpp"
#include "evaluation/dtype_values.hpp"
#include "evaluation/emulation_tolerance.hpp"
#include "scenario/model_expansion.hpp"
#include "strategies/sharded_result.hpp"

namespace symmesh::evaluation {
namespace {

struct EmulationError {
  double max_abs_error = 0;
  std::optional<double> bound;  // matrix ops only
};

// Max |sharded - unsharded| of an emulated matmul, against inputs rounded to its dtype, and
// the error bound of evaluation/emulation_tolerance.hpp: γ_n times the largest element of
// |a||b| + |bias| (the unsharded op on the inputs' magnitudes).
EmulationError emulation_error(const strategies::LoweredOp& op,
                               const strategies::LoweredWorkload& workload,
                               const RunResult& result) {
  const auto& plan = *op.plan;
  const DType dtype = plan.problem.dtype();
  std::vector<std::vector<double>> rounded;
  for (const auto& values : op.global_inputs)
    rounded.push_back(decode_values(encode_values(values, dtype), dtype));
  const auto expected = strategies::unsharded_result(plan.problem, rounded);
  std::vector<std::vector<double>> pieces;
  for (int r = 0; r < workload.mesh.size(); ++r)
    pieces.push_back(decode_values(result.output(op.op->name, op.first_rank + r).bytes, dtype));
  const TensorSpec out{op.lowered->output_shape, dtype, op.lowered->output_placements};
  const auto assembled = strategies::assemble_global(out, workload.mesh, pieces);
  EmulationError result_error;
  result_error.max_abs_error = assembled.max_replica_mismatch;
  for (size_t i = 0; i < expected.size(); ++i)
    result_error.max_abs_error =
        std::max(result_error.max_abs_error, std::abs(assembled.values[i] - expected[i]));
  // A bound for matrix ops in the dtypes emulation computes (evaluation/emulation_tolerance.hpp);
  // none for tensor ops and for fp8 (a hardware --check, whose GEMM rounds otherwise).
  const bool bounded =
      dtype == DType::fp64 || dtype == DType::fp32 || dtype == DType::fp16 || dtype == DType::bf16;
  if (!plan.problem.is_tensor_op() && bounded) {
    std::vector<std::vector<double>> magnitudes = rounded;
    for (auto& values : magnitudes)
      for (double& v : values) v = std::abs(v);
    double largest = 0;
    for (double v : strategies::unsharded_result(plan.problem, magnitudes))
      largest = std::max(largest, v);
    const auto& inputs = plan.problem.inputs;
    const int64_t k = plan.problem.equation()
                          .local_gemm(inputs.at(plan.problem.lhs_index()).shape,
                                      inputs.at(plan.problem.rhs_index()).shape)
                          .k;
    // Nothing to sum (a zero-size dim, or zero inputs): the result is exactly zero, whatever
    // γ_n is (infinite in bf16 for a long k, and inf x 0 is no bound).
    result_error.bound =
        largest == 0 ? 0.0 : higham_gamma(matmul_rounding_count(k), unit_roundoff(dtype)) * largest;
  }
  return result_error;
}

std::string cluster_line(const ClusterSpec& c) {
  std::string line = std::to_string(c.nodes) + " node" + (c.nodes > 1 ? "s" : "") + " x " +
                     std::to_string(c.gpus_per_node) + " " + c.gpu.name + " (" + c.intra_node.kind;
  if (c.nodes > 1) line += ", " + c.inter_node.kind;
  return line + ")";
}

// The tensor input `k` of a planned op reads: its name in version 2, else a/b/bias.
std::string input_name(const WorkloadOp& op, const strategies::Plan& plan, int k) {
  const auto& problem = plan.problem;
  // A tensor op's inputs are a, b and bias in order (strategies/workload_lowering.cpp).
  const int bias = problem.is_tensor_op() ? 2 : problem.bias_index();
  const std::string& named = k == problem.lhs_index()   ? op.a_tensor
                             : k == problem.rhs_index() ? op.b_tensor
                             : k == bias                ? op.bias_tensor
                                                        : op.output_tensor;
  return named.empty() ? problem.input_names().at(k) : named;
}

PaidRedistribution paid(const strategies::PlannedRedistribution& r, std::string tensor,
                        const DeviceMesh& mesh) {
  PaidRedistribution out;
  out.tensor = std::move(tensor);
  out.from = r.redistribution.from;
  out.to = r.redistribution.to;
  for (size_t i = 0; i < r.redistribution.steps.size(); ++i) {
    const RedistributionStep& step = r.redistribution.steps[i];
    const std::string dim = mesh.dim_names().empty() ? std::to_string(step.mesh_dim)
                                                     : mesh.dim_names().at(step.mesh_dim);
    out.steps += (i ? ", " : "") + to_string(step.collective) + " over " + dim;
    if (step.buffer_bytes) out.steps += " (" + format_bytes(step.buffer_bytes) + ")";
    if (i < r.step_cost_us.size()) out.estimated_us += r.step_cost_us[i];
  }
  return out;
}

StepReport step_report(const strategies::PlannedWorkload& planned, const ClusterSpec& cluster) {
  const strategies::StepLayout& layout = *planned.layout;
  StepReport out;
  out.peak_memory_bytes = layout.memory.peak_bytes();
  out.memory_breakdown = strategies::memory_breakdown_text(layout.memory);
  out.capacity_bytes = static_cast<int64_t>(cluster.gpu.memory_capacity_bytes);
  out.gpu = cluster.gpu.name;
  out.serial_estimate_s = layout.serial_cost_us * 1e-6;
  out.overlapped_estimate_s = layout.step_cost_us * 1e-6;
  if (planned.price) out.priced_step_s = planned.price->step_us * 1e-6;
  out.layouts_priced = layout.stats.layouts_priced;
  out.states_expanded = layout.stats.states_expanded;
  out.search_s = layout.stats.seconds;
  out.beam_width = layout.stats.beam_width;
  out.gradient_reductions = static_cast<int>(layout.reductions.size());
  out.peak_op = planned.peak_op;
  out.pipeline_stages = planned.stages;
  out.micro_batches = planned.micro_batches;
  out.virtual_stages = planned.virtual_stages;
  out.bubble_fraction = static_cast<double>(planned.stages - 1) /
                        (static_cast<double>(planned.virtual_stages) * planned.micro_batches);
  for (const strategies::StepMemory& m : layout.stage_memory)
    out.stage_peak_bytes.push_back(m.peak_bytes());
  if (planned.stages > 1)
    out.memory_breakdown =
        "stage " + std::to_string(layout.memory.stage) + ": " + out.memory_breakdown;
  return out;
}

// Fills exposed_comm_s of a dataflow step's ops (see OpReport).
void add_exposed_communication(const strategies::PlannedWorkload& planned,
                               std::vector<OpReport>& ops) {
  // Main-stream op spans by pipeline stage, in schedule order: a reduction hides only
  // under its own stage's compute.
  std::vector<std::vector<std::pair<double, double>>> busy(std::max(1, planned.stages));
  // The earlier micro-batches' row, when there is one, comes before the planned ops'.
  const size_t first = ops.size() - planned.on_comm_stream.size();
  const auto stage_of = [&](size_t i) {
    return i >= first && !planned.stage.empty() ? planned.stage.at(i - first) : 0;
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    ops[i].on_comm_stream = i >= first && planned.on_comm_stream.at(i - first);
    if (!ops[i].on_comm_stream) {
      busy[stage_of(i)].emplace_back(ops[i].start_s, ops[i].end_s);
      ops[i].exposed_comm_s = std::max(0.0, ops[i].time_s - ops[i].compute_time_s);
    }
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    OpReport& op = ops[i];
    if (!op.on_comm_stream) continue;
    double hidden_s = 0;  // main-stream spans of one stage do not overlap (one stream)
    for (const auto& [start, end] : busy[stage_of(i)])
      hidden_s += std::max(0.0, std::min(end, op.end_s) - std::max(start, op.start_s));
    op.exposed_comm_s = std::max(0.0, op.time_s - hidden_s);
  }
}

}  // namespace

SimulationReport build_simulation_report(const Scenario& scenario,
                                         const strategies::LoweredWorkload& workload,
                                         const RunResult& result, bool emulated,
                                         const CollectivesChoice& collectives, bool on_hardware) {
  SimulationReport report;
  report.scenario = scenario.name;
  report.cluster = cluster_line(scenario.cluster);
  report.cluster_spec = scenario.cluster;
  // The whole mesh (a pipeline's stages included), as the scenario gives it.
  report.mesh = to_string(DeviceMesh(scenario.mesh_shape, scenario.mesh_names));
  report.cost_model = scenario.cost_model;
  report.cost_model_note = scenario.cost_model_note();
  report.placement_search = scenario.placement_search;
  const Program& program = workload.program;
  report.folded_replicas = program.folding().replicas;
  report.simulated_ranks = program.world_size() / report.folded_replicas;
  report.total_time_s = result.makespan_s;
  report.warnings = result.warnings;
  for (const auto& h : result.hazards) report.warnings.push_back("hazard: " + h.to_string());
  report.collectives =
      count_collectives(workload.program.collectives(), [&](const CollectiveRecord& r) {
        return on_hardware
                   ? collectives.implementation_of(r)
                   : simulated_implementation(scenario.cluster, collectives, workload.program, r);
      });

  // Each op's span by name, found once (a scan per op made 100,000-op reports quadratic);
  // a name with several spans takes the last, as the scan did.
  std::unordered_map<std::string_view, const LabelSpan*> span_of;
  span_of.reserve(result.label_spans.size());
  for (const LabelSpan& span : result.label_spans) span_of[span.name] = &span;

  // Gradient accumulation: the micro-batches before the last, as one row first.
  if (workload.planned && workload.planned->micro_batches > 1) {
    OpReport r;
    r.name = strategies::kEarlierMicroBatches;
    r.op = "micro_batches";
    r.micro_batches = workload.planned->micro_batches - 1;
    // One span per op and micro-batch: the row runs from the first's start to the last's
    // end; its communication and compute are the busiest stage's sums of each op's busiest
    // rank (a stage's ranks do the same work, so that is its busiest rank's time).
    bool any = false;
    std::map<int, std::pair<double, double>> by_stage;  // stage -> (comm, compute)
    for (const auto& label : workload.earlier_labels) {
      const auto found = span_of.find(label.name);
      if (found == span_of.end()) continue;
      const LabelSpan& span = *found->second;
      r.start_s = any ? std::min(r.start_s, span.start_s) : span.start_s;
      r.end_s = any ? std::max(r.end_s, span.end_s) : span.end_s;
      by_stage[label.stage].first += span.busiest_comm_s;
      by_stage[label.stage].second += span.busiest_compute_s;
      any = true;
    }
    for (const auto& [stage, sums] : by_stage) {
      r.comm_time_s = std::max(r.comm_time_s, sums.first);
      r.compute_time_s = std::max(r.compute_time_s, sums.second);
    }
    r.time_s = r.end_s - r.start_s;
    report.ops.push_back(r);
  }
  for (const auto& lowered : workload.ops) {
    const WorkloadOp& op = *lowered.op;
    OpReport r;
    r.name = op.name;
    r.op = to_string(op.kind);
    r.peak_memory_bytes_per_rank = lowered.peak_memory_bytes_per_rank;
    r.bytes = is_planned(op.kind) ? 0 : op.bytes;
    if (const auto found = span_of.find(op.name); found != span_of.end()) {
      const LabelSpan& span = *found->second;
      r.time_s = span.end_s - span.start_s;
      r.start_s = span.start_s;
      r.end_s = span.end_s;
      r.comm_time_s = span.busiest_comm_s;
      r.compute_time_s = span.busiest_compute_s;
    }
    if (const auto kind = bandwidth_collective(r.op); kind && is_collective(op.kind)) {
      r.group_size = workload.mesh.size(op.mesh_dim);
      r.bandwidth = collective_bandwidth(*kind, op.bytes, r.group_size, r.time_s);
    }
    if (lowered.plan) {
      r.input_placements = lowered.plan->chosen_candidate().input_placements;
      r.output_placements = lowered.plan->chosen_candidate().output_placements;
      if (lowered.plan->problem.output_target)
        r.out_placements = lowered.plan->problem.output_target;
      r.implementation = to_string(lowered.plan->chosen_candidate().implementation);
      r.chunks = lowered.plan->chosen_candidate().chunks;
      if (emulated) {
        const EmulationError e = emulation_error(lowered, workload, result);
        r.max_abs_error = e.max_abs_error;
        r.error_bound = e.bound;
      }
      for (const auto& paid_for : lowered.plan->redistributions)
        r.redistributions.push_back(
            paid(paid_for, input_name(op, *lowered.plan, paid_for.input), workload.mesh));
      if (lowered.plan->output_redistribution)
        r.redistributions.push_back(paid(*lowered.plan->output_redistribution,
                                         op.output_tensor.empty() ? "out" : op.output_tensor,
                                         workload.mesh));
    }
    report.ops.push_back(r);
  }
  if (workload.planned && workload.planned->layout) {
    report.step = step_report(*workload.planned, scenario.cluster);
    add_exposed_communication(*workload.planned, report.ops);
  }
  report.model = model_throughput(scenario, report.total_time_s);
  return report;
}

std::optional<ModelThroughput> model_throughput(const Scenario& scenario, double step_s) {
  if (!scenario.model || !(step_s > 0)) return std::nullopt;
  const TransformerSpec& m = *scenario.model;
  const int64_t dp = scenario::data_parallel_size(scenario.mesh_shape, scenario.mesh_names);
  ModelThroughput out;
  out.model = m.name;
  out.recompute = m.full_recompute ? Recompute::full : Recompute::none;
  out.tokens_per_step = dp * scenario::sequences_per_replica(m, dp, "model") * m.seq *
                        (scenario.training ? scenario.training->micro_batch_count() : 1);
  out.tokens_per_s = static_cast<double>(out.tokens_per_step) / step_s;
  out.tokens_per_s_per_gpu = out.tokens_per_s / scenario.cluster.num_gpus();
  out.model_flops_per_s_per_gpu = out.tokens_per_s_per_gpu * m.model_flops_per_token();
  out.mfu =
      out.model_flops_per_s_per_gpu / roofline::peak_flops_per_s(scenario.cluster.gpu, m.dtype);
  return out;
}

std::optional<EmulationVerdict> emulation_verdict(const SimulationReport& report) {
  std::optional<EmulationVerdict> out;
  for (const OpReport& op : report.ops) {
    if (!op.max_abs_error) continue;
    if (!out) out.emplace();
    if (!op.error_bound || !std::isfinite(*op.error_bound)) {
      ++out->unbounded;
      continue;
    }
    ++out->checked;
    // NaN is no pass: !(error <= bound).
    if (!(*op.max_abs_error <= *op.error_bound)) out->failed.push_back(op.name);
  }
  return out;
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
