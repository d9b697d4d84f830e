#pragma once
// Choosing the placements of a dataflow graph (strategies/dataflow_graph.hpp) on a mesh:
// every matrix op's strategy, and the layout of every parameter the file leaves open,
// jointly over the whole step.
//
// Placements flow: an op's inputs are where their producers left them, and a strategy
// that needs them elsewhere pays the redistribution at that boundary (priced by the cost
// model, as DTensor prices it). Nothing Partial is free: a consumer either accepts it
// (a matmul is linear in each input) or pays its reduction; a tensor declared as an
// output is brought to its declared placements; an undeclared step output or a gradient
// of a step input ends non-Partial (Partial dims reduced to Replicate, as DTensor's
// full_tensor() does). Each parameter's final gradient is brought to the parameter's
// placements (all-reduce where the parameter is replicated, reduce-scatter where it is
// sharded), sized from the tensor and the mesh.
//
// Search: a beam over the ops in schedule order. A state is the placements chosen so far;
// states with the same placements of the tensors still to be read are merged (the
// cheaper kept), and the `beam_width` cheapest survive each op. A free parameter takes,
// at its first reader, the placements each strategy wants (it is stored that way), so its
// layout is chosen with the op's strategy — every rule of the op is open here, even from
// replicated inputs (DTensor drops Shard rules then; a planner asked to shard must not).
// The objective is the step time as the schedule overlaps it (matrix ops in series on the
// main stream, each gradient reduction on the comm stream from its wgrad on, hidden under
// main-stream compute but sharing the links with main-stream communication over the same
// kind of link, then the optimizer updates), from the cost model's prices and, for the
// updates, the roofline's HBM time of where each parameter's state is; with gradient
// accumulation (graph.micro_batches = m) every op's main-stream time counts m times, the
// reductions overlapping the last micro-batch only; the serial time (everything
// in series) is reported beside it. Costs the backward will pay for a forward choice are
// foreseen in the ranking from the forward op on: a parameter's gradient reduction, and an
// input's gradient made Partial where the input is gathered between nodes against a split
// operand.
// States the objective ranks equal (main-stream work hidden while the comm stream runs
// behind) are ordered by the main stream's time, then the serial time. Placements that
// differ only on mesh dims of size 1 are one state. Layouts whose static memory
// (parameters, gradients, optimizer state) already exceeds the GPU are dropped, and of the
// finished ones the cheapest whose whole-step peak fits is taken.
// ZeRO-3 (graph.zero_stage 3): a parameter is stored as its optimizer state's shard, and
// every op that reads it pays its gather (on the comm stream, before it, by the rule of
// strategies/step_streams.hpp) and holds the gathered weight and the next one's as its
// transient memory; every micro-batch runs both streams. ZeRO-2 reduce-scatters every
// micro-batch's gradients too (DeepSpeed's stage 2); its gathers, once, count with the
// updates.
// With pipeline stages (graph.stages > 1) the memory is counted per stage, as step_memory
// counts it (the micro-batches in flight included), each op against its own stage's; the
// objective still adds every stage's ops in series (a layout choice is the same trade-off on
// every stage), and of the final beam's fitting states the one whose schedule ends first
// (strategies/planned_step_price.hpp: the bubble, the stages running at once) is taken when
// the cluster is given. The two-stream rule is strategies/step_streams.hpp's.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/redistribution.hpp"
#include "strategies/candidate.hpp"
#include "strategies/cost_model.hpp"
#include "strategies/dataflow_graph.hpp"
#include "strategies/gradient_buckets.hpp"
#include "strategies/step_memory.hpp"
#include "strategies/step_streams.hpp"

