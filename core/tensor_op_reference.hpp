#pragma once
// The values of tensor ops (core/tensor_op.hpp), computed on one CPU in double: the
// unsharded reference that emulation checks a sharded step against
// (strategies/sharded_result.hpp), and the kernels the simulator runs on each rank's pieces
// when it carries real bytes (sim/emulated_ops.hpp). One implementation serves both, so a
// sharded result equals the unsharded one exactly when the placements the planner chose keep
// every piece's computation local — which is what emulation checks.
//
// Token ids and labels are data, not tensors: they are made up here, as a function of the
// global row (the token's position in the step), so that every rank holding a row agrees.
#include <cstdint>
#include <vector>

#include "core/tensor_op.hpp"

namespace symmesh {

// RMSNorm's epsilon (Llama's rms_norm_eps is 1e-5; the value only matters for emulation).
inline constexpr double kRmsNormEpsilon = 1e-5;

// The token id of global row `row` (embedding) and its label (cross_entropy): each in
// [0, vocab), spread over the vocabulary (a hash of the row, the same on every platform),
// and different from each other when vocab > 1. Throw InvalidArgument when vocab < 1.
int64_t token_id(int64_t row, int64_t vocab);
int64_t label_id(int64_t row, int64_t vocab);

// One call of a tensor op on pieces of its global tensors.
struct TensorOpCall {
  OpKind op = OpKind::add;
  TensorOpAttrs attrs;
  std::vector<Shape> inputs;  // the pieces' shapes, in the op's input order
  Shape output;               // the output piece's shape
  // Where the pieces sit in the global tensors:
  //   row_offset    the global row of the pieces' first row (token ids and labels follow it);
  //   vocab_offset  embedding: the table piece's first vocabulary row; embedding_wgrad: the
  //                 output piece's; the ids outside [vocab_offset, vocab_offset + rows of the
  //                 piece) contribute nothing on this rank (Megatron's vocab-parallel
  //                 embedding: the pieces' outputs sum to the whole one); the cross-entropy
  //                 ops: the logits piece's first column (a label outside the piece's
  //                 columns is another rank's);
  //   vocab         the whole vocabulary (ids are drawn from it; >= 1 for embedding,
  //                 cross_entropy and their backward ops);
  //   total_rows    cross_entropy, cross_entropy_loss and cross_entropy_dgrad: the tokens
  //                 the loss is the mean over (the whole step's, so that token-split pieces
  //                 sum to the whole loss).
  int64_t row_offset = 0;
  int64_t vocab_offset = 0;
  int64_t vocab = 0;
  int64_t total_rows = 0;
};

// The output piece, row-major, from the input pieces (row-major, in order). Throws
// InvalidArgument when the sizes do not match the shapes, the shapes break the op's rules
// (check_tensor_op), `output` is not the shape the inputs give (for embedding and
// embedding_wgrad, whose rows only `output` knows, when its columns differ from the
// input's), or the op is not a tensor op.
//
// Conventions (each exactly what PyTorch computes in float64):
//   add                 a + b
//   rms_norm            y = x · rsqrt(mean(x², last dim) + ε) · w
//   rms_norm_dgrad      dx of rms_norm given dy (w, ε as above)
//   rms_norm_wgrad      dw[j] = Σ_rows dy[i, j] · x[i, j] · rsqrt(mean(x[i]²) + ε)
//   swiglu              silu(gate) · up, silu(g) = g · sigmoid(g)
//   swiglu_dgrad_gate   dy · up · silu'(gate);  swiglu_dgrad_up: dy · silu(gate)
//   gelu, gelu_dgrad    GELU's tanh form, 0.5 x (1 + tanh(√(2/π)(x + 0.044715 x³))), and its
//                       derivative times dy
//   attention           per sequence (`seq` consecutive rows), per key/value group g and
//                       query head i of the group: softmax(q kᵀ / √d) v with the causal mask
//                       (position j ≤ position i) when attrs.causal; the piece's groups are
//                       those its columns hold (core/tensor_op.hpp's layout)
//   attention_dgrad     d qkv of attention given (qkv, out, d out): d q, d k, d v in qkv's
//                       layout (a group's k and v gradients summed over its query heads);
//                       the probabilities are recomputed from qkv, and the softmax
//                       backward's rowsum(d out ∘ out) is taken from the given `out`, as
//                       FlashAttention does
//   embedding           row t: table[token_id(row_offset + t) − vocab_offset] when that id is
//                       in the piece, else zeros; the piece's rows are output[0] (attrs.rows
//                       is not read)
//   embedding_wgrad     row v of the piece: Σ over rows t whose id is vocab_offset + v of dy[t]
//   cross_entropy       Σ_t (logsumexp(logits[t]) − logits[t, label_id(row_offset + t)]) /
//                       total_rows — the piece's share of the mean; logits hold the whole
//                       vocabulary (their columns must equal `vocab`; total_rows >= 1)
//   cross_entropy_stats row t: [Σ_c exp(logits[t, c]), logits[t, label] or 0] over the
//                       piece's columns (no max subtracted: the [T, 2] pieces of a split
//                       vocabulary sum to the whole row's)
//   cross_entropy_loss  Σ_t (log stats[t, 0] − stats[t, 1]) / total_rows
//   cross_entropy_dgrad (exp(logits[t, c]) / stats[t, 0] − onehot(label)) · dloss /
//                       total_rows on the piece's columns, stats the whole rows', dloss the
//                       0-d upstream gradient of the loss
std::vector<double> tensor_op_reference(const TensorOpCall& call,
                                        const std::vector<std::vector<double>>& inputs);

// The kernels of the ops that are not elementwise, which their rows point at
// (core/tensor_op_registry.cpp; an elementwise op's row holds its function). They trust the
// shapes: call tensor_op_reference, which checks them first.
namespace tensor_op_kernels {
using Inputs = std::vector<std::vector<double>>;
std::vector<double> rms_norm(const TensorOpCall& call, const Inputs& inputs);
std::vector<double> rms_norm_dgrad(const TensorOpCall& call, const Inputs& inputs);
std::vector<double> rms_norm_wgrad(const TensorOpCall& call, const Inputs& inputs);
std::vector<double> attention(const TensorOpCall& call, const Inputs& inputs);
std::vector<double> attention_dgrad(const TensorOpCall& call, const Inputs& inputs);
std::vector<double> embedding(const TensorOpCall& call, const Inputs& inputs);
std::vector<double> embedding_wgrad(const TensorOpCall& call, const Inputs& inputs);
std::vector<double> cross_entropy(const TensorOpCall& call, const Inputs& inputs);
std::vector<double> cross_entropy_stats(const TensorOpCall& call, const Inputs& inputs);
std::vector<double> cross_entropy_loss(const TensorOpCall& call, const Inputs& inputs);
std::vector<double> cross_entropy_dgrad(const TensorOpCall& call, const Inputs& inputs);
}  // namespace tensor_op_kernels

}  // namespace symmesh
