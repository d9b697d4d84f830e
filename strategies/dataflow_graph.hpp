#pragma once
// A version-2 workload as a dataflow graph: named tensors, the matrix ops that read and
// produce them and, for a training step, the backward ops derived from them. Placements
// are not here: they flow from producers to consumers and the layout search
// (strategies/layout_search.hpp) chooses those the file leaves open.
//
// The backward of C = A·B (mm; bmm per batch) is the pair every framework runs:
//   dgrad  dA = dC·Bᵀ   (mm/bmm of dC and B read transposed)
//   wgrad  dB = Aᵀ·dC   (mm/bmm of A read transposed and dC)
// linear (y = x·Wᵀ) gives dx = dy·W and dW = dyᵀ·x. A transposed read is a view: its
// shape and placements swap the last two dims (S(0) ↔ S(1) of a matrix), as
// torch.Tensor.t() does to a DTensor. A tensor read by several ops gets the sum of their
// gradients: the first contribution is an mm, each later one an addmm (baddbmm) that adds
// it to the running sum, so the accumulation is a matrix op the rules place like any other.
// The bias gradient of addmm/baddbmm/linear (a column sum, memory-bound) is not derived.
//
// A tensor op's backward (core/tensor_op.hpp) is its own kind of op, as its row lists it
// (core/tensor_op_registry.hpp: which ops, reading which forward tensors): rms_norm gives
// rms_norm_dgrad (dx) and, for its weight, rms_norm_wgrad; swiglu gives swiglu_dgrad_gate and
// swiglu_dgrad_up; gelu gelu_dgrad; attention attention_dgrad (d qkv, reading the forward's
// output); embedding embedding_wgrad (its table's gradient; token ids have none). A file's
// cross_entropy becomes two ops, "<op>.stats" (cross_entropy_stats, making "<loss>.stats")
// and "<op>" (cross_entropy_loss), so that the vocabulary may stay split; its backward is
// cross_entropy_dgrad, reading the logits and those statistics. An add passes its output's gradient
// on to both inputs as it is (the same tensor: nothing is computed). A gradient with several
// contributions sums them: a matmul's as an accumulating matmul (above), any other's with an add.
//
// Activation checkpointing (`checkpoint: NAME` on forward ops, core/scenario.hpp): a tensor
// made by an op of a segment and read only by ops of the same segment is not kept for the
// backward. When the backward first needs it, its producer runs again ("<op>.recompute",
// Pass::recompute; its own inputs recomputed first where they are not kept either), and the
// backward reads that copy: the original dies at its last forward reader. A segment's
// inputs and the tensors read outside it stay, as torch.utils.checkpoint keeps a region's
// inputs and outputs; Megatron-LM's full recomputation is a segment per layer.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/scenario.hpp"
#include "strategies/op_problem.hpp"

