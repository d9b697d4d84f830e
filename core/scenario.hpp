#pragma once
// A scenario (docs/scenario-format.md, versions 1 and 2) as plain values: the cluster, the
// mesh over its ranks, the workload and the optional sweep/objective. Version 2 adds named
// tensors: matrix ops read and produce them, so placements flow from op to op
// (strategies/dataflow_graph.hpp), and an optional training step (backward pass,
// gradient reduction, optimizer state). The YAML loader fills it; every later stage reads
// it. Sizes in bytes, times in s.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/dtype.hpp"
#include "core/op_kind.hpp"
#include "core/placement.hpp"
#include "core/tensor_op.hpp"
#include "core/tensor_spec.hpp"
#include "core/transformer_spec.hpp"

namespace symmesh {

// Where something came from in a scenario file, for messages: "file.yaml:12:3".
struct SourceLocation {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based
  std::string to_string() const;
  bool known() const { return line > 0; }
};

struct WorkloadOp {
  std::string name;
  OpKind kind = OpKind::mm;
  SourceLocation where;
  // Matrix ops: shapes and current placements (one per mesh dim). The bias of addmm,
  // baddbmm and (optionally) linear; none when the op has none ([] is a 0-d bias).
  Shape a, b;
  std::optional<Shape> bias;
  Placements a_placements, b_placements, bias_placements;
  // Where the output must end up (out_placements); none: wherever the strategy leaves it.
  std::optional<Placements> out_placements;
  std::optional<DType> dtype;  // falls back to the scenario's
  // `causal: true`: the product of a causal attention (scores q·kᵀ, context p·v) computes
  // only its lower triangle: half the FLOPs, priced so (timing only; core/program.hpp).
  bool causal = false;
  double work_fraction() const { return causal ? 0.5 : 1.0; }
  // put_signal: bytes from src rank to dst rank. Collectives: bytes is the whole buffer
  // on each rank (nccl-tests convention), over the group along mesh_dim.
  int64_t bytes = 0;
  int src = 0;
  int dst = 0;
  int mesh_dim = 0;  // index, resolved from a name or a number by the loader
  // Version 2 matrix and tensor ops: the tensors read (a, b, bias; "" when absent) and the
  // one produced. The loader also fills a, b and bias with their shapes; the placements stay
  // empty (they flow from the producers or the planner chooses them). A tensor op
  // (core/tensor_op.hpp) reads a (and b when it takes two inputs).
  std::string a_tensor, b_tensor, bias_tensor, output_tensor;
  // Tensor ops: attention's heads, kv_heads, head_dim, seq and causal; embedding's tokens.
  TensorOpAttrs attrs;
  // Version 2 `checkpoint: NAME`: the op belongs to that activation-checkpointing segment
  // (torch.utils.checkpoint, Megatron-LM's full recomputation): in a training step the
  // tensors made and read only inside the segment are not kept for the backward, which
  // recomputes them (strategies/dataflow_graph.hpp). "" for none.
  std::string checkpoint;
  // Version 2 `stage: N` on a mesh whose first dim is `pp` (kPipelineDim): the pipeline
  // stage of the model the op belongs to, 0-based in model order; 0 without pipeline
  // parallelism. With training.virtual_stages v, N is a virtual stage (a model chunk) in
  // [0, pp·v): the ranks of stage N % pp run it, as their chunk N / pp (Megatron-LM's
  // interleaved schedule: chunk c of stage s is model chunk c·pp + s).
  int stage = 0;
  // Version 2 `layer: N`: the op belongs to layer N of a stack of alike layers (a model's
  // expansion writes it on every decoder-layer op). The layout search plans the layers
  // once: the op at the same position of every layer is held to one strategy
  // (strategies/layout_search.hpp, periodic_layers). -1 for none.
  int layer = -1;
  bool reads_tensors() const { return !output_tensor.empty(); }
};

// A version-2 tensor declaration (`tensors:`), by role:
//   input      shape and placements: an activation the step starts from;
//   parameter  shape, placements optional (none: the planner chooses them);
//   output     no shape: where an op's produced tensor must end up (e.g. the
//              sequence-parallel rows after a row-parallel matmul).
struct TensorDecl {
  enum class Role { input, parameter, output };
  std::string name;
  Role role = Role::input;
  Shape shape;                           // empty for an output requirement
  std::optional<Placements> placements;  // one per mesh dim
  SourceLocation where;
};

enum class Optimizer {
  sgd,   // updates in place: no state beyond the gradient
  adam,  // mixed precision: fp32 master weights, momentum and variance, 12 B per element
};
std::string to_string(Optimizer optimizer);

// `training:` — the step is forward and backward: every matrix op's dgrad and wgrad are
// derived, and each parameter's gradient is reduced over the mesh dims where the
// parameter is replicated (or scattered where it is sharded).
struct TrainingSpec {
  bool backward = true;
  Optimizer optimizer = Optimizer::adam;
  // ZeRO stage (Rajbhandari et al., SC'20): 0 none; 1 the optimizer state of a parameter
  // is sharded over the mesh dims where the parameter is replicated, its gradient
  // reduce-scattered there and the updated parameter all-gathered after the step; 2 the
  // gradient buffer sharded too; 3 (model scenarios only) the parameters as well — `symmesh
  // layouts` prices it, the generated dataflow refuses it (strategies/dataflow_graph.cpp).
  // In other scenarios stage 3 is declared by sharding the parameters themselves.
  int zero_stage = 0;
  // Where the file gave zero and virtual_stages (file empty: not given). `symmesh layouts`
  // holds a given value fixed and searches the others (evaluation/training_layouts.hpp).
  SourceLocation zero_where;
  SourceLocation virtual_stages_where;
  // Gradient accumulation: the workload is one micro-batch, run this many times before the
  // gradients are reduced and the optimizer steps (Megatron-LM's global_batch / (dp ·
  // micro_batch)). 0 when the file does not say (one); a model: block sets it.
  int micro_batches = 0;
  int micro_batch_count() const { return micro_batches > 0 ? micro_batches : 1; }
  // With pipeline stages: the model chunks each stage holds (Megatron-LM's
  // --num-layers-per-virtual-pipeline-stage, as a count): 1 is plain 1F1B, more run the
  // interleaved schedule (strategies/pipeline_schedule.hpp).
  int virtual_stages = 1;
  SourceLocation where;
};

struct SweepSpec {
  std::vector<int> nodes;                     // node counts to try
  bool mesh_auto = false;                     // every factorisation of the GPU count
  std::vector<std::vector<int>> mesh_shapes;  // or these shapes
  SourceLocation mesh_where;                  // the mesh: key, for messages about its shapes
  // `layouts:` (model scenarios): instead of meshes, every training layout (tp, pp, dp,
  // micro-batch, interleaving, recomputation, ZeRO) priced at each node count, the fastest
  // `layouts_simulate` of each simulated (evaluation/training_layouts.hpp).
  bool layouts = false;
  SourceLocation layouts_where;  // the layouts: key, for messages about the search
  int layouts_simulate = 1;
  // `layouts: {tp: […], pp: […], virtual_stages: […]}`: the values the search tries (empty:
  // its defaults, or the scenario's declared value; evaluation/training_layouts.hpp).
  std::vector<int> layouts_tps, layouts_pps, layouts_virtual_stages;
  // Model scenarios: each mesh is also tried with every micro-batch size (sequences per
  // micro-batch, model.micro_batch) and every ZeRO stage (training.zero) listed; empty:
  // the scenario's own. With `layouts:`, the micro-batch sizes and ZeRO stages it tries.
  std::vector<int64_t> micro_batches;
  std::vector<int> zero_stages;
};

struct ObjectiveSpec {
  std::optional<double> max_time_s;
};

// Version 2: a first mesh dim of this name holds pipeline stages. Each stage is the rest of
// the mesh (stage_mesh(): dp, tp, …), its ranks a contiguous block, stage-major, as
// Megatron-LM orders them (tp fastest, pp slowest); a workload op runs on the stage its
// `stage:` names, and tensors one stage makes and another reads are sent between them.
inline constexpr const char* kPipelineDim = "pp";
// The size of a mesh's first dim when it is named pp and other dims follow; else 1.
int pipeline_dim_size(const std::vector<int>& shape, const std::vector<std::string>& names);

struct Scenario {
  std::string name;
  std::string path;  // the file it came from ("" when built in code)
  ClusterSpec cluster;
  std::vector<int> mesh_shape;
  std::vector<std::string> mesh_names;
  DType dtype = DType::bf16;
  // cost_model: how ops are priced. Not given: "dtensor" (DTensor's own cost model, what
  // PyTorch would choose by), except for a model: step, which the calibrated "analytic"
  // model prices (DTensor's model prices only communication and would report a step
  // several times too slow); `cost_model_given` says which, for the reports.
  std::string cost_model = "dtensor";
  bool cost_model_given = false;
  // What the reports add after the cost model's name when the file did not give it:
  // " (the default for a model: step; cost_model: dtensor prices as DTensor does)", or
  // " (the default)"; "" when given.
  std::string cost_model_note() const;
  // Version 1 under dtensor: how each op's strategy is found, "full-expansion" or
  // "priority-queue" (strategies::PlacementSelection, the PyTorch behaviour it reproduces).
  std::string placement_search = "full-expansion";
  int version = 1;
  // Version 2 `model:`: the transformer whose step the tensors and workload were generated
  // from (scenario/model_expansion.hpp); a resized scenario is generated again from it.
  std::optional<TransformerSpec> model;
  SourceLocation model_where;  // the model: block, where what its generated ops do is reported
  // The files the model: block read (its hf_config): inputs, which no output may replace.
  std::vector<std::string> model_files;
  std::vector<TensorDecl> tensors;  // version 2, in file order
  std::optional<TrainingSpec> training;
  std::vector<WorkloadOp> workload;
  std::optional<SweepSpec> sweep;
  std::optional<ObjectiveSpec> objective;

