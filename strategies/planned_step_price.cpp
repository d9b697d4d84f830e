#include "strategies/planned_step_price.hpp"

#include <algorithm>
#include <string>

#include "core/errors.hpp"
#include "strategies/analytic_topology.hpp"
#include "strategies/pipeline_schedule.hpp"

namespace symmesh::strategies {

namespace {

// A task's slot: (stage, chunk, direction).
size_t task_slot(int stage, int chunk, bool forward, int virtual_stages) {
  return (static_cast<size_t>(stage) * virtual_stages + chunk) * 2 + (forward ? 0 : 1);
}

// One stage as the schedule walks it.
struct StageClock {
  Streams streams;     // main_us and comm_us are absolute times
  double send_us = 0;  // when its send stream is free
  double busy_us = 0;  // main-stream time its tasks took
  size_t next = 0;     // its next task
  std::vector<PipelineTask> tasks;
};

}  // namespace

PlannedStepPrice price_schedule(const std::vector<ScheduledOp>& ops,
                                const std::vector<ScheduledTransfer>& transfers, int stages,
                                int64_t micro_batches, int virtual_stages,
                                bool reduce_every_micro_batch) {
  const std::string where = "planned step price";
  if (stages < 1 || micro_batches < 1 || virtual_stages < 1)
    throw InvalidArgument("stages " + std::to_string(stages) + ", micro-batches " +
                              std::to_string(micro_batches) + " and virtual stages " +
                              std::to_string(virtual_stages) + " must each be >= 1",
                          where);
  const size_t slots = static_cast<size_t>(stages) * virtual_stages * 2;
  std::vector<std::vector<int>> ops_of(slots);  // by task slot, in op order
  PlannedStepPrice out;
  out.stage_forward_us.assign(stages, 0.0);
  out.stage_backward_us.assign(stages, 0.0);
  for (size_t i = 0; i < ops.size(); ++i) {
    const ScheduledOp& op = ops[i];
    if (op.stage < 0 || op.stage >= stages || op.chunk < 0 || op.chunk >= virtual_stages)
      throw InvalidArgument("op " + std::to_string(i) + " is on stage " +
                                std::to_string(op.stage) + ", chunk " + std::to_string(op.chunk) +
                                ": outside " + std::to_string(stages) + " stages of " +
                                std::to_string(virtual_stages) + " chunks",
                            where);
    ops_of[task_slot(op.stage, op.chunk, op.forward, virtual_stages)].push_back(
        static_cast<int>(i));
    (op.forward ? out.stage_forward_us : out.stage_backward_us)[op.stage] += op.timing.main_us;
  }
  // By task slot: the transfers it sends (in op order) and those it waits for.
  std::vector<std::vector<size_t>> sends(slots), receives(slots);
  for (size_t x = 0; x < transfers.size(); ++x) {
    const ScheduledTransfer& t = transfers[x];
    if (t.producer < 0 || t.producer >= static_cast<int>(ops.size()) || t.to_stage < 0 ||
        t.to_stage >= stages || t.to_chunk < 0 || t.to_chunk >= virtual_stages)
      throw InvalidArgument("transfer " + std::to_string(x) + " names an op, stage or chunk " +
                                "outside the step",
                            where);
    const ScheduledOp& from = ops[t.producer];
    sends[task_slot(from.stage, from.chunk, from.forward, virtual_stages)].push_back(x);
    receives[task_slot(t.to_stage, t.to_chunk, t.read_in_forward, virtual_stages)].push_back(x);
  }
  for (auto& s : sends)
    std::stable_sort(s.begin(), s.end(), [&](size_t a, size_t b) {
      return transfers[a].producer < transfers[b].producer;
    });
  // When each transfer of each micro-batch has arrived; negative while not sent.
  std::vector<std::vector<double>> arrival(transfers.size(),
                                           std::vector<double>(micro_batches, -1.0));
  std::vector<StageClock> clocks(stages);
  for (int s = 0; s < stages; ++s)
    clocks[s].tasks = stage_schedule(stages, micro_batches, virtual_stages, s);
  // ZeRO's gathers as the step starts: when each reader's weights are in.
  std::vector<double> gathered(ops.size(), 0.0);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].gather_us() <= 0) continue;
    Streams& streams = clocks[ops[i].stage].streams;
    streams.comm_us += ops[i].gather_us();
    for (uint32_t bit : {1u, 2u})
      if (const double us = ops[i].gather_link_us[link_class_index(bit)]; us > 0) {
        streams.comm_links |= bit;
        streams.queued_link_us[link_class_index(bit)] += us;
      }
    gathered[i] = streams.comm_us;
  }

  // Each pass runs every stage's tasks whose transfers have arrived; 1F1B never waits on
  // itself, so each pass runs at least one task.
  for (bool progress = true; progress;) {
    progress = false;
    for (int s = 0; s < stages; ++s) {
      StageClock& clock = clocks[s];
      while (clock.next < clock.tasks.size()) {
        const PipelineTask& task = clock.tasks[clock.next];
        const size_t slot = task_slot(s, task.chunk, task.forward, virtual_stages);
        double start = clock.streams.main_us;
        bool ready = true;
        for (size_t x : receives[slot]) {
          const double at = arrival[x][task.micro_batch];
          if (at < 0) ready = false;
          start = std::max(start, at);
        }
        if (!ready) break;
        clock.streams.main_us = start;
        clock.streams.start_units(start);  // ZeRO-3's first unit gathers from the task's start
        // The gradients' reductions and the updates run once, in the last micro-batch
        // (ZeRO-2 and 3: the reductions in every one).
        const bool last = task.micro_batch + 1 == micro_batches;
        for (int i : ops_of[slot]) {
          if (task.micro_batch == 0)
            clock.streams.main_us = std::max(clock.streams.main_us, gathered[i]);
          OpTiming t = ops[i].timing;
          if (!last) t.update_us = 0;
          if (!last && !reduce_every_micro_batch) t.reduction_us = 0, t.reduction_links = 0;
          clock.streams = clock.streams.after(t, 1);
        }
        clock.busy_us += clock.streams.main_us - start;
        for (size_t x : sends[slot]) {
          clock.send_us = std::max(clock.send_us, clock.streams.main_us) + transfers[x].us;
          arrival[x][task.micro_batch] = clock.send_us;
        }
        ++clock.next;
        progress = true;
      }
    }
  }
  for (int s = 0; s < stages; ++s) {
    const StageClock& clock = clocks[s];
    if (clock.next < clock.tasks.size())
      throw Error("stage " + std::to_string(s) + " waits on a transfer no stage sends before it " +
                      "(micro-batch " + std::to_string(clock.tasks[clock.next].micro_batch) + ")",
                  where);
    const double end = clock.streams.step_us();
    out.pipeline_us = std::max(out.pipeline_us, clock.streams.main_us);
    if (s == 0 || end > out.step_us) {
      out.step_us = end;
      out.last_stage = s;
      out.bubble_us = clock.streams.main_us - clock.busy_us;
      out.exposed_comm_us = std::max(0.0, clock.streams.comm_us - clock.streams.main_us);
      out.updates_us = clock.streams.tail_us;
    }
  }
  return out;
}

