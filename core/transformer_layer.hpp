#pragma once
// One transformer layer (core/transformer_spec.hpp) as one table of its ops in forward order:
// the only place that lists them. Every reader iterates it — the closed form prices a layer
// from it (strategies/training_step_estimate.hpp), the simulated replica writes its ops from
// it (strategies/training_step_program.hpp), the generated dataflow's per-layer ops come
// from it (scenario/model_expansion.hpp), and the activation memory sums what its ops save
// (core/transformer_memory.hpp); the layer's parameter count is the sum of its ops'
// parameters (TransformerSpec::layer_parameters).
//
// A Llama layer (SwiGLU; GELU drops `gate` and its activation reads `up` alone), on one
// tensor-parallel rank of t with Megatron's sequence parallelism, T tokens on the rank's
// replica:
//
//   op         work       forward shape / bytes           TP collective   saves for backward
//   norm1      kernel     2 · T·h/t                                       x (the layer input)
//   qkv        GEMM col   [T, h] x [h, (H + 2K)d / t]     all-gather      n1
//   rotary     kernel     2 · T·(H + K)d / t
//   attention  attention  causal, b·H/t heads of [s, d]                   q, k, v; softmax
//   out        GEMM row   [T, Hd/t] x [Hd/t, h]           reduce-scatter  ctx
//   residual1  kernel     3 · T·h/t                                       (dropout mask)
//   norm2      kernel     2 · T·h/t                                       h
//   gate       GEMM col   [T, h] x [h, f/t]               all-gather      n2
//   up         GEMM col   [T, h] x [h, f/t]
//   act        kernel     3 · T·f/t                                       gate_out, up_out
//   down       GEMM row   [T, f/t] x [f/t, h]             reduce-scatter  act_out
//   residual2  kernel     3 · T·h/t                                       (dropout mask)
//
// (h hidden, H heads, K kv_heads, d head_dim, f ffn, s seq, b = T/s sequences; kernel bytes
// are elements read and written times the dtype's size.) A column-parallel GEMM splits its
// output features over t, a row-parallel one its input features; under sequence
// parallelism the [T, h] residual stream is split by tokens, all-gathered before the first
// column-parallel GEMM of each block and reduce-scattered after its row-parallel one.
// Backward multiples: a GEMM 2 (data and weight gradients), attention 2.5 (FlashAttention's
// five causal products against the forward's two: it recomputes the scores), a kernel 2
// (two launches of its forward bytes); each collective's backward is the other one.
// Dropout (GPT) is priced nowhere yet: only its masks are kept (memory), fused into the
// residual adds and the attention core as Megatron fuses them.
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/matmul_signature.hpp"
#include "core/transformer_spec.hpp"

