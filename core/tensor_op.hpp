#pragma once
// The one owner of tensor-op shapes and work, as core/matmul_signature.hpp is for matrix
// ops. Tensor ops are the rest of a transformer's step: the memory-bound kernels between the
// matmuls (RMSNorm, the residual add, SwiGLU, GELU), the fused causal attention, the
// embedding lookup and the cross-entropy loss — and the backward op of each, which a
// version-2 `training:` step derives (strategies/dataflow_graph.hpp) and files cannot write.
//
//   op                   inputs (in order)        output          what it computes
//   add                  a [..], b [..]           [..]            a + b (same shapes)
//   rms_norm             x [r, h], w [h]          [r, h]          x / rms(x) · w per row
//   swiglu               gate [r, f], up [r, f]   [r, f]          silu(gate) · up
//   gelu                 x [r, f]                 [r, f]          gelu(x) (tanh form)
//   attention            qkv [T, (H + 2K)·d]      [T, H·d]        causal softmax(q·kᵀ/√d)·v
//   embedding            table [V, h]             [tokens, h]     table[token id of each row]
//   cross_entropy        logits [T, V]            []              mean of lse − logit[label]
// and the ops a training step derives:
//   rms_norm_dgrad       x, w, dy                 [r, h]          dx
//   rms_norm_wgrad       x, dy                    [h]             Σ_rows dy · x / rms(x)
//   swiglu_dgrad_gate    gate, up, dy             [r, f]          d gate
//   swiglu_dgrad_up      gate, dy                 [r, f]          d up
//   gelu_dgrad           x, dy                    [r, f]          dx
//   attention_dgrad      qkv, out, d out          [T, (H+2K)·d]   d qkv (FlashAttention's)
//   embedding_wgrad      d out [tokens, h]        [V, h]          d table (rows summed per id)
//   cross_entropy_stats  logits [T, V]            [T, 2]          Σ_v exp(logit), logit[label]
//   cross_entropy_loss   stats [T, 2]             []              mean of log Σ − logit[label]
//   cross_entropy_dgrad  logits, stats, d loss    [T, V]          (softmax − onehot) · dloss / T
//
// A file's cross_entropy runs as cross_entropy_stats then cross_entropy_loss
// (strategies/dataflow_graph.hpp), so that the vocabulary may stay split, as Megatron-LM's
// vocab-parallel cross entropy keeps it: each rank sums its columns' exponentials and finds
// the label's logit if it holds it, the [T, 2] statistics are all-reduced (a Partial(sum)
// the planner reduces), and the loss and its gradient follow on each rank's own columns.
// (Megatron also all-reduces the row maximum first, for range: a [T] all-reduce that is not
// modelled; the sums here are of exp(logit), which emulation's values keep in range.)
//
// attention's qkv rows are T = sequences · seq tokens, each sequence `seq` consecutive rows;
// its columns are K key/value groups side by side, each [H/K query heads, one key head, one
// value head] of d columns — Megatron-LM's layout of its fused QKV projection, so that a
// contiguous column shard is a set of whole groups. The output's columns are the H query
// heads in that order. Token ids and labels are data, not tensors: embedding and
// cross_entropy read them as the rows they work on (core/tensor_op_reference.hpp makes
// them up for emulation).
//
// Each kind is one row of core/tensor_op_registry.hpp: its inputs, shape and cost class,
// rules, backward and values, which the functions here read.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/matmul_signature.hpp"
#include "core/op_kind.hpp"
#include "core/tensor_op_registry.hpp"
#include "core/tensor_spec.hpp"

namespace symmesh {

// What some tensor ops need beyond their input shapes (a scenario op's keys).
struct TensorOpAttrs {
  // attention and attention_dgrad: tokens per sequence, the model's query heads and
  // key/value heads, the width of one head, and whether the mask is causal. A piece of qkv
  // holds whole key/value groups: its width is a multiple of (heads / kv_heads + 2) ·
  // head_dim (attention_groups).
  int64_t seq = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;
  int64_t head_dim = 0;
  bool causal = true;
  // embedding: rows of the output (the tokens looked up); embedding_wgrad: rows of the
  // table (its output). 0 for the other ops.
  int64_t rows = 0;
  bool operator==(const TensorOpAttrs&) const = default;
};

// head_dim of the model's whole qkv width, or 0 when (heads + 2 kv_heads) does not divide it.
int64_t attention_head_dim(int64_t qkv_width, const TensorOpAttrs& attrs);
// Key/value groups in a piece of qkv `qkv_width` columns wide (attrs.head_dim set), or -1
// when the width is not whole groups.
int64_t attention_groups(int64_t qkv_width, const TensorOpAttrs& attrs);

// The first problem with these input shapes (global or one rank's pieces alike), naming the
// operand ("a", "b", or the input's name) — as MatmulEquation::check does for matrix ops.
std::optional<ShapeProblem> check_tensor_op(OpKind op, const std::vector<Shape>& inputs,
                                            const TensorOpAttrs& attrs);
// The output's shape (valid inputs assumed).
Shape tensor_op_output_shape(OpKind op, const std::vector<Shape>& inputs,
                             const TensorOpAttrs& attrs);

// The work one rank does on its pieces, for the roofline (core/roofline.hpp): attention's
// products as GEMMs (each at `work_fraction` of its FLOPs: 0.5 when causal, as
// FlashAttention skips the blocks above the diagonal), the bytes every kernel reads and
// writes in HBM, and the kernels launched. For the memory-bound ops the bytes are each
// input read once and the output written once (the fp32 per-row statistics of the norm and
// the loss included; an embedding reads only the table rows it looks up, one per token); attention reads q, k, v and writes the output and its log-sum-exp
// once (FlashAttention never writes the scores), plus the rotary embedding applied to q and
// k (one more kernel reading and writing them).
struct TensorOpCost {
  std::vector<LocalGemm> products;
  double work_fraction = 1.0;
  double bytes = 0;
  int kernels = 1;
  double effective_flops() const;  // Σ products' flops / GEMM efficiency × work_fraction
  double flops() const;            // Σ products' flops × work_fraction
};
// `inputs` and `output` are one rank's piece shapes.
TensorOpCost tensor_op_cost(OpKind op, const std::vector<Shape>& inputs, const Shape& output,
                            const TensorOpAttrs& attrs, DType dtype);

}  // namespace symmesh
