#pragma once
// Gradient buckets: a planned step reduces its parameters' gradients as Megatron-Core's
// DistributedDataParallel does, not one collective per parameter. The gradients are
// grouped, in the order the backward makes them, into buckets of at least
//
//   bucket_parameters = max(40,000,000, 1,000,000 × the ranks the reduction runs over)
//
// local elements (megatron/core/distributed/distributed_data_parallel_config.py,
// `bucket_size`: "larger DP sizes need larger buckets to ensure collectives do not become
// latency-bound"); a bucket's collective starts once its last gradient is made, on the comm
// stream (--overlap-grad-reduce), and a bucket not full when the stage's backward ends goes
// with its last gradient. One bucket holds gradients that travel alike: the same pipeline
// stage and model chunk, dtype and collectives over the same mesh dims (ZeRO: the
// reduce-scatter of the gradient and the all-gather of the updated parameter alike), so a
// tensor-parallel norm weight's all-reduce over tp and dp gathers with other norm weights',
// not with the matrices' reductions over dp. ZeRO-1 and 2 gather the updated parameters by
// the same buckets (Megatron's distributed optimizer all-gathers per bucket).
//
// A bucket's collective moves its members' buffers as one flat buffer: one step latency for
// all of them, where one collective per parameter paid it for each (Llama 3.1 8B at
// [dp 128, tp 8]: 227 reduce-scatters of 127 ring steps each).
//
// The layout search ranks a gradient's reduction at its share of a full bucket (the bucket's
// collective, priced by the cost model, times the gradient's part of it); the chosen layout's
// reductions are then grouped into their buckets and each bucket priced whole
// (apply_buckets), which is what the planned step's price and the lowering run.
// ZeRO-3 gathers its weights by FSDP unit the same way (unit_gathers): a unit's weights
// (strategies/step_streams.hpp: a decoder layer's ops of one pass, or one op) are gathered in
// one collective before the unit's first reader, as FSDP all-gathers a unit's flat
// parameter; the search ranks each reader's own gather, the chosen layout's are grouped.
// Not modelled: the padding of a bucket to a multiple of the data-parallel size, and a
// bucket size the scenario sets.
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "core/redistribution.hpp"
#include "strategies/cost_model.hpp"
#include "strategies/dataflow_graph.hpp"

namespace symmesh::strategies {

struct GradientReduction;
struct StepLayout;

// Megatron-Core's default bucket size in parameters (local elements) for a reduction over
// `reducing_ranks` ranks.
int64_t bucket_parameters(int64_t reducing_ranks);

// One collective of a bucket: `collective` over `mesh_dim` of a flat buffer of
// `buffer_bytes` (the nccl-tests size: the gathered output of an all-gather, the input
// otherwise).
struct BucketStep {
  CollectiveKind collective = CollectiveKind::all_reduce;
  int mesh_dim = 0;
  int64_t buffer_bytes = 0;
};

struct GradientBucket {
  std::vector<int> members;  // indices into StepLayout::reductions, in the order made
  int after_op = -1;         // the graph op that makes its last gradient
  int first_reader = -1;     // the first graph op that reads one of its parameters (-1: none)
  int stage = 0;
  int chunk = 0;
  DType dtype = DType::bf16;  // the gradients'
  std::vector<BucketStep> steps;         // the reduction's collectives, in order
  std::vector<double> step_cost_us;      // one per step
  std::vector<BucketStep> gather_steps;  // ZeRO-1 and 2: the updated parameters' gather
  std::vector<double> gather_step_cost_us;
  double reduction_us() const;
  double gather_us() const;
};

// The cost model's price of bucket steps, memoised (the search asks for the same few sizes
// many times).
class BucketPricer {
 public:
  BucketPricer(const CostModel& model, const DeviceMesh& mesh) : model_(model), mesh_(mesh) {}
  const DeviceMesh& mesh() const { return mesh_; }
  // The most gradient elements a bucket can gather (a stage's parameters: a small model's
  // buckets never fill, so its share of the latency is larger); 0: no bound.
  void bound_elements(int64_t elements) { bound_elements_ = elements; }
  // One collective of a flat buffer: a 1-D tensor of `buffer_bytes` (rounded up to whole
  // elements divisible by the dim's size), Replicate on every other mesh dim, moved as the
  // step moves it (Partial → Replicate, Partial → Shard, Shard → Replicate).
  double step_cost_us(CollectiveKind collective, int mesh_dim, DType dtype, int64_t buffer_bytes);
  // A gradient reduction's (or gather's) share of a full bucket, per step of `moves`: each
  // moving step's price for a flat bucket of the same kind (bounded by bound_elements)
  // divided by how many such tensors fill it; a tensor of a bucket or more, its own flat
  // buffer's price (no re-layout of a split tensor's chunks: the bucket's collective moves
  // a flat buffer). `alone_us` (the cost model's price of the tensor as laid out) for steps
  // that move nothing and for an all-to-all.
  std::vector<double> share_costs_us(const Redistribution& moves, DType dtype,
                                     const std::vector<double>& alone_us);

 private:
  const CostModel& model_;
  const DeviceMesh& mesh_;
  int64_t bound_elements_ = 0;
  std::map<std::tuple<int, int, int, int64_t>, double> memo_;
};

// The steps of `moves` that move data (a collective runs for them), in order.
std::vector<BucketStep> moving_steps(const Redistribution& moves);

// The reductions of `reductions` (graph order) grouped into buckets, each priced whole.
std::vector<GradientBucket> bucket_gradients(const DataflowGraph& graph,
                                             const std::vector<GradientReduction>& reductions,
                                             BucketPricer& pricer);

// ZeRO-3: the gathers of one FSDP unit's weights that travel alike (the same collectives
// over the same mesh dims), as one collective before the unit's first reader.
struct UnitGather {
  int first_op = -1;  // the graph op that reads first: it waits for the gather
  // (parameter, the graph op that reads it), in graph order: a weight read by two ops of a
  // unit is gathered for each, as the per-reader gathers were.
  std::vector<std::pair<TensorId, int>> reads;
  DType dtype = DType::bf16;
  std::vector<BucketStep> steps;  // each the sum of its reads' buffers
  std::vector<double> step_cost_us;
};

// The ZeRO-3 gathers of `layout` (graph.zero_stage 3; empty otherwise), by unit, in the order
// of their first readers: each read weight from its optimizer state's placements (the shard
// kept) to the placements its reader reads it at.
std::vector<UnitGather> unit_gathers(const DataflowGraph& graph, const StepLayout& layout,
                                     const DeviceMesh& mesh, BucketPricer& pricer);

// Groups `layout`'s reductions into `layout.buckets` and moves their time in
// `layout.timings`: each member's reduction (and, ZeRO-2, its share of the gather counted
// with its update) comes off its op, and each bucket's whole price goes to the op that
// closes it, by link class (`gpus_per_node`, as strategies/step_streams.hpp counts it).
// ZeRO-3: `layout.unit_gathers` likewise, each unit's whole gather on its first reader.
void apply_buckets(const DataflowGraph& graph, const DeviceMesh& mesh, int gpus_per_node,
                   StepLayout& layout, BucketPricer& pricer);

}  // namespace symmesh::strategies
