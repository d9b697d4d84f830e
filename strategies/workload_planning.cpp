// plan_workload (strategies/workload_lowering.hpp): every matmul's plan, and for a
// version-2 step the layout search over its dataflow graph, its gradient reductions,
// optimizer updates, ZeRO gathers and stage transfers as workload ops, and its price
// (strategies/planned_step_price.hpp). workload_lowering.cpp writes what this plans.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/collectives.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "strategies/dataflow_graph.hpp"
#include "strategies/pipeline_transfers.hpp"
#include "strategies/planned_step_price.hpp"
#include "strategies/step_memory.hpp"
#include "strategies/workload_lowering.hpp"

namespace symmesh::strategies {
namespace {

// The workload op kind that runs `collective` (the inverse of collective_op_of).
OpKind op_kind_of(CollectiveOp collective) {
  for (OpKind kind : all_op_kinds())
    if (is_collective(kind) && collective_op_of(kind) == collective) return kind;
  throw InvalidArgument("no workload op runs " + to_string(collective), "gradient reduction");
}

std::string read_name(const DataflowGraph& graph, const GraphInput& in) {
  return graph.tensors.at(in.tensor).name + (in.transposed ? "^T" : "");
}

}  // namespace

LayoutSearchOptions layout_search_options(const Scenario& scenario, const CostModel& model,
                                          const PlanningOptions& options) {
  LayoutSearchOptions search;
  search.beam_width = options.beam_width;
  search.memory_capacity_bytes = static_cast<int64_t>(scenario.cluster.gpu.memory_capacity_bytes);
  search.gpus_per_node = scenario.cluster.gpus_per_node;
  // Ops marked with their layer (a model's expansion marks every decoder-layer op): each
  // layer slot is planned once.
  search.periodic_layers = std::any_of(scenario.workload.begin(), scenario.workload.end(),
                                       [](const WorkloadOp& op) { return op.layer >= 0; });
  if (explainer_of(model)) search.gpu = scenario.cluster.gpu;  // a model that prices compute
  search.cluster = scenario.cluster;  // a pipelined step's finalists priced by their schedule
  return search;
}

namespace {

// The graph's ops with the searched layout, as workload ops with plans; each gradient
// reduction follows the op that made its gradient, one collective per step that moves data.
void plan_dataflow(const Scenario& scenario, const CostModel& model, const PlanningOptions& options,
                   PlannedWorkload& out) {
  const DataflowGraph graph = build_dataflow_graph(scenario);
  StepLayout layout =
      search_layout(graph, out.mesh, model, layout_search_options(scenario, model, options));
  if (!layout.fits)
    throw DoesNotFit(
        "scenario '" + scenario.name + "' " +
            does_not_fit_text(
                layout.memory.peak_bytes(),
                memory_breakdown_text(layout.memory) + ", in its least-memory layout" +
                    (graph.stages > 1 ? ", on pipeline stage " + std::to_string(layout.memory.stage)
                                      : ""),
                scenario.cluster),
        // A model's step is generated from its model: block: the message points there.
        scenario.model_where_text());
  out.dataflow = true;
  out.stages = graph.stages;
  out.virtual_stages = graph.virtual_stages;
  std::vector<size_t> planned_index(graph.ops.size());  // graph op -> its planned op
  // Every planned op's stage and phase, pushed beside it.
  const auto placed = [&](int stage, int chunk, StepPhase phase) {
    out.stage.push_back(stage);
    out.chunk.push_back(chunk);
    out.phase.push_back(phase);
    out.gather_reader.push_back(-1);
    out.every_micro_batch.push_back(false);
    out.gather_unit.push_back(-1);
  };
  // A parameter whose final gradient an op made, and the op, for its update, names and
  // messages.
  struct Finished {
    TensorId parameter = -1;
    const WorkloadOp* source = nullptr;
    DType dtype = DType::bf16;  // the op's
    int stage = 0;              // where the parameter lives
    int chunk = 0;
  };
  std::vector<Finished> finished;
  // Each gradient bucket's collectives, then (ZeRO) the updated parameters' gathers:
  // "<bucket>.grad_<collective>" and "<bucket>.param_<collective>" (ZeRO-3: a unit's,
  // "<unit>.param_<collective>.<op>"), numbered when there are several steps. A group of one
  // parameter is named by it, a larger one by its first and last ("w_norm..l30_w_up", in
  // the order the backward made them or the unit reads them).
  const auto group_name = [&](size_t size, TensorId first, TensorId last) {
    const std::string& name = graph.tensors.at(first).name;
    return size == 1 ? name : name + ".." + graph.tensors.at(last).name;
  };
  const auto bucket_name = [&](const GradientBucket& b) {
    return group_name(b.members.size(), layout.reductions.at(b.members.front()).parameter,
                      layout.reductions.at(b.members.back()).parameter);
  };
  // Local steps and steps on size-1 mesh dims move nothing (moving_steps leaves them out):
  // no op, and no number.
  const auto add_steps = [&](const std::string& name, const std::vector<BucketStep>& moving,
                             const std::string& what, const Finished& from, int reader,
                             StepPhase phase, const std::string& suffix = "") {
    for (size_t n = 0; n < moving.size(); ++n) {
      const BucketStep& step = moving[n];
      const auto collective = collective_op_of(step.collective);
      WorkloadOp c;
      c.name = name + what + to_string(step.collective) +
               (moving.size() > 1 ? "." + std::to_string(n) : "") + suffix;
      c.kind = op_kind_of(*collective);
      c.bytes = step.buffer_bytes;
      c.mesh_dim = step.mesh_dim;
      c.where = from.source->where;
      c.dtype = from.dtype;
      out.ops.push_back(std::move(c));
      out.plans.emplace_back();
      out.on_comm_stream.push_back(true);
      out.reads.emplace_back();
      placed(from.stage, from.chunk, phase);
      out.gather_reader.back() = reader;
    }
  };
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const GraphOp& g = graph.ops[i];
    planned_index[i] = out.ops.size();
    const StepPhase phase = g.pass == Pass::forward ? StepPhase::forward : StepPhase::backward;
    if (g.output < 0) {
      out.ops.push_back(*g.source);
      out.plans.emplace_back();
      out.on_comm_stream.push_back(false);
      out.reads.emplace_back();
      placed(g.stage, g.chunk, phase);
      continue;
    }
    const OpLayout& l = *layout.ops[i];
    const OpProblem& problem = l.problem;
    // ZeRO-3: the shards of its unit's weights gathered before its first reader, in every
    // micro-batch ("<parameter>.param_<collective>.<op>", or "<first>..<last>.param_…" for
    // several; planned before it, the lowering prefetches).
    if (graph.zero_stage == 3) {
      const size_t first_gather = out.ops.size();
      for (const UnitGather& u : layout.unit_gathers) {
        if (u.first_op != static_cast<int>(i)) continue;
        const std::string name =
            group_name(u.reads.size(), u.reads.front().first, u.reads.back().first);
        add_steps(name, u.steps, ".param_", {u.reads.front().first, g.source, g.dtype, g.stage,
                                             g.chunk},
                  -1, phase, "." + g.name);
      }
      for (size_t x = first_gather; x < out.ops.size(); ++x) {
        out.gather_reader[x] = static_cast<int>(out.ops.size());  // the op pushed next
        out.every_micro_batch[x] = true;
      }
    }
    const int unit = i < layout.timings.size() ? layout.timings[i].gather_unit : -1;
    WorkloadOp w;
    w.name = g.name;
    w.kind = g.kind;
    w.where = g.source->where;
    w.dtype = g.dtype;
    w.attrs = g.attrs;
    const auto input = [&](int k, Shape& shape, Placements& placements, std::string& name) {
      if (k < 0 || k >= static_cast<int>(problem.inputs.size())) return;
      shape = problem.inputs[k].shape;
      placements = problem.inputs[k].placements;
      name = read_name(graph, g.inputs[k]);
    };
    // A tensor op's inputs in order as a, b and (its third) bias: names for reports.
    input(problem.lhs_index(), w.a, w.a_placements, w.a_tensor);
    input(problem.rhs_index(), w.b, w.b_placements, w.b_tensor);
    if (problem.has_bias() || problem.inputs.size() == 3)
      input(problem.is_tensor_op() ? 2 : problem.bias_index(), w.bias.emplace(), w.bias_placements,
            w.bias_tensor);
    w.out_placements = problem.output_target;
    w.output_tensor = graph.tensors[g.output].name;
    out.ops.push_back(std::move(w));
    out.plans.push_back(build_plan_with(problem, model, l.candidate));
    out.on_comm_stream.push_back(false);
    placed(g.stage, g.chunk, phase);
    out.gather_unit.back() = unit;
    auto& reads = out.reads.emplace_back();
    for (const GraphInput& in : g.inputs)
      reads.push_back({graph.tensors[in.tensor].name, in.transposed});
    // A parameter's final gradient: reduced on the comm stream as soon as it is made.
    const GraphTensor& made = graph.tensors[g.output];
    if (!made.is_parameter_gradient || !made.consumers.empty()) continue;
    finished.push_back({made.of, g.source, g.dtype, g.stage, g.chunk});
    // The bucket this gradient fills, if it is the last: its reduction, one collective for
    // all its gradients (strategies/gradient_buckets.hpp).
    for (const GradientBucket& b : layout.buckets) {
      if (b.after_op != static_cast<int>(i)) continue;
      const size_t first = out.ops.size();
      add_steps(bucket_name(b), b.steps, ".grad_", finished.back(), -1, StepPhase::backward);
      // ZeRO-2 and 3 reduce-scatter each micro-batch's gradients as it makes them.
      for (size_t x = first; x < out.ops.size(); ++x)
        out.every_micro_batch[x] = graph.reduces_every_micro_batch();
    }
  }
  // The optimizer step, as Megatron-LM runs it: once every gradient is reduced, each
  // parameter updated where its optimizer state is ("<parameter>.adam" or ".sgd", on the
  // main stream), and (ZeRO) the updated parameter gathered back on the comm stream.
  for (const Finished& f : finished) {
    WorkloadOp update;
    update.name = graph.tensors[f.parameter].name + "." + to_string(graph.optimizer);
    update.kind = OpKind::optimizer_step;
    update.bytes =
        optimizer_update_bytes(graph, f.parameter, layout.placements[f.parameter], out.mesh);
    update.where = f.source->where;
    update.dtype = graph.tensors[f.parameter].dtype;
    if (update.bytes > 0) {
      out.ops.push_back(std::move(update));
      out.plans.emplace_back();
      out.on_comm_stream.push_back(false);
      out.reads.emplace_back();
      placed(f.stage, f.chunk, StepPhase::after);
    }
  }
  // ZeRO-1 and 2: each bucket's updated parameters gathered back, before the first op that
  // reads one of them.
  for (const GradientBucket& b : layout.buckets) {
    if (b.gather_steps.empty()) continue;
    const GraphOp& closing = graph.ops.at(b.after_op);
    add_steps(bucket_name(b), b.gather_steps, ".param_",
              {-1, closing.source, closing.dtype, b.stage, b.chunk},
              b.first_reader < 0 ? -1 : static_cast<int>(planned_index.at(b.first_reader)),
              StepPhase::after);
  }
  const std::vector<StageTransfer> transfers = stage_transfers(graph, layout.placements, out.mesh);
  for (const StageTransfer& x : transfers)
    out.transfers.push_back({graph.tensors[x.tensor].name, x.from_stage, x.to_stage,
                             planned_index[x.producer], x.to_chunk, x.bytes, x.sent_in_forward,
                             x.read_in_forward});
  const int peak = layout.memory.peak_op;
  if (peak >= 0 && graph.ops[peak].output >= 0) out.peak_op = graph.ops[peak].name;
  out.price = price_planned_step(graph, layout, transfers, out.mesh, scenario.cluster);
  out.layout = std::move(layout);
  out.micro_batches = graph.micro_batches;
}

}  // namespace

