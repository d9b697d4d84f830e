#include "strategies/workload_lowering.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <unordered_set>

#include "core/collectives.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "strategies/dataflow_graph.hpp"
#include "strategies/pipeline_schedule.hpp"
#include "strategies/pipeline_transfers.hpp"
#include "strategies/sharded_result.hpp"
#include "strategies/step_memory.hpp"
#include "strategies/step_values.hpp"

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

// A parameter's optimizer update (OpKind::optimizer_step) on the main stream of the `ranks`
// ranks from first_rank (its pipeline stage's),
// after everything on the comm stream so far when `after_comm`, as the
// HBM traffic `op.bytes` in copies (a copy reads and writes its bytes) between the halves
// of a buffer that stands for the optimizer state, one per kernel: Adam's fused update and
// its master-weight copy, or SGD's one (core/optimizer_step.hpp).
void lower_optimizer_step(Program& program, int first_rank, int ranks, const WorkloadOp& op,
                          const Scenario& scenario, bool after_comm) {
  const int kernels =
      optimizer_update_kernels(scenario.training ? scenario.training->optimizer : Optimizer::adam);
  const int64_t copy_bytes = std::max<int64_t>(1, op.bytes / (2 * kernels));
  const OpLabel label{op.name, OpCategory::compute, "optimizer update"};
  const OpLabel sync{op.name, OpCategory::sync, "after the gradient reductions"};
  for (int r = first_rank; r < first_rank + ranks; ++r) {
    const StreamId main = program.stream(r, "main");
    if (after_comm)
      program.wait_event(r, main, program.record_event(r, program.stream(r, "comm"), sync), sync);
    const BufferRef state = program.local_alloc(r, 2 * copy_bytes);
    for (int k = 0; k < kernels; ++k) {
      CopyWork copy;
      copy.src = state.slice(0, copy_bytes);
      copy.dst = state.slice(copy_bytes, copy_bytes);
      copy.row_bytes = copy_bytes;
      program.copy(r, main, copy, label);
    }
  }
}

// Signal indices of the streams that may signal at once on one group (a group's counters
// are shared by its buffers, core/program.hpp): the main stream's collectives, its
// overlapped matmuls' "main-comm" stream (LoweringOptions: signal + 1), and the gradient
// reductions on "comm".
constexpr int kMainSignal = 0;
constexpr int kGradientSignal = 2;

// The collective op on every group of its mesh dim, on `stream` with signal index `signal`;
// mesh rank r is world rank first_rank + r.
void lower_collective(Program& program, const DeviceMesh& mesh, int first_rank,
                      const WorkloadOp& op, DType dtype, const std::string& stream, int signal) {
  if (op.mesh_dim < 0 || op.mesh_dim >= mesh.ndim())
    throw InvalidArgument(
        "mesh dim " + std::to_string(op.mesh_dim) + " is not in mesh " + to_string(mesh),
        where_of(op));
  const CollectiveOp collective = collective_op_of(op.kind);
  for (std::vector<int> group : mesh.groups(op.mesh_dim)) {
    for (int& rank : group) rank += first_rank;
    const CollectiveSpec spec{
        program.add_group(group), op.bytes, dtype, ReduceOp::sum, stream, op.name, signal};
    run_collective(program, collective, spec);
  }
}

}  // namespace

ReplicaFolding replica_folding(const DeviceMesh& mesh, int dim) {
  const std::vector<int>& shape = mesh.shape();
  if (dim < 0 || dim >= static_cast<int>(shape.size()))
    throw InvalidArgument("no mesh dim " + std::to_string(dim) + " to fold", "workload");
  ReplicaFolding folding;
  folding.replicas = shape[dim];
  for (size_t d = dim + 1; d < shape.size(); ++d) folding.stride *= shape[d];
  return folding;
}