PlannedStepPrice price_planned_step(const DataflowGraph& graph, const StepLayout& layout,
                                    const std::vector<StageTransfer>& stage_sends,
                                    const DeviceMesh& stage_mesh, const ClusterSpec& cluster) {
  std::vector<ScheduledOp> ops(graph.ops.size());
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const GraphOp& g = graph.ops[i];
    ops[i].stage = g.stage;
    ops[i].chunk = g.chunk;
    ops[i].forward = g.pass == Pass::forward;
    if (i < layout.timings.size()) ops[i].timing = layout.timings[i];
  }
  // A ZeRO gather moves from after its bucket's reduction to before the first op that reads
  // one of its weights.
  for (const GradientBucket& b : layout.buckets) {
    if (b.gather_steps.empty() || b.first_reader < 0) continue;
    ScheduledOp& made = ops.at(b.after_op);
    ScheduledOp& reader = ops.at(b.first_reader);
    for (size_t k = 0; k < b.gather_steps.size() && k < b.gather_step_cost_us.size(); ++k) {
      const int link = link_class_index(
          mesh_dim_link_class(stage_mesh, b.gather_steps[k].mesh_dim, cluster.gpus_per_node));
      const double us = b.gather_step_cost_us[k];
      if (graph.reduces_every_micro_batch()) {  // the search counted it with the update
        made.timing.update_us = std::max(0.0, made.timing.update_us - us);
      } else {
        double& on_link = made.timing.reduction_link_us[link];
        on_link = std::max(0.0, on_link - us);
        made.timing.reduction_us = std::max(0.0, made.timing.reduction_us - us);
      }
      reader.gather_link_us[link] += us;
    }
  }
  std::vector<ScheduledTransfer> transfers;
  if (graph.stages > 1) {
    // Every rank of a stage sends its piece to its peer on the other stage at once: one ring
    // step over the pipeline dim of the whole mesh.
    const AnalyticTopology topology = AnalyticTopology::of(
        cluster, DeviceMesh({graph.stages, stage_mesh.size()}), /*with_all_to_all=*/false);
    const MeshDimLinks& pipeline = topology.dims.at(0);
    for (const StageTransfer& x : stage_sends)
      transfers.push_back({x.producer, x.to_stage, x.to_chunk, x.read_in_forward,
                           1e6 * (pipeline.ring_latency_s +
                                  static_cast<double>(x.bytes) * pipeline.ring_s_per_byte)});
  }
  return price_schedule(ops, transfers, graph.stages, graph.micro_batches, graph.virtual_stages,
                        graph.reduces_every_micro_batch());
}

}  // namespace symmesh::strategies
