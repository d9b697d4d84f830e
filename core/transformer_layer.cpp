// The table of a transformer layer's ops (transformer_layer.hpp).
#include "core/transformer_layer.hpp"

#include <string>

#include "core/errors.hpp"

namespace symmesh {
namespace {

LayerOp gemm(std::string_view name, int64_t in_features, int64_t out_features, bool row_parallel) {
  LayerOp op;
  op.name = name;
  op.work = LayerWork::gemm;
  op.in_features = in_features;
  op.out_features = out_features;
  op.row_parallel = row_parallel;
  op.split = TpSplit::columns;
  op.backward_multiple = 2;  // the data gradient and the weight gradient, each the forward's
  op.dataflow_op = "mm";
  return op;
}

LayerOp kernel(std::string_view name, int tensors, int64_t width, TpSplit split) {
  LayerOp op;
  op.name = name;
  op.work = LayerWork::kernel;
  op.kernel_tensors = tensors;
  op.kernel_width = width;
  op.split = split;
  op.backward_multiple = 2;  // two launches of its forward's bytes
  return op;
}

void require_work(const LayerOp& op, LayerWork work, const char* what) {
  if (op.work != work)
    throw InvalidArgument("layer op '" + std::string(op.name) + "' is not " + what,
                          "transformer layer");
}

}  // namespace

std::string_view to_string(TpCollective collective) {
  switch (collective) {
    case TpCollective::all_gather:
      return "all-gather";
    case TpCollective::reduce_scatter:
      return "reduce-scatter";
    case TpCollective::none:
      break;
  }
  return "";
}

TpCollective backward_of(TpCollective collective) {
  switch (collective) {
    case TpCollective::all_gather:
      return TpCollective::reduce_scatter;
    case TpCollective::reduce_scatter:
      return TpCollective::all_gather;
    case TpCollective::none:
      break;
  }
  return TpCollective::none;
}

int64_t LayerParameter::elements() const {
  int64_t out = 1;
  for (const int64_t d : shape) out *= d;
  return out;
}

std::vector<LayerOp> transformer_layer_ops(const TransformerSpec& spec) {
  const int64_t h = spec.hidden, f = spec.ffn;
  const bool swiglu = spec.activation == MlpActivation::swiglu;
  // Dropout's masks are one byte per element, fused into the residual adds and the
  // attention core (Megatron's bias-dropout-add and fused softmax-dropout).
  const SavedTensor dropout_mask{"dropout mask", h, 1, TpSplit::tokens, SavedRole::activation};
  std::vector<LayerOp> ops;
  ops.reserve(12);

  LayerOp norm1 = kernel("norm1", 2, h, TpSplit::tokens);  // read x, write n1
  norm1.parameters = {{"w_norm1", {h}}};
  norm1.saves = {{"x", h, 0, TpSplit::tokens, SavedRole::layer_input}};
  norm1.dataflow_op = "rms_norm";
  norm1.reads = {{"a", kLayerInput}, {"b", "w_norm1"}};
  norm1.output = "n1";
  ops.push_back(std::move(norm1));

  LayerOp qkv = gemm("qkv", h, spec.qkv_width(), /*row_parallel=*/false);
  qkv.tp_before = TpCollective::all_gather;
  qkv.parameters = {{"w_qkv", {h, spec.qkv_width()}}};
  qkv.saves = {{"n1", h, 0, TpSplit::tokens, SavedRole::activation}};
  qkv.reads = {{"a", "n1"}, {"b", "w_qkv"}};
  if (spec.qkv_bias) {  // the bias added in the GEMM's epilogue: addmm, no kernel of its own
    qkv.parameters.push_back({"b_qkv", {spec.qkv_width()}});
    qkv.dataflow_op = "addmm";
    qkv.reads.insert(qkv.reads.begin(), {"bias", "b_qkv"});
  }
  qkv.output = "qkv_out";
  ops.push_back(std::move(qkv));

  // Rotary positions on q and k (read, write); the dataflow's attention op applies it.
  ops.push_back(kernel("rotary", 2, spec.q_width() + spec.kv_width(), TpSplit::columns));

  LayerOp attention;
  attention.name = "attention";
  attention.work = LayerWork::attention;
  attention.split = TpSplit::columns;  // by heads
  attention.backward_multiple = 2.5;   // five causal products against two
  const int64_t scores = int64_t{spec.heads} * spec.seq;  // per token: one row of each head's
  attention.saves = {{"q, k, v", spec.qkv_width(), 0, TpSplit::columns, SavedRole::activation},
                     {"softmax", scores, 0, TpSplit::columns, SavedRole::attention_core}};
  if (spec.dropout) {
    attention.saves.push_back(
        {"attention dropout mask", scores, 1, TpSplit::columns, SavedRole::attention_core});
    attention.saves.push_back(
        {"dropped probabilities", scores, 0, TpSplit::columns, SavedRole::attention_core});
  }
  attention.saves.push_back(
      {"log-sum-exp", spec.heads, 4, TpSplit::columns, SavedRole::flash_statistics});
  attention.dataflow_op = "attention";
  attention.reads = {{"a", "qkv_out"}};
  attention.output = "ctx";
  ops.push_back(std::move(attention));

  LayerOp out = gemm("out", spec.q_width(), h, /*row_parallel=*/true);
  out.tp_after = TpCollective::reduce_scatter;
  out.parameters = {{"w_o", {spec.q_width(), h}}};
  // The attention's output: W_o's input, and FlashAttention's backward reads it too.
  out.saves = {{"ctx", spec.q_width(), 0, TpSplit::columns, SavedRole::activation}};
  out.reads = {{"a", "ctx"}, {"b", "w_o"}};
  out.output = "attn_out";
  ops.push_back(std::move(out));

  LayerOp residual1 = kernel("residual1", 3, h, TpSplit::tokens);  // read x, attn_out; write h
  if (spec.dropout) residual1.saves = {dropout_mask};
  residual1.dataflow_op = "add";
  residual1.reads = {{"a", kLayerInput}, {"b", "attn_out"}};
  residual1.output = "h";
  ops.push_back(std::move(residual1));

  LayerOp norm2 = kernel("norm2", 2, h, TpSplit::tokens);
  norm2.parameters = {{"w_norm2", {h}}};
  norm2.saves = {{"h", h, 0, TpSplit::tokens, SavedRole::activation}};
  norm2.dataflow_op = "rms_norm";
  norm2.reads = {{"a", "h"}, {"b", "w_norm2"}};
  norm2.output = "n2";
  ops.push_back(std::move(norm2));

  // The MLP's input matrices: the first is gathered for and keeps n2 (the second shares it).
  for (const std::string_view name : swiglu ? std::vector<std::string_view>{"gate", "up"}
                                            : std::vector<std::string_view>{"up"}) {
    const bool first = ops.back().name == "norm2";
    LayerOp in = gemm(name, h, f, /*row_parallel=*/false);
    const std::string_view weight = name == "gate" ? "w_gate" : "w_up";
    in.parameters = {{weight, {h, f}}};
    if (first) {
      in.tp_before = TpCollective::all_gather;
      in.saves = {{"n2", h, 0, TpSplit::tokens, SavedRole::activation}};
    }
    in.reads = {{"a", "n2"}, {"b", weight}};
    in.output = name == "gate" ? "gate_out" : "up_out";
    ops.push_back(std::move(in));
  }

  // SwiGLU reads gate_out and up_out and writes act_out. GELU is counted with the same three
  // tensors, as the closed form always has (it reads one and writes one).
  LayerOp act = kernel("act", 3, f, TpSplit::columns);
  if (swiglu) {
    act.saves = {{"gate_out", f, 0, TpSplit::columns, SavedRole::activation},
                 {"up_out", f, 0, TpSplit::columns, SavedRole::activation}};
    act.dataflow_op = "swiglu";
    act.reads = {{"a", "gate_out"}, {"b", "up_out"}};
  } else {
    act.saves = {{"up_out", f, 0, TpSplit::columns, SavedRole::activation}};
    act.dataflow_op = "gelu";
    act.reads = {{"a", "up_out"}};
  }
  act.output = "act_out";
  ops.push_back(std::move(act));

  LayerOp down = gemm("down", f, h, /*row_parallel=*/true);
  down.tp_after = TpCollective::reduce_scatter;
  down.parameters = {{"w_down", {f, h}}};
  down.saves = {{"act_out", f, 0, TpSplit::columns, SavedRole::activation}};
  down.reads = {{"a", "act_out"}, {"b", "w_down"}};
  down.output = "mlp_out";
  ops.push_back(std::move(down));

  LayerOp residual2 = kernel("residual2", 3, h, TpSplit::tokens);
  if (spec.dropout) residual2.saves = {dropout_mask};
  residual2.dataflow_op = "add";
  residual2.reads = {{"a", "h"}, {"b", "mlp_out"}};
  residual2.output = kLayerOutput;
  ops.push_back(std::move(residual2));
  return ops;
}

LocalGemm layer_gemm(const LayerOp& op, int64_t tokens, int tp) {
  require_work(op, LayerWork::gemm, "a GEMM");
  LocalGemm out;
  out.m = tokens;
  out.k = op.row_parallel ? op.in_features / tp : op.in_features;
  out.n = op.row_parallel ? op.out_features : op.out_features / tp;
  return out;
}

LocalGemm layer_gemm_dgrad(const LayerOp& op, int64_t tokens, int tp) {
  const LocalGemm forward = layer_gemm(op, tokens, tp);
  LocalGemm out;
  out.m = forward.m;
  out.n = forward.k;
  out.k = forward.n;
  return out;
}

LocalGemm layer_gemm_wgrad(const LayerOp& op, int64_t tokens, int tp) {
  const LocalGemm forward = layer_gemm(op, tokens, tp);
  LocalGemm out;
  out.m = forward.k;
  out.n = forward.n;
  out.k = forward.m;
  return out;
}

double layer_kernel_bytes(const LayerOp& op, const TransformerSpec& spec, int64_t tokens, int tp) {
  require_work(op, LayerWork::kernel, "an HBM-bound kernel");
  // Under sequence parallelism both splits divide by t: the token rows or the features.
  const double element = static_cast<double>(element_size_bytes(spec.dtype));
  const double per_rank = static_cast<double>(tokens) * static_cast<double>(op.kernel_width) / tp;
  return element * op.kernel_tensors * per_rank;
}

std::vector<AttentionProduct> attention_products(const TransformerSpec& spec, int64_t sequences,
                                                 int tp, bool backward) {
  const int64_t heads = sequences * spec.heads / tp;
  const int64_t s = spec.seq, d = spec.head_dim;
  const LocalGemm scores{heads, s, s, d};   // q·kᵀ, and dP = dO·vᵀ
  const LocalGemm context{heads, s, d, s};  // p·v, and dV, dQ, dK
  if (!backward) return {{"scores", scores}, {"context", context}};
  return {{"scores recompute", scores},
          {"dP", scores},
          {"dV", context},
          {"dQ", context},
          {"dK", context}};
}

double layer_op_forward_flops(const LayerOp& op, const TransformerSpec& spec, int64_t tokens,
                              int tp) {
  switch (op.work) {
    case LayerWork::gemm:
      return layer_gemm(op, tokens, tp).flops();
    case LayerWork::attention: {
      double flops = 0;
      for (const AttentionProduct& p : attention_products(spec, tokens / spec.seq, tp, false))
        flops += p.gemm.flops() * p.work_fraction;
      return flops;
    }
    case LayerWork::kernel:
      break;
  }
  return 0;
}

}  // namespace symmesh
