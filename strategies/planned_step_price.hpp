#pragma once
// The planned step priced in closed form: the analytic reading of the same step the
// simulator runs (strategies/workload_lowering.hpp lowers it), from the prices the layout
// search gave its ops. Where the search's own objective adds every pipeline stage's ops in
// series (strategies/layout_search.hpp), this runs them through the pipeline schedule:
//
//   tasks     each stage runs its forward and backward tasks in Megatron-LM's order
//             (strategies/pipeline_schedule.hpp: 1F1B, or interleaved with virtual
//             stages); a task is the stage's ops of one (micro-batch, model chunk,
//             direction), in graph order, each taking its main-stream price.
//   transfers a tensor one stage makes and another reads (strategies/pipeline_transfers.hpp)
//             leaves on the sender's send stream when its task ends, one after another, and
//             the receiving task starts once it has arrived: Megatron-LM's send_forward /
//             send_backward as the lowering writes them. Its price is one step of a ring
//             over the pipeline dim of the whole mesh (strategies/analytic_topology.hpp):
//             every rank of the stage sends its piece at once, sharing the NICs as that ring
//             step does.
//   overlap   within a task the two streams of strategies/step_streams.hpp, per stage: the
//             last micro-batch's ops start their gradient reductions on the comm stream,
//             which main-stream communication over the same links then shares; the
//             optimizer updates follow once both streams of the stage are done. ZeRO's
//             weight gathers run on the comm stream as the step starts, each before its
//             weights' first reader (the search's objective counts them after the
//             reductions, ZeRO-2's with the updates: the same bytes, a rule it ranks by,
//             not the schedule). ZeRO-2 and 3 (reduce_every_micro_batch): every
//             micro-batch reduce-scatters its gradients; ZeRO-3 gathers each unit's
//             weights (OpTiming::gather_link_us) before it, as step_streams.hpp says.
//   step      the last stage to finish.
//
// Without pipeline stages this is the search's overlapped objective (every micro-batch's
// ops in turn, the reductions under the last one's backward); with them, what the
// objective's sum leaves out is the schedule: the bubble and the stages running at once.
// What it leaves out: a transfer's wait for the receiver (a put lands in a slot of its
// own per micro-batch), and what the cost model leaves out of each op.
#include <cstdint>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/device_mesh.hpp"
#include "strategies/dataflow_graph.hpp"
#include "strategies/layout_search.hpp"
#include "strategies/pipeline_transfers.hpp"
#include "strategies/step_streams.hpp"

namespace symmesh::strategies {

// One op of the step as the schedule places it.
struct ScheduledOp {
  int stage = 0;
  int chunk = 0;
  bool forward = true;  // in the forward task (else the backward: dgrad, wgrad, recompute)
  OpTiming timing;      // its reduction_us without the ZeRO gathers below
  // ZeRO-1 and 2: the gathers of the weights this forward op reads first, which its first
  // micro-batch waits for; each stage runs them on its comm stream as the step starts, in op
  // order (Megatron-LM's --overlap-param-gather, as the lowering writes them).
  double gather_link_us[2] = {0, 0};  // by link class (strategies/step_streams.hpp)
  double gather_us() const { return gather_link_us[0] + gather_link_us[1]; }
};

// A tensor sent between stages after op `producer` (an index into the ScheduledOps), read
// by the task of `to_stage`, `to_chunk` and direction `read_in_forward` of the same
// micro-batch.
struct ScheduledTransfer {
  int producer = 0;
  int to_stage = 0;
  int to_chunk = 0;
  bool read_in_forward = true;
  double us = 0;
};

struct PlannedStepPrice {
  double step_us = 0;        // when the last stage is done: streams and updates
  double pipeline_us = 0;    // when the last main-stream task ends
  int last_stage = 0;        // the stage that ends the step
  double bubble_us = 0;      // of the last stage: idle main stream before its last task ends
  double exposed_comm_us = 0;  // of the last stage: its comm stream past its main stream
  double updates_us = 0;       // of the last stage: its optimizer updates
  // One micro-batch of each stage (every chunk): its forward and backward tasks' main-stream
  // prices, without the reductions.
  std::vector<double> stage_forward_us;
  std::vector<double> stage_backward_us;
};

// Throws InvalidArgument for stages, micro-batches or virtual stages < 1, an op or transfer
// outside them, v > 1 with the micro-batches not a multiple of the stages (as
// stage_schedule does), and Error should the schedule wait on itself (a transfer read
// before it is made: a bug in the graph's stages).
PlannedStepPrice price_schedule(const std::vector<ScheduledOp>& ops,
                                const std::vector<ScheduledTransfer>& transfers, int stages,
                                int64_t micro_batches, int virtual_stages,
                                bool reduce_every_micro_batch = false);

// The planned step of `graph` with its searched `layout` and its stage `transfers`
// (stage_transfers of that layout) on `stage_mesh` (one stage's mesh; the stages take
// consecutive blocks of the cluster's GPUs), priced as above.
PlannedStepPrice price_planned_step(const DataflowGraph& graph, const StepLayout& layout,
                                    const std::vector<StageTransfer>& transfers,
                                    const DeviceMesh& stage_mesh, const ClusterSpec& cluster);

}  // namespace symmesh::strategies