namespace {

// lower_workload; `current` is the index of the op being lowered.
LoweredWorkload lower_ops(const Scenario& scenario, std::shared_ptr<const PlannedWorkload> planned,
                          const WorkloadOptions& options, Program program, size_t& current) {
  if (options.emulate && !options.encode)
    throw InvalidArgument("emulation needs a value encoder", "workload");
  if (options.emulate && planned->dataflow && !options.decode)
    throw InvalidArgument("emulating a dataflow step needs a value decoder", "workload");
  const DeviceMesh& mesh = planned->mesh;
  if (program.world_size() != planned->world_size())
    throw InvalidArgument("a program of " + std::to_string(program.world_size()) +
                              " ranks for a mesh of " + std::to_string(planned->world_size()),
                          "workload");
  if (options.fold_dim >= 0 && options.emulate)
    throw InvalidArgument("a folded step carries no data: emulate it unfolded", "workload");
  if (options.fold_dim >= 0) {
    for (const WorkloadOp& op : planned->ops)
      if (op.kind == OpKind::put_signal)
        throw InvalidArgument("op '" + op.name + "': a put_signal from rank " +
                                  std::to_string(op.src) + " to rank " + std::to_string(op.dst) +
                                  " is not the same in every replica, so the step cannot be "
                                  "folded; simulate it unfolded",
                              where_of(op));
    program.fold_replicas(replica_folding(mesh, options.fold_dim));
  }
  LoweredWorkload out{std::move(program), mesh, {}, planned};
  out.ops.resize(planned->ops.size());
  Program& p = out.program;
  const bool counting = p.is_counting();
  const GroupId world = p.world_group();
  std::mt19937_64 rng(options.seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<int64_t> before(p.world_size());
  const int stage_size = mesh.size();
  const int stages = planned->stages;
  const int64_t micro_batches = planned->micro_batches;
  const auto stage_of = [&](size_t i) { return planned->stage.empty() ? 0 : planned->stage[i]; };
  const auto chunk_of = [&](size_t i) { return planned->chunk.empty() ? 0 : planned->chunk[i]; };
  const auto phase_of = [&](size_t i) {
    return planned->phase.empty() ? StepPhase::forward : planned->phase[i];
  };

  const int64_t capacity = static_cast<int64_t>(scenario.cluster.gpu.memory_capacity_bytes);
  std::vector<bool> comm_used(stages, false);
  std::vector<bool> updating(stages, false);  // an optimizer update has been lowered
  // Gradient accumulation: the micro-batches before the last run every main-stream op, in
  // order, each labelled by its micro-batch and op (earlier_micro_batch_label), timed only:
  // their gradients accumulate into the buffers the last one's reductions read, and
  // emulation checks the last one.
  std::unordered_set<std::string> earlier_seen;
  const auto lower_earlier = [&](size_t i, int first_rank, int64_t micro_batch) {
    current = i;
    WorkloadOp op = planned->ops[i];
    op.name = earlier_micro_batch_label(micro_batch, op.name);
    if (earlier_seen.insert(op.name).second)
      out.earlier_labels.push_back({op.name, stage_of(i)});
    if (is_planned(op.kind)) {
      LoweringOptions lowering;
      lowering.name = op.name;
      lowering.signal = kMainSignal;
      lowering.first_rank = first_rank;
      lower_plan(*planned->plans.at(i), p, lowering);
    } else if (op.kind == OpKind::put_signal) {
      lower_put_signal(p, op);
    } else if (op.kind == OpKind::barrier) {
      p.barrier(world, "main", {op.name, OpCategory::sync, "barrier"});
    } else {
      lower_collective(p, mesh, first_rank, op, scenario.dtype_of(op), "main", kMainSignal);
    }
  };
  // ZeRO-2's and 3's comm-stream ops of an earlier micro-batch (a ZeRO-3 gather, a
  // reduce-scatter), labelled as lower_earlier labels them; a reduce-scatter (`after_main`)
  // once the main stream's work so far is done, a gather when its caller says.
  const auto lower_earlier_comm = [&](size_t i, int first_rank, int64_t micro_batch,
                                      bool after_main) {
    current = i;
    WorkloadOp op = planned->ops[i];
    op.name = earlier_micro_batch_label(micro_batch, op.name);
    if (earlier_seen.insert(op.name).second)
      out.earlier_labels.push_back({op.name, stage_of(i)});
    if (after_main)
      for (int r = first_rank; r < first_rank + stage_size; ++r) {
        const EventId made = p.record_event(r, p.stream(r, "main"), {op.name, OpCategory::sync});
        p.wait_event(r, p.stream(r, "comm"), made, {op.name, OpCategory::sync});
      }
    lower_collective(p, mesh, first_rank, op, scenario.dtype_of(op), "comm", kGradientSignal);
  };
  // Emulation refuses an op whose real buffers would be too large.
  const auto check_emulable = [&](size_t i) {
    const OpProblem& problem = planned->plans.at(i)->problem;
    // Emulated bytes: every rank may end up holding whole inputs and the output.
    int64_t global = numel(problem.output_shape());
    for (const auto& t : problem.inputs) global += numel(t.shape);
    const int64_t need = global * element_size_bytes(problem.dtype()) * mesh.size();
    if (need > options.max_emulated_bytes)
      throw InvalidArgument(
          "op '" + planned->ops[i].name + "' is too large to emulate: up to " +
              std::to_string(need >> 20) + " MiB of real buffers over " +
              std::to_string(mesh.size()) + " ranks (limit " +
              std::to_string(options.max_emulated_bytes >> 20) +
              " MiB); emulation (simulate --emulate, run --check) is meant for small shapes",
          where_of(planned->ops[i]));
  };
  // Dataflow emulation: each op's inputs are the values the step computes
  // (strategies/step_values.hpp).
  std::vector<std::vector<std::vector<double>>> step_inputs;
  if (planned->dataflow && options.emulate && !counting)
    step_inputs = dataflow_step_inputs(*planned, options, rng, check_emulable);
  // ZeRO's parameter gathers, as Megatron-LM's --overlap-param-gather runs them: the weights
  // the previous step updated are gathered on the comm stream while this step's forward
  // runs, each before its first reader, which waits for it (a one-step scenario has no
  // previous step: its own gathers stand in for those, the same bytes). The updates still
  // end the step.
  const auto every_micro_batch = [&](size_t i) {
    return !planned->every_micro_batch.empty() && planned->every_micro_batch[i];
  };
  const auto is_start_gather = [&](size_t i) {
    return !planned->gather_reader.empty() && planned->gather_reader[i] >= 0 &&
           !every_micro_batch(i);
  };
  // By reader: per rank of its stage, the comm-stream event after its weights' gathers.
  std::map<size_t, std::vector<EventId>> gathered;
  const auto wait_for_gathers = [&](size_t reader, int first_rank) {
    const auto it = gathered.find(reader);
    if (it == gathered.end()) return;
    const OpLabel sync{planned->ops[reader].name, OpCategory::sync, "after its weights' gather"};
    for (int r = 0; r < stage_size; ++r)
      p.wait_event(first_rank + r, p.stream(first_rank + r, "main"), it->second[r], sync);
    gathered.erase(it);  // the first micro-batch's reader waits; the later ones follow it
  };
  // The last micro-batch's op i (or the op of a step without accumulation), on the stage
  // whose first world rank is first_rank: checked, measured and (emulating) given values.
  const auto lower_last = [&](size_t i, int first_rank) {
    current = i;
    const WorkloadOp& op = planned->ops[i];
    const int stage = stage_of(i);
    LoweredOp& lowered = out.ops[i];
    lowered.op = &op;
    lowered.first_rank = first_rank;
    for (int r = first_rank; r < first_rank + stage_size; ++r) before[r] = p.allocated_bytes(r);
    if (is_planned(op.kind)) {
      lowered.plan = &*planned->plans.at(i);
      const OpProblem& problem = lowered.plan->problem;
      LoweringOptions lowering;
      lowering.name = op.name;
      lowering.signal = kMainSignal;
      lowering.first_rank = first_rank;
      lowering.carry_data = options.emulate;
      if (options.emulate) {
        check_emulable(i);
        if (!counting)
          for (size_t k = 0; k < problem.inputs.size(); ++k) {
            const TensorSpec& t = problem.inputs[k];
            std::vector<double> values;
            if (planned->dataflow) {
              values = std::move(step_inputs.at(i).at(k));
            } else {
              values.resize(numel(t.shape));
              for (double& v : values) v = value(rng);
            }
            lowering.global_inputs.push_back(options.encode(values, t.dtype));
            lowered.global_inputs.push_back(std::move(values));
          }
      }
      lowered.lowered = lower_plan(*lowered.plan, p, lowering);
    } else if (op.kind == OpKind::put_signal) {
      // Refused before anything is allocated: the source buffer and the symmetric
      // destination (double: twice a huge count does not overflow).
      if (capacity > 0 && 2.0 * static_cast<double>(op.bytes) > static_cast<double>(capacity))
        throw InvalidArgument(
            "op '" + op.name + "' " +
                does_not_fit_text(op.bytes > INT64_MAX / 2 ? INT64_MAX : 2 * op.bytes,
                                  "its source buffer and the symmetric destination",
                                  scenario.cluster),
            where_of(op));
      lower_put_signal(p, op);
    } else if (op.kind == OpKind::barrier) {
      // Version 2: each rank's main stream first waits for its reductions so far.
      if (comm_used[stage])
        for (int r = 0; r < p.world_size(); ++r) {
          const EventId done = p.record_event(r, p.stream(r, "comm"), {op.name, OpCategory::sync});
          p.wait_event(r, p.stream(r, "main"), done, {op.name, OpCategory::sync});
        }
      p.barrier(world, "main", {op.name, OpCategory::sync, "barrier"});
    } else if (op.kind == OpKind::optimizer_step) {
      // The first update waits for every gradient reduction of its stage (they all come
      // before it); the later ones follow it on the main stream.
      lower_optimizer_step(p, first_rank, stage_size, op, scenario,
                           comm_used[stage] && !updating[stage]);
      updating[stage] = true;
    } else if (capacity > 0 && op.bytes > capacity) {
      throw InvalidArgument(
          "op '" + op.name + "' " +
              does_not_fit_text(op.bytes, "its buffer alone, before the algorithm's staging",
                                scenario.cluster),
          where_of(op));
    } else if (planned->on_comm_stream[i]) {
      // A gradient reduction after its gradient is made (the main stream's last op), on the
      // comm stream; a ZeRO gather as the step starts (is_start_gather, above); a ZeRO-3
      // gather when its caller says (prefetched, below).
      const bool zero3_gather = every_micro_batch(i) && planned->gather_reader[i] >= 0;
      if (!is_start_gather(i) && !zero3_gather)
        for (int r = first_rank; r < first_rank + stage_size; ++r) {
          const EventId made = p.record_event(r, p.stream(r, "main"), {op.name, OpCategory::sync});
          p.wait_event(r, p.stream(r, "comm"), made, {op.name, OpCategory::sync});
        }
      lower_collective(p, mesh, first_rank, op, scenario.dtype_of(op), "comm", kGradientSignal);
      comm_used[stage] = true;
    } else {
      lower_collective(p, mesh, first_rank, op, scenario.dtype_of(op), "main", kMainSignal);
    }
    // (An update's buffer stands for the optimizer state the step's memory already holds.)
    if (op.kind != OpKind::optimizer_step)
      for (int r = first_rank; r < first_rank + stage_size; ++r) {
        // A folded rank holds what its copy in replica 0 holds (not allocated for it) and
        // what differs from it (allocated: a local Partial's zeros off coordinate 0).
        const int copy = p.folding().mirror(r);
        const int64_t held = copy == r ? 0 : p.allocated_bytes(copy) - before[copy];
        lowered.peak_memory_bytes_per_rank = std::max(lowered.peak_memory_bytes_per_rank,
                                                      held + p.allocated_bytes(r) - before[r]);
      }
    if (!planned->dataflow) {
      if (capacity > 0 && lowered.peak_memory_bytes_per_rank > capacity)
        throw InvalidArgument(
            "op '" + op.name + "' " +
                does_not_fit_text(lowered.peak_memory_bytes_per_rank,
                                  "its inputs, output and communication buffers", scenario.cluster),
            where_of(op));
      p.barrier(world, "main", {op.name, OpCategory::sync, "end of op"});
    }
  };

  TransferLowering transfers(p, planned->transfers, stage_size, micro_batches);

  // ZeRO-3, by reader: its weights' gathers, run in every micro-batch before it. Each is
  // issued on the comm stream once the first reader of the unit before its own (in its
  // task) has started: FSDP's prefetch, one unit ahead (strategies/step_streams.hpp prices
  // the same rule).
  std::map<size_t, std::vector<size_t>> gathers_of;
  for (size_t x = 0; x < planned->ops.size(); ++x)
    if (every_micro_batch(x) && planned->gather_reader[x] >= 0)
      gathers_of[static_cast<size_t>(planned->gather_reader[x])].push_back(x);
  const auto record_on = [&](int first_rank, const char* stream, const std::string& what) {
    std::vector<EventId> events;
    for (int r = first_rank; r < first_rank + stage_size; ++r)
      events.push_back(p.record_event(r, p.stream(r, stream), {what, OpCategory::sync}));
    return events;
  };
  const auto wait_on = [&](int first_rank, const char* stream, const std::vector<EventId>& events,
                           const std::string& what) {
    for (int r = 0; r < stage_size; ++r)
      p.wait_event(first_rank + r, p.stream(first_rank + r, stream), events[r],
                   {what, OpCategory::sync});
  };

  // Each stage's ZeRO gathers, then its tasks in 1F1B or interleaved order (one stage:
  // forward and backward of each micro-batch in turn), then its updates. Stages hold disjoint
  // ranks, so they are written one after the other; the transfers order them in the run.
  for (int s = 0; s < stages; ++s) {
    const int first_rank = s * stage_size;
    // In the order the forward reads the weights (the planned order is the backward's, in
    // which the gradients were made), so that the first layers' come first.
    std::vector<size_t> start_gathers;
    for (size_t i = 0; i < planned->ops.size(); ++i)
      if (stage_of(i) == s && is_start_gather(i)) start_gathers.push_back(i);
    std::stable_sort(start_gathers.begin(), start_gathers.end(), [&](size_t a, size_t b) {
      return planned->gather_reader[a] < planned->gather_reader[b];
    });
    for (size_t i : start_gathers) {
      lower_last(i, first_rank);
      std::vector<EventId>& after = gathered[static_cast<size_t>(planned->gather_reader[i])];
      after.clear();  // a later gather of the same reader's weights supersedes
      for (int r = first_rank; r < first_rank + stage_size; ++r)
        after.push_back(p.record_event(r, p.stream(r, "comm"),
                                       {planned->ops[i].name, OpCategory::sync, "gathered"}));
    }
    for (const PipelineTask& task :
         stage_schedule(stages, micro_batches, planned->virtual_stages, s)) {
      const bool last = task.micro_batch + 1 == micro_batches;
      const StepPhase phase = task.forward ? StepPhase::forward : StepPhase::backward;
      for (size_t x = 0; x < planned->transfers.size(); ++x)
        if (planned->transfers[x].to_stage == s &&
            planned->transfers[x].read_in_forward == task.forward &&
            planned->transfers[x].to_chunk == task.chunk)
          transfers.receive(x);
      std::vector<size_t> sends;
      // ZeRO-3: the unit gathering now, and when its first reader and the previous unit's
      // started (the task's start before any).
      int unit = Streams::kNoUnit;
      std::vector<EventId> unit_started, previous_unit_started;
      if (!gathers_of.empty())
        unit_started = previous_unit_started = record_on(first_rank, "main", "task start");
      for (size_t i = 0; i < planned->ops.size(); ++i) {
        if (stage_of(i) != s || chunk_of(i) != task.chunk || phase_of(i) != phase) continue;
        if (every_micro_batch(i) && planned->gather_reader[i] >= 0) continue;  // with its reader
        if (task.forward) wait_for_gathers(i, first_rank);
        if (const auto it = gathers_of.find(i); it != gathers_of.end()) {
          const std::string& name = planned->ops[i].name;
          const bool first = planned->gather_unit[i] != unit;
          if (first) {
            unit = planned->gather_unit[i];
            previous_unit_started = unit_started;
          }
          wait_on(first_rank, "comm", previous_unit_started, name);
          for (size_t x : it->second)
            last ? lower_last(x, first_rank)
                 : lower_earlier_comm(x, first_rank, task.micro_batch, false);
          wait_on(first_rank, "main", record_on(first_rank, "comm", name + " gathered"), name);
          comm_used[s] = true;
          if (first) unit_started = record_on(first_rank, "main", name + " starts");
        }
        if (last)
          lower_last(i, first_rank);
        else if (!planned->on_comm_stream[i])
          lower_earlier(i, first_rank, task.micro_batch);
        else if (every_micro_batch(i))  // ZeRO-2/3's reduce-scatter of this micro-batch's
          lower_earlier_comm(i, first_rank, task.micro_batch, true);
        for (size_t x = 0; x < planned->transfers.size(); ++x)
          if (planned->transfers[x].after_op == i) sends.push_back(x);
      }
      // Sent when the task is done, as Megatron-LM's send_forward / send_backward follow
      // forward_step / backward_step (the input's gradient leaves after the weights').
      for (size_t x : sends) transfers.send(x, task.micro_batch);
    }
    for (size_t i = 0; i < planned->ops.size(); ++i)
      if (stage_of(i) == s && phase_of(i) == StepPhase::after && !is_start_gather(i))
        lower_last(i, first_rank);
    if (comm_used[s])  // the step ends when every rank's reductions are done too
      for (int r = first_rank; r < first_rank + stage_size; ++r) {
        const EventId done =
            p.record_event(r, p.stream(r, "comm"), {"end of step", OpCategory::sync});
        p.wait_event(r, p.stream(r, "main"), done, {"end of step", OpCategory::sync});
      }
  }
  return out;
}

}  // namespace

LoweredWorkload lower_workload(const Scenario& scenario,
                               std::shared_ptr<const PlannedWorkload> planned,
                               const WorkloadOptions& options, Program program) {
  size_t current = 0;
  try {
    return lower_ops(scenario, planned, options, std::move(program), current);
  } catch (const TooManyStreamOps& e) {
    // Past the Program's bound: at the op that grew it (a collective, a plan's
    // redistributions).
    if (current >= planned->ops.size()) throw;
    const WorkloadOp& op = planned->ops[current];
    throw InvalidArgument("op '" + op.name + "': " + e.message(), where_of(op));
  }
}

std::string earlier_micro_batch_label(int64_t micro_batch, const std::string& op) {
  return "mb " + std::to_string(micro_batch) + ": " + op;
}

LoweredWorkload lower_workload(const Scenario& scenario, const CostModel& model,
                               const WorkloadOptions& options) {
  auto planned = std::make_shared<const PlannedWorkload>(plan_workload(scenario, model));
  const int world = planned->world_size();
  return lower_workload(scenario, std::move(planned), options, Program(world));
}

}  // namespace symmesh::strategies