namespace symmesh::strategies {

struct OpLayout {
  OpProblem problem;    // inputs at their placements before the op (read transposed as read)
  Candidate candidate;  // the chosen strategy, priced on `problem`
};

// A parameter's final gradient brought to the parameter's placements — with ZeRO, to its
// optimizer state's placements (a reduce-scatter where it would be all-reduced), and then
// the updated parameter gathered back to its own placements.
struct GradientReduction {
  TensorId parameter = -1;
  TensorId gradient = -1;
  int after_op = -1;  // the graph op that produced the gradient
  Redistribution redistribution;
  std::vector<double> step_cost_us;
  std::optional<Redistribution> parameter_gather;  // ZeRO: state placements -> parameter's
  std::vector<double> gather_step_cost_us;
  double cost_us() const;
};

struct LayoutSearchOptions {
  int beam_width = 256;
  int64_t memory_capacity_bytes = 0;  // per GPU; 0: unknown (nothing is dropped)
  // Which mesh dims cross nodes, for the overlap estimate (mesh ranks node-major); 0:
  // unknown, every dim's traffic shares one network.
  int gpus_per_node = 0;
  // The GPU whose HBM prices each parameter's optimizer update (after every reduction, in
  // the objective); none: updates are not priced (a model of communication only, dtensor).
  std::optional<GpuSpec> gpu;
  // A model's layers are alike (file ops marked `layer: k`, WorkloadOp::layer; what the
  // backward derives from them goes with them): plan each layer slot once. The first layer
  // the search reaches in a pass (layer 0 in the forward, the last in the backward) chooses
  // its strategies freely; every other layer's op in the same slot is held to the strategy
  // (input and output placements) its state chose there, unless that strategy is impossible
  // where it stands (then every one is open and the fallback is counted). A state's choices
  // for the slots are part of its future, so states that differ in them are not merged.
  // Identical layers so share one plan, and the search prices each later layer's one
  // strategy instead of all of them.
  bool periodic_layers = false;
  // The cluster, to price a pipelined step's finished layouts through their schedule
  // (strategies/planned_step_price.hpp): of the first kScheduledFinalists states of the
  // final beam that fit, the one whose schedule ends first is taken, not the first in the
  // objective's order (which adds the stages in series). Unset, or without stages: that
  // order.
  std::optional<ClusterSpec> cluster;
};

// How many of the final beam's fitting states a pipelined search prices through its
// schedule (LayoutSearchOptions::cluster).
inline constexpr int kScheduledFinalists = 16;

struct LayoutSearchStats {
  int64_t layouts_priced = 0;  // strategy x input-layout combinations the model priced
  int64_t states_expanded = 0;
  // periodic_layers: beam states whose op of a later layer could not follow their slot's
  // choice (a Partial-input strategy where the input now arrives whole, say), over the whole
  // beam, not only the chosen layout's path.
  int64_t periodic_fallbacks = 0;
  double seconds = 0;
  int beam_width = 0;
};

struct StepLayout {
  std::vector<Placements> placements;        // per tensor, where it ends (after its producer)
  std::vector<std::optional<OpLayout>> ops;  // per graph op; matrix ops only
  std::vector<GradientReduction> reductions;
  // The reductions grouped into the buckets their collectives run as
  // (strategies/gradient_buckets.hpp), in the order they start.
  std::vector<GradientBucket> buckets;
  // ZeRO-3: the weights' gathers by FSDP unit (strategies/gradient_buckets.hpp).
  std::vector<UnitGather> unit_gathers;
  std::vector<int64_t> transient_bytes;  // per graph op
  // Per graph op, what the objective ran of it on each stream (zero for an op without
  // tensors): what strategies/planned_step_price.hpp schedules.
  std::vector<OpTiming> timings;
  double serial_cost_us = 0;             // every op and reduction in series
  double step_cost_us = 0;  // the search's objective: reductions overlapped, as scheduled
  // With pipeline stages and LayoutSearchOptions::cluster: the step priced through its
  // schedule, which chose it among the finalists; 0 otherwise.
  double scheduled_us = 0;
  // What two searches' layouts are compared by: the schedule's price, else the objective.
  double ranking_us() const { return scheduled_us > 0 ? scheduled_us : step_cost_us; }
  StepMemory memory;        // the busiest pipeline stage's
  std::vector<StepMemory> stage_memory;  // per pipeline stage (one without stages)
  bool fits = true;  // memory.peak_bytes() <= the capacity (or the capacity is unknown)
  LayoutSearchStats stats;
};

// ZeRO-3's gather unit of graph op `op` (strategies/step_streams.hpp), as FSDP wraps a
// model: a decoder layer's ops of one pass (WorkloadOp::layer) are one unit, the forward's
// and the backward's apart; any other op is a unit of its own.
int gather_unit_of(const DataflowGraph& graph, int op);

// The search. Throws Unsupported when some op has no strategy left (every one filtered or
// infinite).
StepLayout search_layout(const DataflowGraph& graph, const DeviceMesh& mesh, const CostModel& model,
                         const LayoutSearchOptions& options = {});

}  // namespace symmesh::strategies
