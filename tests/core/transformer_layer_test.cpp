// The table of a transformer layer's ops (core/transformer_layer.hpp) against counts worked
// by hand from Llama 3.1 8B's published shapes (scenarios/models/llama3.1-8b.json): hidden
// 4096, 32 heads of 128, 8 key/value heads, FFN 14336, SwiGLU, bf16, one sequence of 8192.
#include "core/transformer_layer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/errors.hpp"

namespace symmesh {
namespace {

TransformerSpec llama8b() {
  TransformerSpec s;
  s.layers = 32;
  s.hidden = 4096;
  s.heads = 32;
  s.kv_heads = 8;
  s.head_dim = 128;
  s.ffn = 14336;
  s.vocab = 128256;
  s.seq = 8192;
  return s;
}

const LayerOp& op_named(const std::vector<LayerOp>& ops, std::string_view name) {
  for (const LayerOp& op : ops)
    if (op.name == name) return op;
  throw std::runtime_error("no layer op " + std::string(name));
}

std::vector<std::string> names(const std::vector<LayerOp>& ops) {
  std::vector<std::string> out;
  for (const LayerOp& op : ops) out.emplace_back(op.name);
  return out;
}

TEST(TransformerLayer, OpsInForwardOrder) {
  TransformerSpec s = llama8b();
  EXPECT_THAT(names(transformer_layer_ops(s)),
              ::testing::ElementsAre("norm1", "qkv", "rotary", "attention", "out", "residual1",
                                     "norm2", "gate", "up", "act", "down", "residual2"));
  s.activation = MlpActivation::gelu;  // GPT's MLP: no gate
  EXPECT_THAT(names(transformer_layer_ops(s)),
              ::testing::ElementsAre("norm1", "qkv", "rotary", "attention", "out", "residual1",
                                     "norm2", "up", "act", "down", "residual2"));
}

TEST(TransformerLayer, ParametersAreLlama8bsPerLayerCount) {
  // By hand: w_qkv 4096 x (32 + 2 x 8) x 128 = 4096 x 6144 = 25,165,824; w_o 4096 x 4096 =
  // 16,777,216; w_gate, w_up, w_down 3 x 4096 x 14336 = 176,160,768; two norms 2 x 4096 =
  // 8,192. Sum 218,112,000.
  int64_t total = 0;
  std::vector<std::string> seen;
  for (const LayerOp& op : transformer_layer_ops(llama8b()))
    for (const LayerParameter& p : op.parameters) {
      total += p.elements();
      seen.emplace_back(p.name);
    }
  EXPECT_EQ(total, 218'112'000);
  EXPECT_THAT(seen, ::testing::ElementsAre("w_norm1", "w_qkv", "w_o", "w_norm2", "w_gate", "w_up",
                                           "w_down"));
  const auto ops = transformer_layer_ops(llama8b());
  EXPECT_EQ(op_named(ops, "qkv").parameters.at(0).shape, (std::vector<int64_t>{4096, 6144}));
  EXPECT_EQ(op_named(ops, "down").parameters.at(0).shape, (std::vector<int64_t>{14336, 4096}));
  // The spec's count is the table's.
  EXPECT_EQ(llama8b().layer_parameters(), 218'112'000);
}

TEST(TransformerLayer, QkvBiasIsAnAddmmWithItsVector) {
  TransformerSpec s = llama8b();
  s.qkv_bias = true;
  const LayerOp qkv = op_named(transformer_layer_ops(s), "qkv");
  EXPECT_EQ(qkv.dataflow_op, "addmm");
  ASSERT_EQ(qkv.parameters.size(), 2u);
  EXPECT_EQ(qkv.parameters[1].shape, (std::vector<int64_t>{6144}));
  EXPECT_EQ(qkv.reads.front().key, "bias");
  EXPECT_EQ(s.layer_parameters(), 218'112'000 + 6144);
}

TEST(TransformerLayer, GemmShapesOnATensorRankOfEight) {
  // tp 8, T = 8192 tokens: qkv is column-parallel, [8192, 4096] x [4096, 6144 / 8 = 768];
  // out row-parallel, [8192, 4096 / 8 = 512] x [512, 4096]; gate [4096, 14336 / 8 = 1792];
  // down [1792, 4096].
  const auto ops = transformer_layer_ops(llama8b());
  EXPECT_EQ(layer_gemm(op_named(ops, "qkv"), 8192, 8), (LocalGemm{1, 8192, 768, 4096}));
  EXPECT_EQ(layer_gemm(op_named(ops, "out"), 8192, 8), (LocalGemm{1, 8192, 4096, 512}));
  EXPECT_EQ(layer_gemm(op_named(ops, "gate"), 8192, 8), (LocalGemm{1, 8192, 1792, 4096}));
  EXPECT_EQ(layer_gemm(op_named(ops, "up"), 8192, 8), (LocalGemm{1, 8192, 1792, 4096}));
  EXPECT_EQ(layer_gemm(op_named(ops, "down"), 8192, 8), (LocalGemm{1, 8192, 4096, 1792}));
  // qkv's backward: dX [8192, 768] x [768, 4096], dW [4096, 8192] x [8192, 768].
  EXPECT_EQ(layer_gemm_dgrad(op_named(ops, "qkv"), 8192, 8), (LocalGemm{1, 8192, 4096, 768}));
  EXPECT_EQ(layer_gemm_wgrad(op_named(ops, "qkv"), 8192, 8), (LocalGemm{1, 4096, 768, 8192}));
  EXPECT_THROW(layer_gemm(op_named(ops, "norm1"), 8192, 8), InvalidArgument);
}

TEST(TransformerLayer, SequenceParallelCollectivesAroundEachBlock) {
  // Megatron's sequence parallelism: all-gather [T, h] before qkv and before the MLP's
  // first matrix, reduce-scatter after out and down; nothing else.
  for (const MlpActivation act : {MlpActivation::swiglu, MlpActivation::gelu}) {
    TransformerSpec s = llama8b();
    s.activation = act;
    std::vector<std::string> around;
    for (const LayerOp& op : transformer_layer_ops(s)) {
      if (op.tp_before != TpCollective::none)
        around.push_back(std::string(to_string(op.tp_before)) + " " + std::string(op.name));
      if (op.tp_after != TpCollective::none)
        around.push_back(std::string(op.name) + " " + std::string(to_string(op.tp_after)));
    }
    const char* mlp_first = act == MlpActivation::swiglu ? "all-gather gate" : "all-gather up";
    EXPECT_THAT(around, ::testing::ElementsAre("all-gather qkv", "out reduce-scatter", mlp_first,
                                               "down reduce-scatter"));
  }
  EXPECT_EQ(backward_of(TpCollective::all_gather), TpCollective::reduce_scatter);
  EXPECT_EQ(backward_of(TpCollective::reduce_scatter), TpCollective::all_gather);
}

TEST(TransformerLayer, KernelBytesOnATensorRankOfEight) {
  // bf16, T = 8192, t = 8: a norm reads and writes 8192 x 4096 / 8 = 4,194,304 elements
  // each: 2 x 2 x 4,194,304 = 16,777,216 B; a residual add two reads and a write:
  // 25,165,824 B; rotary q and k, (4096 + 1024) / 8 = 640 columns read and written:
  // 2 x 2 x 8192 x 640 = 20,971,520 B; SwiGLU gate and up in, one out, 1792 columns:
  // 3 x 2 x 8192 x 1792 = 88,080,384 B.
  const TransformerSpec s = llama8b();
  const auto ops = transformer_layer_ops(s);
  EXPECT_DOUBLE_EQ(layer_kernel_bytes(op_named(ops, "norm1"), s, 8192, 8), 16'777'216.0);
  EXPECT_DOUBLE_EQ(layer_kernel_bytes(op_named(ops, "residual2"), s, 8192, 8), 25'165'824.0);
  EXPECT_DOUBLE_EQ(layer_kernel_bytes(op_named(ops, "rotary"), s, 8192, 8), 20'971'520.0);
  EXPECT_DOUBLE_EQ(layer_kernel_bytes(op_named(ops, "act"), s, 8192, 8), 88'080'384.0);
  EXPECT_THROW(layer_kernel_bytes(op_named(ops, "qkv"), s, 8192, 8), InvalidArgument);
}

TEST(TransformerLayer, AttentionProductsOverTheRanksHeads) {
  // tp 8: 32 / 8 = 4 heads of one sequence; scores [8192, 128] x [128, 8192], context
  // [8192, 8192] x [8192, 128], half of each (causal). The backward has five.
  const TransformerSpec s = llama8b();
  const auto forward = attention_products(s, 1, 8, false);
  ASSERT_EQ(forward.size(), 2u);
  EXPECT_EQ(forward[0].gemm, (LocalGemm{4, 8192, 8192, 128}));
  EXPECT_EQ(forward[1].gemm, (LocalGemm{4, 8192, 128, 8192}));
  EXPECT_EQ(forward[0].work_fraction, 0.5);
  EXPECT_EQ(attention_products(s, 1, 8, true).size(), 5u);
  EXPECT_EQ(op_named(transformer_layer_ops(s), "attention").backward_multiple, 2.5);
}

TEST(TransformerLayer, ForwardFlopsPerTokenAndPalmsModelFlops) {
  // One 8B layer's forward per token at tp 1: the GEMMs 2 x (4096 x 6144 + 4096 x 4096 +
  // 3 x 4096 x 14336) = 2 x 218,103,808 = 436,207,616; causal attention at s = 8192: scores
  // and context 2 x 2 x 8192 x 4096 per token, half of it, 67,108,864. Sum 503,316,480.
  const TransformerSpec s = llama8b();
  double flops = 0, attention = 0;
  for (const LayerOp& op : transformer_layer_ops(s)) {
    const double f = layer_op_forward_flops(op, s, 8192, 1);
    flops += f;
    if (op.work == LayerWork::attention) attention += f;
  }
  EXPECT_DOUBLE_EQ(flops / 8192, 503'316'480.0);
  EXPECT_DOUBLE_EQ(attention / 8192, 67'108'864.0);
  // On a rank of 8 each op does an eighth.
  double per_rank = 0;
  for (const LayerOp& op : transformer_layer_ops(s))
    per_rank += layer_op_forward_flops(op, s, 8192, 8);
  EXPECT_DOUBLE_EQ(per_rank * 8, flops);
  // PaLM's model FLOPs per token (57,914,449,920, transformer_spec_test.cpp) from the table:
  // 32 layers of 3 x the forward, the attention counted whole (twice its causal half, so
  // 3 x 67,108,864 more) and 6 per norm weight (12 x 4096), plus 6 x the final norm (4096)
  // and the output projection (128256 x 4096).
  const double per_layer = 3 * flops / 8192 + 3 * attention / 8192 + 12 * 4096.0;
  EXPECT_DOUBLE_EQ(32 * per_layer + 6 * 4096.0 + 6 * 128256.0 * 4096, s.model_flops_per_token());
}

TEST(TransformerLayer, SavedTensorsAreKorthikantisCount) {
  // Per token: the layer input x, n1, h and n2 (4 x 4096, split by tokens); q, k, v (6144),
  // ctx (4096), gate_out, up_out and act_out (3 x 14336), split by columns; the softmax
  // (32 heads x 8192 keys) as the attention core; x alone is the layer's input.
  int64_t tokens_split = 0, columns_split = 0, core = 0;
  std::vector<std::string> inputs;
  for (const LayerOp& op : transformer_layer_ops(llama8b()))
    for (const SavedTensor& t : op.saves) {
      if (t.role == SavedRole::layer_input) inputs.emplace_back(t.name);
      if (t.role == SavedRole::attention_core) core += t.elements_per_token;
      if (t.role != SavedRole::activation && t.role != SavedRole::layer_input) continue;
      (t.split == TpSplit::tokens ? tokens_split : columns_split) += t.elements_per_token;
    }
  EXPECT_EQ(tokens_split, 4 * 4096);
  EXPECT_EQ(columns_split, 6144 + 4096 + 3 * 14336);
  EXPECT_EQ(core, 32 * 8192);
  EXPECT_THAT(inputs, ::testing::ElementsAre("x"));
}

TEST(TransformerLayer, DataflowReadsWhatTheLayerHas) {
  // Each read is the layer's input, a parameter of the op, or an earlier op's output; the
  // last op makes the layer's output. 11 dataflow ops for SwiGLU (rotary is inside
  // attention's), 10 for GELU.
  for (const MlpActivation act : {MlpActivation::swiglu, MlpActivation::gelu}) {
    TransformerSpec s = llama8b();
    s.activation = act;
    s.qkv_bias = true;
    std::set<std::string_view> made{kLayerInput};
    int dataflow_ops = 0;
    const auto ops = transformer_layer_ops(s);
    for (const LayerOp& op : ops) {
      if (op.dataflow_op.empty()) continue;
      ++dataflow_ops;
      for (const DataflowRead& read : op.reads) {
        bool parameter = false;
        for (const LayerParameter& p : op.parameters) parameter |= p.name == read.tensor;
        EXPECT_TRUE(parameter || made.count(read.tensor)) << op.name << " reads " << read.tensor;
      }
      made.insert(op.output);
    }
    EXPECT_EQ(dataflow_ops, act == MlpActivation::swiglu ? 11 : 10);
    EXPECT_EQ(ops.back().output, kLayerOutput);
  }
}

}  // namespace
}  // namespace symmesh
