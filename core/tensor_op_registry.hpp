#pragma once
// One row per tensor-op kind (core/tensor_op.hpp): everything symmesh knows about a tensor op
// in one row of one table (core/tensor_op_registry.cpp), read by the code that used to
// switch on the kind:
//
//   name, inputs, forward   core/op_kind.cpp (text form, the kinds files write or only a
//                           training step generates, is_tensor_op), scenario files' keys
//   shape                   core/tensor_op.cpp (check_tensor_op, tensor_op_output_shape)
//   cost                    core/tensor_op.cpp (tensor_op_cost)
//   elementwise, reference  core/tensor_op_reference.cpp (the values)
//   sharding, rules         strategies/tensor_op_rules.cpp (DTensor-style rules)
//   gradient, backward      strategies/dataflow_graph.cpp (the ops a training step derives)
//
// A pointwise op is a row of classes and a lambda: its enumerators in core/op_kind.hpp, its
// forward and backward rows here, and the layer that uses it (core/transformer_layer.cpp).
// The ops with code of their own (the norm, attention, the embedding, the loss) name a shape
// and cost class whose code is in core/tensor_op.cpp, and a kernel of
// core/tensor_op_reference.hpp.
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/op_kind.hpp"
#include "core/placement.hpp"

namespace symmesh {

struct TensorOpCall;

// Which inputs the op accepts and the output they give (core/tensor_op.cpp).
enum class TensorOpShape : uint8_t {
  pointwise,         // every input the first's shape, any rank; the output that shape
  pointwise_matrix,  // [rows, features] inputs of one shape; the output that shape
  norm,              // x [r, h], weight [h], then (backward) dy [r, h]; the output x's shape
  norm_weight_grad,  // x [r, h], dy [r, h]; the output [h], summed over the rows
  attention,         // qkv [T, groups]; the output [T, query heads · head_dim]
  attention_grad,    // qkv, out, d out; the output qkv's shape
  lookup,            // table [V, h]; the output [attrs.rows, h] (rows looked up)
  lookup_grad,       // d out [tokens, h]; the output [attrs.rows, h] (the table's)
  logits_to_loss,    // logits [T, V]; the output a scalar
  logits_to_stats,   // logits [T, V]; the output [T, 2]
  stats_to_loss,     // statistics [T, 2]; the output a scalar
  loss_grad,         // logits [T, V], statistics [T, 2], d loss []; the output the logits'
};

// The single-mesh-dim rules strategies/tensor_op_rules.cpp derives, each with R (all
// replicated) first.
enum class TensorOpSharding : uint8_t {
  pointwise,     // S(d) of every tensor, for every dim d
  linear,        // pointwise's and P(sum) of every tensor (a sum of partial sums)
  whole_groups,  // pointwise's, kept only where each piece holds whole sequences and
                 // key/value groups (attention)
  listed,        // the row's `rules`
};

// What a kernel moves and launches (core/tensor_op.cpp: tensor_op_cost).
enum class TensorOpCostClass : uint8_t {
  streamed,   // each input read once, the output written once, plus `row_bytes` per row
  attention,  // FlashAttention's products, log-sum-exp and rotary embedding
  lookup,     // the table rows looked up, one per output row, and the int64 ids
};

// How a forward op's inputs get their gradients in a training step.
enum class TensorOpGradient : uint8_t {
  none,            // a backward op: never differentiated
  derived,         // the row's `backward` ops
  passes_through,  // each input's gradient is the output's, as it is (add)
  via_consumer,    // none of its own: its consumer's backward reads it (loss statistics)
};

// A tensor a backward op reads or writes the gradient of, in its forward op's terms.
struct TensorOpOperand {
  enum class From : uint8_t {
    input,           // the forward op's input `index`
    output,          // the forward op's output
    output_grad,     // the gradient of the forward op's output
    producer_input,  // input 0 of the op that made input `index` (the loss's logits)
  };
  From from = From::input;
  int index = 0;
};

// What a backward op's attributes are.
enum class TensorOpBackwardAttrs : uint8_t {
  none,
  forward,      // the forward op's (attention's heads and sequence)
  target_rows,  // rows: the row count of the tensor whose gradient it makes (the table)
};

// One backward op a forward op generates: `kind` reading `operands` (the forward tensors
// as kept or recomputed for the backward), adding to the gradient of `target`.
struct TensorOpBackward {
  OpKind kind = OpKind::add;
  TensorOpOperand target;
  std::vector<TensorOpOperand> operands = {};
  std::string_view suffix;  // its op's name is the forward's plus this (".dgrad", ".wgrad")
  bool weight = false;      // a wgrad-pass op when the target is a parameter
  TensorOpBackwardAttrs attrs = TensorOpBackwardAttrs::none;
};

// The value of an elementwise op at one element from its operands' values there (v[k]:
// input k's), and the kernel of any other op (core/tensor_op_reference.hpp).
using TensorOpElementwise = double (*)(const double* v);
using TensorOpKernel = std::vector<double> (*)(const TensorOpCall& call,
                                               const std::vector<std::vector<double>>& inputs);

// The row of one kind.
struct TensorOpSignature {
  OpKind op = OpKind::add;
  std::string_view name;                      // its text form (to_string, scenario files)
  std::vector<std::string_view> inputs = {};  // names, in order ("a", "b" as files write them)
  // The forward op a generated backward op belongs to (itself for a forward op, which files
  // may write; the others only a training step generates).
  OpKind forward = OpKind::add;
  std::string_view what;  // a few words for messages and docs
  TensorOpShape shape = TensorOpShape::pointwise_matrix;
  TensorOpSharding sharding = TensorOpSharding::pointwise;
  std::vector<Placements> rules = {};  // listed: [output, inputs...] on one mesh dim, after R
  TensorOpGradient gradient = TensorOpGradient::none;
  std::vector<TensorOpBackward> backward = {};  // derived: in the order they are generated
  TensorOpCostClass cost = TensorOpCostClass::streamed;
  int row_bytes = 0;  // extra bytes per row of input 0 (fp32 statistics, int64 ids)
  int kernels = 1;
  TensorOpElementwise elementwise = nullptr;  // elementwise ops; else `reference`
  TensorOpKernel reference = nullptr;
};

// Every row: the forward ops (in the order messages list them), then the backward ones.
const std::vector<TensorOpSignature>& tensor_op_signatures();
// The row of `op`; nullptr when it is not a tensor op.
const TensorOpSignature* find_tensor_op(OpKind op);
// The row of `op`; throws InvalidArgument for a kind that is not a tensor op.
const TensorOpSignature& tensor_op_signature(OpKind op);

}  // namespace symmesh