std::string does_not_fit_text(int64_t need_bytes, const std::string& what,
                              const ClusterSpec& cluster) {
  return "needs " + format_bytes(need_bytes) + " per GPU (" + what + "); " + cluster.gpu.name +
         " has " + format_bytes(static_cast<int64_t>(cluster.gpu.memory_capacity_bytes));
}

OpProblem matmul_problem(const Scenario& scenario, const WorkloadOp& op, const DeviceMesh& mesh) {
  OpProblem problem;
  if (!is_matmul(op.kind))
    throw InvalidArgument("not a matrix op: " + to_string(op.kind), op.where.to_string());
  problem.op = op.kind;
  problem.mesh = mesh;
  const DType dtype = scenario.dtype_of(op);
  std::optional<TensorSpec> bias;
  if (op.bias) bias = TensorSpec{*op.bias, dtype, op.bias_placements};
  problem.inputs = matmul_signature(op.kind).inputs_in_order(
      {op.a, dtype, op.a_placements}, {op.b, dtype, op.b_placements}, std::move(bias));
  problem.output_target = op.out_placements;
  problem.work_fraction = op.work_fraction();
  return problem;
}

PlannedWorkload plan_workload(const Scenario& scenario, const CostModel& model,
                              const PlanningOptions& options) {
  PlannedWorkload out;
  out.mesh = DeviceMesh(scenario.mesh_shape, scenario.mesh_names);
  if (out.mesh.size() != scenario.cluster.num_gpus())
    throw InvalidArgument("mesh " + to_string(out.mesh) + " has " +
                              std::to_string(out.mesh.size()) + " ranks but the cluster has " +
                              std::to_string(scenario.cluster.num_gpus()) + " GPUs",
                          scenario.where());
  if (scenario.is_dataflow()) {
    out.mesh = DeviceMesh(scenario.stage_mesh_shape(), scenario.stage_mesh_names());
    plan_dataflow(scenario, model, options, out);
    return out;
  }
  const PlacementSelection selection =
      parse_placement_selection(scenario.placement_search, "placement_search");
  for (const WorkloadOp& op : scenario.workload) {
    out.ops.push_back(op);
    out.on_comm_stream.push_back(false);
    auto& plan = out.plans.emplace_back();
    if (!is_matmul(op.kind)) continue;
    const OpProblem problem = matmul_problem(scenario, op, out.mesh);
    try {
      problem.validate();
    } catch (const InvalidArgument& e) {
      throw InvalidArgument("op '" + op.name + "': " + e.what(), op.where.to_string());
    }
    plan = build_plan(problem, model, selection);
  }
  return out;
}

}  // namespace symmesh::strategies