namespace symmesh::strategies {

using TensorId = int;

struct GraphTensor {
  enum class Kind {
    input,       // an activation the step starts from (declared placements)
    parameter,   // a weight (declared placements, or chosen by the layout search)
    activation,  // produced by a forward op
    seed,        // the loss gradient of a graph output: placed as that output ends
    gradient,    // produced by a backward op (of an activation, or a parameter's)
  };
  std::string name;
  Kind kind = Kind::activation;
  Shape shape;
  DType dtype = DType::bf16;
  std::optional<Placements> declared;  // inputs, placed parameters
  std::optional<Placements> required;  // where it must end up (an output declaration)
  int producer = -1;                   // op index; -1 for inputs, parameters and seeds
  std::vector<int> consumers;          // op indices, in order
  TensorId of = -1;                    // gradient and seed: the tensor whose gradient it is
  bool is_parameter_gradient = false;
  SourceLocation where;
};

// recompute: a forward op run again in the backward (activation checkpointing, below).
enum class Pass { forward, dgrad, wgrad, recompute };
std::string to_string(Pass pass);

struct GraphInput {
  TensorId tensor = -1;
  bool transposed = false;  // read as its transpose (a view)
};

struct GraphOp {
  std::string name;  // the file's op name; derived ops "<op>.dgrad.<input>", "<op>.wgrad"
  Pass pass = Pass::forward;
  OpKind kind = OpKind::mm;
  const WorkloadOp* source = nullptr;  // the file's op (for a backward op: its forward op)
  std::vector<GraphInput> inputs;      // matmuls: ATen input order (core/matmul_signature); tensor
                                       // ops: their signature's (core/tensor_op.hpp)
  TensorId output = -1;                // -1: not a matrix or tensor op (put_signal, collective)
  DType dtype = DType::bf16;
  TensorOpAttrs attrs;  // tensor ops
  // The pipeline stage whose ranks run it and, with virtual stages, which of its model
  // chunks it is in: from its file op's `stage:` (a virtual stage N: stage N % pp, chunk
  // N / pp). A backward op runs where its forward did, a gradient sum where the
  // contribution it adds was made.
  int stage = 0;
  int chunk = 0;
};

struct DataflowGraph {
  std::vector<GraphTensor> tensors;
  std::vector<GraphOp> ops;  // forward in file order, then backward in reverse order
  bool training = false;
  Optimizer optimizer = Optimizer::adam;
  int zero_stage = 0;  // training.zero (core/scenario.hpp)
  // ZeRO-2 and 3 reduce-scatter every micro-batch's gradients (DeepSpeed's stage 2, FSDP), so
  // that only the shard accumulates; ZeRO 0 and 1 reduce once, after the last (Megatron-LM).
  // The search, the price and the lowering all ask this.
  bool reduces_every_micro_batch() const { return zero_stage >= 2; }
  // Gradient accumulation (training.micro_batches): the ops run this many times, the
  // gradient reductions and the optimizer step once, after the last.
  int micro_batches = 1;
  // Pipeline stages (Scenario::pipeline_stages): ops run on their stage's ranks; a tensor
  // made on one stage and read on another is sent there (strategies/pipeline_transfers.hpp).
  // virtual_stages: model chunks per stage (training.virtual_stages).
  int stages = 1;
  int virtual_stages = 1;

  // The shape `input` is read with (transposed when the read is).
  Shape shape_read(const GraphInput& input) const;
  // Tensors no op reads: the step's outputs (forward) and finished gradients.
  bool is_graph_output(TensorId t) const { return tensors.at(t).consumers.empty(); }
  std::vector<TensorId> parameters() const;
};

// The graph of a version-2 scenario (loaded, so names and shapes are resolved). With
// `training`, the backward ops follow the forward ones. Throws InvalidArgument naming the
// op and its file:line:col for what the backward cannot derive (a linear over a 3-D input),
// and, with pipeline stages, for a forward op that reads what a later stage makes or a
// parameter read on two stages (each stage holds its own weights).
DataflowGraph build_dataflow_graph(const Scenario& scenario);

// The graph of one matrix op (`symmesh plan --in auto`): input k is a parameter whose
// layout the search chooses when free[k], else a step input at its placements; the output
// is required at problem.output_target when there is one. Forward only.
DataflowGraph single_op_graph(const OpProblem& problem, const std::vector<bool>& free);

// What a workload op's name says it does in a step, by the names this graph and the
// lowering give: "earlier micro-batches" (gradient accumulation's micro-batches before the
// last, strategies/workload_lowering.hpp), "recompute" (<op>.recompute, activation
// checkpointing), "backward" (<op>.dgrad…, <op>.wgrad), "grad reductions"
// (<parameter>.grad_<collective>, <parameter>.param_<collective>), "optimizer"
// (<parameter>.adam, <parameter>.sgd), "forward" for everything else. Reports group by it.
std::string work_group_of(std::string_view op_name);

// The placements of a transposed view of a rank-`rank` tensor: shards of the last two
// dims swap; Replicate and Partial stay.
Placements transposed_placements(const Placements& placements, int rank);
Shape transposed_shape(Shape shape);

}  // namespace symmesh::strategies
