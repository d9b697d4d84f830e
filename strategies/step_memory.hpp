#pragma once
// Per-rank memory over a whole step of a dataflow graph, on the busiest rank (rank 0
// holds torch.chunk's largest pieces):
//   parameters   every parameter's local shard
//   gradients    training: one gradient buffer per parameter, placed as the parameter
//                (ZeRO-2: as its optimizer state)
//   optimizer    training: adam keeps fp32 master weights, momentum and variance, 12 B
//                per local parameter element (Rajbhandari et al., ZeRO, SC'20, §3.1:
//                "2Ψ + 2Ψ + 12Ψ" for mixed-precision Adam); sgd keeps nothing more. With
//                ZeRO-1 or -2 the state is sharded over the mesh dims where the parameter
//                is replicated (optimizer_state_placements)
//   activations  the tensors alive at the peak: produced (or given) and not yet read for
//                the last time, forward tensors kept for the backward included
//   transient    the peak op's redistributed copies of its inputs (and its output before
//                its own redistribution)
// The peak is the static part plus the largest live + transient over the schedule (the
// graph's op order, which the lowering keeps).
//
// With pipeline stages (graph.stages = p > 1) each stage's ranks hold its own parameters and
// the tensors its ops make or read (a tensor sent from another stage is a copy received),
// and the step's memory is its busiest stage's. Under 1F1B stage s runs p − s − 1 forwards
// before its first backward, so min(p − s, m) micro-batches are in flight at once (Narayanan
// et al., SC'21, §2.2; Korthikanti et al. 2022, §4.2.3: the first stage holds p micro-batches'
// activations); interleaved over v chunks, chunks_in_flight / v micro-batches' worth
// (strategies/pipeline_schedule.hpp). What the stage's forward keeps for its backward counts
// that many times, the peak op's own transient once.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/device_mesh.hpp"
#include "strategies/dataflow_graph.hpp"

namespace symmesh::strategies {

struct StepMemory {
  int64_t parameters_bytes = 0;
  int64_t gradients_bytes = 0;
  int64_t optimizer_bytes = 0;
  int64_t activations_bytes = 0;  // live at the peak
  int64_t transient_bytes = 0;    // at the peak
  int peak_op = -1;               // graph op index where the peak is reached
  int zero_stage = 0;             // the graph's, for the breakdown text
  int stage = 0;                  // the pipeline stage it is of
  int64_t peak_bytes() const {
    return parameters_bytes + gradients_bytes + optimizer_bytes + activations_bytes +
           transient_bytes;
  }
  int64_t static_bytes() const { return parameters_bytes + gradients_bytes + optimizer_bytes; }
};

// Bytes of rank 0's piece of `shape` in `dtype` at `placements` (the largest piece).
int64_t local_bytes(const Shape& shape, DType dtype, const Placements& placements,
                    const DeviceMesh& mesh);

// When each tensor is alive in the schedule: from `birth` to before `death` (op indices).
// Parameters and parameter gradients are static (birth = death = -1). With `stage` >= 0,
// on that pipeline stage's ranks: from the first of its ops that touches the tensor (makes
// it, or reads its received copy) to the last; birth -1 for a tensor it never holds.
struct Lifetime {
  int birth = -1;
  int death = -1;
  bool alive_at(int op) const { return birth <= op && op < death; }
};
std::vector<Lifetime> tensor_lifetimes(const DataflowGraph& graph, int stage = -1);
// The first backward op (of `stage`'s, with stage >= 0), or the op count when there is none:
// a tensor alive across it is kept from the forward for the backward.
int first_backward_op(const DataflowGraph& graph, int stage = -1);

// Where a parameter stored at `placements` keeps its optimizer state: with ZeRO (stage 1
// or 2) every mesh dim of size > 1 where the parameter is replicated shards the
// parameter's largest dim that no mesh dim shards yet (the evenest split that leaves each
// rank's own shard whole; the largest dim when all are sharded) — the ranks that hold the
// same weights each update a slice; without ZeRO, `placements`.
Placements optimizer_state_placements(const DataflowGraph& graph, TensorId parameter,
                                      const Placements& placements, const DeviceMesh& mesh);

// What one parameter holds per rank: its shard, and in training its gradient buffer and
// optimizer state.
struct ParameterBytes {
  int64_t weights = 0;
  int64_t gradient = 0;
  int64_t optimizer = 0;
  int64_t total() const { return weights + gradient + optimizer; }
};
ParameterBytes parameter_bytes(const DataflowGraph& graph, TensorId parameter,
                               const Placements& placements, const DeviceMesh& mesh);
// The HBM traffic of a parameter's optimizer update on its busiest rank: the elements of
// its state shard (optimizer_state_placements) times what Adam or SGD moves per element,
// gradient and weight in the parameter's dtype (core/optimizer_step.hpp). 0 outside
// training.
int64_t optimizer_update_bytes(const DataflowGraph& graph, TensorId parameter,
                               const Placements& placements, const DeviceMesh& mesh);

// The kernels an optimizer's update launches (Adam's fused update and its master-weight
// copy; SGD's one), and the update's time on `gpu`: its bytes at HBM bandwidth plus a
// launch each (core/roofline.hpp).
int optimizer_update_kernels(Optimizer optimizer);
double optimizer_update_s(const DataflowGraph& graph, TensorId parameter,
                          const Placements& placements, const DeviceMesh& mesh, const GpuSpec& gpu);

// Their sum.
int64_t parameter_static_bytes(const DataflowGraph& graph, TensorId parameter,
                               const Placements& placements, const DeviceMesh& mesh);

// The micro-batches' worth of kept activations a stage holds at once: `chunks` of its
// `virtual_stages` model chunks' (one micro-batch without stages).
struct MicroBatchesInFlight {
  int64_t chunks = 1;
  int64_t virtual_stages = 1;
  static MicroBatchesInFlight of_stage(const DataflowGraph& graph, int stage);
  int64_t of(int64_t bytes) const { return bytes * chunks / virtual_stages; }
};

// What the ranks of `stage` (-1: the whole graph, one stage) hold of each tensor, by tensor:
// when (tensor_lifetimes; birth -1 for what they never hold, parameters included), and how
// many micro-batches' worth — those in flight for a tensor kept from the stage's forward
// into its backward (alive across first_backward_op), else one.
struct HeldTensor {
  Lifetime life;
  MicroBatchesInFlight weight;
};
std::vector<HeldTensor> held_tensors(const DataflowGraph& graph, int stage);

// The step's memory with every tensor at `placements` (final placements, one per tensor)
// and `transient_bytes` per graph op: per pipeline stage (one entry without stages), and
// the busiest's.
std::vector<StepMemory> stage_memories(const DataflowGraph& graph,
                                       const std::vector<Placements>& placements,
                                       const std::vector<int64_t>& transient_bytes,
                                       const DeviceMesh& mesh);
// The stage whose peak is highest (the first of equals).
const StepMemory& busiest_stage(const std::vector<StepMemory>& stages);
StepMemory step_memory(const DataflowGraph& graph, const std::vector<Placements>& placements,
                       const std::vector<int64_t>& transient_bytes, const DeviceMesh& mesh);

// "needs 94.2 GiB per GPU (parameters 30.1 GiB, …); H100-SXM has 80 GiB" style text:
// the breakdown of `memory`.
std::string memory_breakdown_text(const StepMemory& memory);

}  // namespace symmesh::strategies