namespace symmesh {

enum class LayerWork {
  gemm,       // a linear layer: [T, k] x [k, n] on each rank's piece
  attention,  // causal attention over the rank's heads (FlashAttention: no s x s tensor)
  kernel,     // HBM-bound: its bytes read and written at HBM bandwidth, one launch
};

// How tensor parallelism splits an op's tensor over the t ranks of its group.
enum class TpSplit {
  tokens,   // the residual stream's rows: sequence parallelism gives each rank T/t tokens
  columns,  // the features of heads or FFN columns: each rank has 1/t of them
};

// The sequence-parallel collective of the [T, h] activation around a GEMM.
enum class TpCollective { none, all_gather, reduce_scatter };
std::string_view to_string(TpCollective collective);  // "", "all-gather", "reduce-scatter"
// The backward's collective for a forward one: all-gather <-> reduce-scatter.
TpCollective backward_of(TpCollective collective);

struct LayerParameter {
  std::string_view name;  // as the generated dataflow names it ("w_qkv")
  std::vector<int64_t> shape;
  int64_t elements() const;
};

// Which activations a layer keeps, by what recomputation may drop.
enum class SavedRole {
  activation,        // kept unless the whole layer is recomputed
  layer_input,       // kept always: full recomputation reruns the layer from it
  attention_core,    // the s x s tensors (softmax output, dropout's): dropped by selective
                     // recomputation, never made by FlashAttention
  flash_statistics,  // FlashAttention's in their place: fp32 log-sum-exp per head and token
};

// One tensor an op keeps for its backward, counted on the op that reads it first.
struct SavedTensor {
  std::string_view name;           // "x", "qkv_out", "softmax", "dropout mask"
  int64_t elements_per_token = 0;  // of the whole layer (before tensor parallelism)
  int64_t bytes_per_element = 0;   // 0: the layer's dtype
  TpSplit split = TpSplit::tokens;
  SavedRole role = SavedRole::activation;
};

// One key of an op in the generated dataflow: key "a" reads tensor "n1".
struct DataflowRead {
  std::string_view key;
  std::string_view tensor;  // another op's output, a parameter, or kLayerInput
};
// The tensor names that leave the layer: its input (the residual stream x_l) and its output
// x_(l+1); every other name is the layer's own.
inline constexpr std::string_view kLayerInput = "x";
inline constexpr std::string_view kLayerOutput = "x_next";

struct LayerOp {
  std::string_view name;  // the dataflow op's name within its layer ("qkv")
  LayerWork work = LayerWork::kernel;
  // gemm: [T, in_features] x [in_features, out_features] on the whole layer; tensor
  // parallelism divides the output features (column-parallel) or the input features
  // (row-parallel: out, down).
  int64_t in_features = 0;
  int64_t out_features = 0;
  bool row_parallel = false;
  // kernel: it reads and writes `kernel_tensors` tensors of `kernel_width` elements per token
  // (a residual add: two reads, one write), split over the tensor ranks as `split` says.
  int kernel_tensors = 0;
  int64_t kernel_width = 0;
  TpSplit split = TpSplit::tokens;
  double backward_multiple = 2;  // backward time / forward time
  TpCollective tp_before = TpCollective::none;
  TpCollective tp_after = TpCollective::none;
  std::vector<LayerParameter> parameters;  // what it reads besides activations
  std::vector<SavedTensor> saves;
  // The generated dataflow (scenario/model_expansion.hpp): its op kind ("" when the
  // dataflow has no op of its own: rotary is applied inside its attention op), what it
  // reads under which key, what it makes.
  std::string_view dataflow_op;
  std::vector<DataflowRead> reads;
  std::string_view output;
};

// The layer's ops in forward order (the table above, for this spec).
std::vector<LayerOp> transformer_layer_ops(const TransformerSpec& spec);

// A GEMM op's forward on one tensor rank for `tokens` rows: m = tokens, n and k its
// features, the split one divided by tp. Throws InvalidArgument for an op that is no GEMM.
LocalGemm layer_gemm(const LayerOp& op, int64_t tokens, int tp);
// Its backward: the data gradient [T, n] x [n, k] and the weight gradient [k, T] x [T, n].
LocalGemm layer_gemm_dgrad(const LayerOp& op, int64_t tokens, int tp);
LocalGemm layer_gemm_wgrad(const LayerOp& op, int64_t tokens, int tp);

// A kernel op's HBM traffic (bytes read and written) on one tensor rank under sequence
// parallelism, for `tokens` rows. Throws InvalidArgument for an op that is no kernel.
double layer_kernel_bytes(const LayerOp& op, const TransformerSpec& spec, int64_t tokens, int tp);

// Causal attention's products over sequences · heads / tp heads of one rank, each at
// work_fraction 0.5 (the causal half): the forward's scores q·kᵀ [s, s] (k = d) and context
// p·v [s, d] (k = s); the backward's five — the scores recomputed, dP = dO·vᵀ, and dV, dQ,
// dK.
struct AttentionProduct {
  std::string_view name;
  LocalGemm gemm;
  double work_fraction = 0.5;
};
std::vector<AttentionProduct> attention_products(const TransformerSpec& spec, int64_t sequences,
                                                 int tp, bool backward);

// An op's forward FLOPs on one tensor rank for `tokens` rows (whole sequences): 2mnk for a
// GEMM, the products' FLOPs times their work fraction for attention, none counted for a
// kernel (HBM-bound: its time is its bytes).
double layer_op_forward_flops(const LayerOp& op, const TransformerSpec& spec, int64_t tokens,
                              int tp);

}  // namespace symmesh