  DType dtype_of(const WorkloadOp& op) const { return op.dtype.value_or(dtype); }
  bool is_dataflow() const { return version >= 2; }
  // Version 2 with a first mesh dim named pp: its size; 1 otherwise. And the model chunks
  // each stage holds (training.virtual_stages; 1 without training).
  int pipeline_stages() const;
  int virtual_stages() const { return training ? training->virtual_stages : 1; }
  // The mesh of one pipeline stage: the mesh without its pp dim (the whole mesh when
  // there is none). Placements and mesh_dims in a version-2 file refer to it.
  std::vector<int> stage_mesh_shape() const;
  std::vector<std::string> stage_mesh_names() const;
  const TensorDecl* tensor(const std::string& name) const;
  // The size of the mesh dim called `name` (1 when the mesh has none), and the GPUs of the
  // whole mesh.
  int mesh_dim_size(std::string_view name) const;
  int mesh_gpus() const;
  // Where a message about the scenario as a whole points: its file, or "scenario" for one
  // built in memory (Python, tests).
  std::string where() const { return path.empty() ? std::string("scenario") : path; }
  // The model: block's file:line:col for a message about the step it generates (that the
  // step does not fit, say); where() when there is none.
  std::string model_where_text() const {
    return model_where.known() ? model_where.to_string() : where();
  }
};

}  // namespace symmesh
