// Version-2 scenarios with a `model:` block (scenario/model_reader.hpp,
// scenario/model_expansion.hpp): the generated step equals one written out by hand, a
// Hugging Face config.json is read with the block's keys overriding it, a resized scenario
// is generated again, and bad blocks and configs fail at file:line:col (1-based, counted by
// hand in the text below).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_test_files.hpp"

using namespace symmesh;
using symmesh::testing::error_of;
using symmesh::testing::ScenarioFiles;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

// Lines 1-3 of most scenarios below; the model block follows on line 4.
const std::string kHeader = R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 4], names: [dp, tp]}
)yaml";

// The tiny model of the equivalence test. seq 24 (not 16 = head_dim) so that no two of the
// step's sizes coincide and a swapped dim cannot pass unnoticed.
const std::string kTinyModel =
    "model: {layers: 2, hidden: 64, heads: 4, kv_heads: 2, ffn: 128, vocab: 256, seq: 24, "
    "micro_batch: 1}\n";

// The same step written out by hand, following the layout of model_expansion.cpp's header
// comment, on the mesh [2, 4] = [dp, tp]:
//   tokens T       = dp 2 · micro_batch 1 · seq 24       = 48
//   head_dim d     = hidden 64 / heads 4                 = 16
//   qkv width      = (heads 4 + 2 · kv_heads 2) · d 16  = 128
//   q width        = heads 4 · d 16                      = 64
// The embedding's output x0 must end split by tokens over dp and (sequence parallel) tp:
// ["S(0)", "S(0)"] (an output declaration: no shape). Parameters leave their placements
// to the planner. Per layer: norm, qkv, attention, out, residual add, norm, gate, up,
// SwiGLU, down, residual add, each marked with its layer (the layout search plans alike
// layers once); then the final norm, the output projection and the loss.
const char* kTinyByHand = R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 4], names: [dp, tp]}
training: {}
tensors:
  w_embed:    {shape: [256, 64], parameter: true}
  x0:         {placements: ["S(0)", "S(0)"]}
  l0_w_norm1: {shape: [64], parameter: true}
  l0_w_qkv:   {shape: [64, 128], parameter: true}
  l0_w_o:     {shape: [64, 64], parameter: true}
  l0_w_norm2: {shape: [64], parameter: true}
  l0_w_gate:  {shape: [64, 128], parameter: true}
  l0_w_up:    {shape: [64, 128], parameter: true}
  l0_w_down:  {shape: [128, 64], parameter: true}
  l1_w_norm1: {shape: [64], parameter: true}
  l1_w_qkv:   {shape: [64, 128], parameter: true}
  l1_w_o:     {shape: [64, 64], parameter: true}
  l1_w_norm2: {shape: [64], parameter: true}
  l1_w_gate:  {shape: [64, 128], parameter: true}
  l1_w_up:    {shape: [64, 128], parameter: true}
  l1_w_down:  {shape: [128, 64], parameter: true}
  w_norm:     {shape: [64], parameter: true}
  w_out:      {shape: [64, 256], parameter: true}
workload:
  - {name: embed,        op: embedding, a: w_embed, output: x0, tokens: 48}
  - {name: l0_norm1,     op: rms_norm,  a: x0,          b: l0_w_norm1, output: l0_n1, layer: 0}
  - {name: l0_qkv,       op: mm,        a: l0_n1,       b: l0_w_qkv,   output: l0_qkv_out, layer: 0}
  - {name: l0_attention, op: attention, a: l0_qkv_out,  output: l0_ctx, heads: 4, kv_heads: 2, head_dim: 16, seq: 24, layer: 0}
  - {name: l0_out,       op: mm,        a: l0_ctx,      b: l0_w_o,     output: l0_attn_out, layer: 0}
  - {name: l0_residual1, op: add,       a: x0,          b: l0_attn_out, output: l0_h, layer: 0}
  - {name: l0_norm2,     op: rms_norm,  a: l0_h,        b: l0_w_norm2, output: l0_n2, layer: 0}
  - {name: l0_gate,      op: mm,        a: l0_n2,       b: l0_w_gate,  output: l0_gate_out, layer: 0}
  - {name: l0_up,        op: mm,        a: l0_n2,       b: l0_w_up,    output: l0_up_out, layer: 0}
  - {name: l0_act,       op: swiglu,    a: l0_gate_out, b: l0_up_out,  output: l0_act_out, layer: 0}
  - {name: l0_down,      op: mm,        a: l0_act_out,  b: l0_w_down,  output: l0_mlp_out, layer: 0}
  - {name: l0_residual2, op: add,       a: l0_h,        b: l0_mlp_out, output: x1, layer: 0}
  - {name: l1_norm1,     op: rms_norm,  a: x1,          b: l1_w_norm1, output: l1_n1, layer: 1}
  - {name: l1_qkv,       op: mm,        a: l1_n1,       b: l1_w_qkv,   output: l1_qkv_out, layer: 1}
  - {name: l1_attention, op: attention, a: l1_qkv_out,  output: l1_ctx, heads: 4, kv_heads: 2, head_dim: 16, seq: 24, layer: 1}
  - {name: l1_out,       op: mm,        a: l1_ctx,      b: l1_w_o,     output: l1_attn_out, layer: 1}
  - {name: l1_residual1, op: add,       a: x1,          b: l1_attn_out, output: l1_h, layer: 1}
  - {name: l1_norm2,     op: rms_norm,  a: l1_h,        b: l1_w_norm2, output: l1_n2, layer: 1}
  - {name: l1_gate,      op: mm,        a: l1_n2,       b: l1_w_gate,  output: l1_gate_out, layer: 1}
  - {name: l1_up,        op: mm,        a: l1_n2,       b: l1_w_up,    output: l1_up_out, layer: 1}
  - {name: l1_act,       op: swiglu,    a: l1_gate_out, b: l1_up_out,  output: l1_act_out, layer: 1}
  - {name: l1_down,      op: mm,        a: l1_act_out,  b: l1_w_down,  output: l1_mlp_out, layer: 1}
  - {name: l1_residual2, op: add,       a: l1_h,        b: l1_mlp_out, output: x2, layer: 1}
  - {name: norm,         op: rms_norm,  a: x2,          b: w_norm,     output: xn}
  - {name: output,       op: mm,        a: xn,          b: w_out,      output: logits}
  - {name: loss,         op: cross_entropy, a: logits,  output: loss}
)yaml";

const TensorDecl* find_tensor(const Scenario& s, const std::string& name) {
  for (const TensorDecl& t : s.tensors)
    if (t.name == name) return &t;
  return nullptr;
}

const WorkloadOp* find_op(const Scenario& s, const std::string& name) {
  for (const WorkloadOp& op : s.workload)
    if (op.name == name) return &op;
  return nullptr;
}

// The elements of every declared parameter.
int64_t parameter_elements(const Scenario& s) {
  int64_t n = 0;
  for (const TensorDecl& t : s.tensors) {
    if (t.role != TensorDecl::Role::parameter) continue;
    int64_t elements = 1;
    for (int64_t d : t.shape) elements *= d;
    n += elements;
  }
  return n;
}

std::string placements_text(const std::optional<Placements>& p) {
  return p ? to_string(*p) : "(none)";
}

class ModelScenarioErrors : public symmesh::testing::ScenarioFileTest {};

// A minimal config.json of the Llama family, one key a line, with `extra` (one key, no
// trailing comma) on line 9:
//   1 {
//   2   "model_type": "<type>",          value at column 17
//   3   "hidden_size": 64,
//   4   "intermediate_size": 128,
//   5   "num_attention_heads": 4,
//   6   "num_hidden_layers": 2,
//   7   "num_key_value_heads": 2,
//   8   "vocab_size": 256,
//   9   <extra>                          key at column 3
//  10 }
std::string hf_config(const std::string& model_type, const std::string& extra) {
  return "{\n  \"model_type\": \"" + model_type +
         "\",\n"
         "  \"hidden_size\": 64,\n"
         "  \"intermediate_size\": 128,\n"
         "  \"num_attention_heads\": 4,\n"
         "  \"num_hidden_layers\": 2,\n"
         "  \"num_key_value_heads\": 2,\n"
         "  \"vocab_size\": 256,\n"
         "  " +
         extra + "\n}\n";
}

// The scenario reading config.json from its own folder: the model block on line 4.
const std::string kReadsConfig = kHeader + "model: {hf_config: config.json, seq: 24}\n";

}  // namespace

// ---- The generated step is the hand-written one ----

TEST(ModelScenario, TinyModelEqualsTheStepWrittenByHand) {
  ScenarioFiles files;
  const Scenario generated = load_scenario(files.write("model.yaml", kHeader + kTinyModel));
  const Scenario by_hand = load_scenario(files.write("by-hand.yaml", kTinyByHand));

  ASSERT_TRUE(generated.model.has_value());
  EXPECT_FALSE(by_hand.model.has_value());
  EXPECT_EQ(generated.version, 2);
  EXPECT_THAT(generated.mesh_shape, ElementsAre(2, 4));
  EXPECT_THAT(generated.mesh_names, ElementsAre("dp", "tp"));
  // A model without training: is a training step (backward, Adam), as `training: {}`.
  ASSERT_TRUE(generated.training.has_value());
  ASSERT_TRUE(by_hand.training.has_value());
  EXPECT_EQ(generated.training->backward, by_hand.training->backward);
  EXPECT_EQ(generated.training->optimizer, by_hand.training->optimizer);
  EXPECT_EQ(generated.training->zero_stage, by_hand.training->zero_stage);

  // Tensors: the same names in the same order, roles, shapes and placements.
  ASSERT_EQ(by_hand.tensors.size(), 18u);  // w_embed, x0, 7 per layer, w_norm, w_out
  ASSERT_EQ(generated.tensors.size(), by_hand.tensors.size());
  for (size_t i = 0; i < by_hand.tensors.size(); ++i) {
    const TensorDecl& want = by_hand.tensors[i];
    const TensorDecl& got = generated.tensors[i];
    SCOPED_TRACE("tensor " + std::to_string(i) + " '" + want.name + "'");
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.role, want.role);
    EXPECT_EQ(got.shape, want.shape);
    EXPECT_EQ(placements_text(got.placements), placements_text(want.placements));
  }

  // Ops: the same names in the same order, kinds, shapes and tensors read and produced.
  ASSERT_EQ(by_hand.workload.size(), 26u);  // embed, 11 per layer, norm, output, loss
  ASSERT_EQ(generated.workload.size(), by_hand.workload.size());
  for (size_t i = 0; i < by_hand.workload.size(); ++i) {
    const WorkloadOp& want = by_hand.workload[i];
    const WorkloadOp& got = generated.workload[i];
    SCOPED_TRACE("op " + std::to_string(i) + " '" + want.name + "'");
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.kind, want.kind);
    EXPECT_EQ(got.a, want.a);
    EXPECT_EQ(got.b, want.b);
    EXPECT_EQ(got.bias.has_value(), want.bias.has_value());
    EXPECT_EQ(got.a_tensor, want.a_tensor);
    EXPECT_EQ(got.b_tensor, want.b_tensor);
    EXPECT_EQ(got.bias_tensor, want.bias_tensor);
    EXPECT_EQ(got.output_tensor, want.output_tensor);
    EXPECT_EQ(got.causal, want.causal) << got.name;
    EXPECT_EQ(got.dtype, want.dtype);
    EXPECT_EQ(got.attrs, want.attrs) << got.name;
    EXPECT_EQ(got.layer, want.layer) << got.name;  // `layer: l` on layer l's ops, else -1
  }

  // And a few of the hand-worked figures, as the loader filled them.
  const WorkloadOp* embed = find_op(generated, "embed");
  ASSERT_NE(embed, nullptr);
  EXPECT_EQ(embed->kind, OpKind::embedding);
  EXPECT_EQ(embed->attrs.rows, 48);  // T tokens looked up
  const WorkloadOp* attention = find_op(generated, "l1_attention");
  ASSERT_NE(attention, nullptr);
  EXPECT_EQ(attention->kind, OpKind::attention);
  EXPECT_THAT(attention->a, ElementsAre(48, 128));  // [T, qkv width]
  EXPECT_EQ(attention->attrs.heads, 4);
  EXPECT_EQ(attention->attrs.kv_heads, 2);
  EXPECT_EQ(attention->attrs.head_dim, 16);
  EXPECT_EQ(attention->attrs.seq, 24);
  EXPECT_TRUE(attention->attrs.causal);
  const WorkloadOp* norm = find_op(generated, "l0_norm2");
  ASSERT_NE(norm, nullptr);
  EXPECT_THAT(norm->b, ElementsAre(64));  // the norm's weight, [hidden]
  const WorkloadOp* down = find_op(generated, "l0_down");
  ASSERT_NE(down, nullptr);
  EXPECT_THAT(down->a, ElementsAre(48, 128));  // [T, ffn]
  const WorkloadOp* output = find_op(generated, "output");
  ASSERT_NE(output, nullptr);
  EXPECT_THAT(output->a, ElementsAre(48, 64));
  EXPECT_THAT(output->b, ElementsAre(64, 256));
  EXPECT_EQ(output->output_tensor, "logits");
  const WorkloadOp* loss = find_op(generated, "loss");
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->kind, OpKind::cross_entropy);
  EXPECT_THAT(loss->a, ElementsAre(48, 256));  // the logits [T, vocab]
}

TEST(ModelScenario, GeluMlpAndQkvBiasChangeTheStepAsDocumented) {
  // activation: gelu drops the gate and runs GELU on up's output (10 ops a layer); qkv_bias
  // makes qkv an addmm reading b_qkv of the qkv width, (4 + 2·4)·16 = 192 with kv_heads
  // defaulting to heads.
  ScenarioFiles files;
  const Scenario s = load_scenario(files.write(
      "gelu.yaml", kHeader +
                       "model: {layers: 1, hidden: 64, heads: 4, ffn: 128, vocab: 256, seq: 24, "
                       "activation: gelu, qkv_bias: true}\n"));
  ASSERT_EQ(s.workload.size(), 14u);  // embed, 10 for the layer, norm, output, loss
  EXPECT_EQ(find_op(s, "l0_gate"), nullptr);
  EXPECT_EQ(find_tensor(s, "l0_w_gate"), nullptr);
  const WorkloadOp* act = find_op(s, "l0_act");
  ASSERT_NE(act, nullptr);
  EXPECT_EQ(act->kind, OpKind::gelu);
  EXPECT_EQ(act->a_tensor, "l0_up_out");
  const WorkloadOp* qkv = find_op(s, "l0_qkv");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->kind, OpKind::addmm);
  EXPECT_EQ(qkv->bias_tensor, "l0_b_qkv");
  ASSERT_TRUE(qkv->bias.has_value());
  EXPECT_THAT(*qkv->bias, ElementsAre(192));
  EXPECT_THAT(qkv->b, ElementsAre(64, 192));
}

TEST(ModelScenario, TiedEmbeddingsProjectOntoTheEmbeddingTable) {
  // tie_embeddings: Hugging Face's lm_head shares embed_tokens' weight [vocab, hidden], so
  // the logits are xn · w_embedᵀ, torch.nn.functional.linear(xn, w_embed): no w_out, and the
  // output op is `linear` reading w_embed [256, 64]. Parameters of the tiny model by hand:
  // w_embed 256·64 = 16,384; per layer norms 2·64 + qkv 64·128 + o 64·64 + gate, up, down
  // 3·64·128 = 128 + 8,192 + 4,096 + 24,576 = 36,992, two layers 73,984; w_norm 64; untied,
  // w_out adds 64·256 = 16,384 more: 90,432 tied, 106,816 untied.
  ScenarioFiles files;
  const std::string tied_model =
      "model: {layers: 2, hidden: 64, heads: 4, kv_heads: 2, ffn: 128, vocab: 256, seq: 24, "
      "micro_batch: 1, tie_embeddings: true}\n";
  const Scenario tied = load_scenario(files.write("tied.yaml", kHeader + tied_model));
  const Scenario untied = load_scenario(files.write("untied.yaml", kHeader + kTinyModel));
  EXPECT_EQ(parameter_elements(tied), 90'432);
  EXPECT_EQ(parameter_elements(untied), 106'816);
  EXPECT_EQ(find_tensor(tied, "w_out"), nullptr);
  const WorkloadOp* output = find_op(tied, "output");
  ASSERT_NE(output, nullptr);
  EXPECT_EQ(output->kind, OpKind::linear);
  EXPECT_EQ(output->a_tensor, "xn");
  EXPECT_EQ(output->b_tensor, "w_embed");
  EXPECT_THAT(output->b, ElementsAre(256, 64));
  EXPECT_EQ(output->output_tensor, "logits");
  ASSERT_EQ(tied.workload.size(), untied.workload.size());  // the same 26 ops
}

TEST(ModelScenario, FullRecomputationMakesEachLayerACheckpointSegment) {
  // recompute: full — Megatron-LM's full recomputation, one segment per layer: the layer's
  // eleven ops carry checkpoint l<i>; embed, the final norm, output and loss none.
  ScenarioFiles files;
  const Scenario s = load_scenario(files.write(
      "full.yaml", kHeader +
                       "model: {layers: 2, hidden: 64, heads: 4, kv_heads: 2, ffn: 128, vocab: "
                       "256, seq: 24, micro_batch: 1, recompute: full}\n"));
  ASSERT_EQ(s.workload.size(), 26u);
  int in_l0 = 0, in_l1 = 0;
  for (const WorkloadOp& op : s.workload) {
    const bool layer_op = op.name.rfind("l0_", 0) == 0 || op.name.rfind("l1_", 0) == 0;
    EXPECT_EQ(op.checkpoint, layer_op ? op.name.substr(0, 2) : "") << op.name;
    in_l0 += op.checkpoint == "l0";
    in_l1 += op.checkpoint == "l1";
  }
  EXPECT_EQ(in_l0, 11);
  EXPECT_EQ(in_l1, 11);
}

// ---- A Hugging Face config.json ----

TEST(ModelScenario, ShippedLlamaConfigWithLayersOverridden) {
  ScenarioFiles files;
  const Scenario s = load_scenario(
      files.write("llama.yaml",
                  kHeader + "model: {hf_config: models/llama3.1-8b.json, layers: 1, seq: 128}\n"));
  ASSERT_TRUE(s.model.has_value());
  const TransformerSpec& m = *s.model;
  EXPECT_EQ(m.name, "llama3.1-8b");  // the file's stem
  EXPECT_EQ(m.layers, 1);            // the block's, not the file's 32
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.heads, 32);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);  // 4096 / 32, Hugging Face's default
  EXPECT_EQ(m.ffn, 14336);
  EXPECT_EQ(m.vocab, 128256);
  EXPECT_EQ(m.seq, 128);
  EXPECT_EQ(m.micro_batch, 1);
  EXPECT_FALSE(m.qkv_bias);        // attention_bias: false
  EXPECT_FALSE(m.tie_embeddings);  // tie_word_embeddings: false
  EXPECT_EQ(m.activation, MlpActivation::swiglu);

  // The embedding, 11 ops for the one layer, then the norm, output projection and loss.
  ASSERT_EQ(s.workload.size(), 15u);
  EXPECT_EQ(s.workload.back().name, "loss");
  EXPECT_EQ(find_tensor(s, "l1_w_qkv"), nullptr);  // no second layer
  const TensorDecl* w_qkv = find_tensor(s, "l0_w_qkv");
  ASSERT_NE(w_qkv, nullptr);
  EXPECT_THAT(w_qkv->shape, ElementsAre(4096, 6144));  // (32 + 2·8) · 128 = 6144
  const TensorDecl* w_out = find_tensor(s, "w_out");
  ASSERT_NE(w_out, nullptr);
  EXPECT_THAT(w_out->shape, ElementsAre(4096, 128256));
  EXPECT_THAT(find_op(s, "l0_norm1")->a, ElementsAre(256, 4096));  // dp 2 · 1 · seq 128
}

TEST(ModelScenario, ShippedTiedLlama32OneBHasOneTable) {
  // Llama 3.2 1B (scenarios/models/llama3.2-1b.json, tie_word_embeddings: true), its
  // parameters by hand: embedding 128,256 · 2,048 = 262,668,288; per layer qkv
  // 2,048 · (2,048 + 2 · 512) = 6,291,456, o 2,048² = 4,194,304, gate/up/down
  // 3 · 2,048 · 8,192 = 50,331,648, two norms 4,096: 60,821,504, times 16 = 973,144,064;
  // final norm 2,048. Total 1,235,814,400, the count Hugging Face lists for the model.
  ScenarioFiles files;
  const Scenario s = load_scenario(files.write(
      "tied.yaml", kHeader + "model: {hf_config: models/llama3.2-1b.json, seq: 128}\n"));
  ASSERT_TRUE(s.model.has_value());
  EXPECT_TRUE(s.model->tie_embeddings);
  EXPECT_EQ(parameter_elements(s), 1'235'814'400);
  EXPECT_EQ(find_tensor(s, "w_out"), nullptr);
}

TEST(ModelScenario, OverridingHiddenOfAConfigWithoutHeadDimRederivesIt) {
  // llama3.1-8b.json states no head_dim, so Hugging Face derives it from the final
  // hidden_size / num_attention_heads: overriding hidden to 2048 makes it 2048 / 32 = 64,
  // and the qkv weight [2048, (32 + 2·8) · 64 = 3072] with w_o [32 · 64 = 2048, 2048].
  ScenarioFiles files;
  const Scenario s = load_scenario(
      files.write("narrow.yaml", kHeader + "model: {hf_config: models/llama3.1-8b.json, "
                                           "hidden: 2048, layers: 1, seq: 128}\n"));
  ASSERT_TRUE(s.model.has_value());
  EXPECT_EQ(s.model->hidden, 2048);
  EXPECT_EQ(s.model->head_dim, 64);
  const TensorDecl* w_qkv = find_tensor(s, "l0_w_qkv");
  ASSERT_NE(w_qkv, nullptr);
  EXPECT_THAT(w_qkv->shape, ElementsAre(2048, 3072));
  const TensorDecl* w_o = find_tensor(s, "l0_w_o");
  ASSERT_NE(w_o, nullptr);
  EXPECT_THAT(w_o->shape, ElementsAre(2048, 2048));
}

TEST(ModelScenario, SlidingWindowNullIsFullAttention) {
  // Mistral's published configs say "sliding_window": null for full attention.
  ScenarioFiles files;
  files.write("config.json", hf_config("mistral", "\"sliding_window\": null"));
  const Scenario s = load_scenario(files.write("scenario.yaml", kReadsConfig));
  ASSERT_TRUE(s.model.has_value());
  EXPECT_EQ(s.model->name, "config");
  EXPECT_EQ(s.model->layers, 2);
  EXPECT_EQ(s.model->kv_heads, 2);
  EXPECT_EQ(s.model->head_dim, 16);
  EXPECT_EQ(s.workload.size(), 26u);
}

TEST(ModelScenario, MlpBiasFalseIsAccepted) {
  ScenarioFiles files;
  files.write("config.json", hf_config("llama", "\"mlp_bias\": false"));
  const Scenario s = load_scenario(files.write("scenario.yaml", kReadsConfig));
  ASSERT_TRUE(s.model.has_value());
  EXPECT_EQ(s.workload.size(), 26u);
}

// ---- Resizing (a sweep point) generates the step again ----

TEST(ModelScenario, ResizeDoublesTheTokensWithDp) {
  ScenarioFiles files;
  const Scenario s = load_scenario(files.write("resize.yaml",
                                               "version: 2\ncluster: clusters/dgx-h100.yaml\n"
                                               "mesh: {shape: [1, 8], names: [dp, tp]}\n" +
                                                   kTinyModel));
  // dp 1: tokens = 1 · 1 · 24 = 24.
  EXPECT_THAT(find_op(s, "l0_norm1")->a, ElementsAre(24, 64));

  const Scenario big = with_cluster_size(s, 2, {2, 8});
  EXPECT_EQ(big.cluster.nodes, 2);
  EXPECT_THAT(big.mesh_shape, ElementsAre(2, 8));
  EXPECT_THAT(big.mesh_names, ElementsAre("dp", "tp"));
  // dp 2: tokens = 2 · 1 · 24 = 48, looked up by the embedding and read by attention.
  EXPECT_EQ(find_op(big, "embed")->attrs.rows, 48);
  EXPECT_THAT(find_op(big, "l0_attention")->a, ElementsAre(48, 128));
  // The ops read the new shapes too; the parameters do not change.
  const WorkloadOp* qkv = find_op(big, "l0_qkv");
  ASSERT_NE(qkv, nullptr);
  EXPECT_THAT(qkv->a, ElementsAre(48, 64));
  EXPECT_THAT(qkv->b, ElementsAre(64, 128));
  EXPECT_EQ(big.workload.size(), s.workload.size());
  EXPECT_EQ(big.tensors.size(), s.tensors.size());
  // The original is untouched.
  EXPECT_EQ(find_op(s, "embed")->attrs.rows, 24);
}

TEST(ModelScenario, GlobalBatchKeepsTheTokensAndSplitsThemOverDp) {
  ScenarioFiles files;
  const Scenario s = load_scenario(files.write(
      "global.yaml",
      "version: 2\ncluster: clusters/dgx-h100.yaml\nmesh: {shape: [1, 8], names: [dp, tp]}\n"
      "model: {layers: 1, hidden: 64, heads: 4, kv_heads: 2, ffn: 128, vocab: 256, seq: 24, "
      "global_batch: 4}\n"));
  // 4 sequences of 24 tokens whatever dp is: 96 rows.
  EXPECT_EQ(find_op(s, "embed")->attrs.rows, 96);
  EXPECT_THAT(find_op(s, "l0_attention")->a, ElementsAre(96, 128));
  const Scenario dp2 = with_cluster_size(s, 2, {2, 8});
  EXPECT_EQ(find_op(dp2, "embed")->attrs.rows, 96);
  EXPECT_THAT(find_op(dp2, "loss")->a, ElementsAre(96, 256));
  // dp 8 does not divide 4 sequences: the point is refused, naming the key.
  const auto e = error_of([&] { with_cluster_size(s, 8, {8, 8}); });
  EXPECT_THAT(e.message(), HasSubstr("model.global_batch 4 sequences do not split evenly over "
                                     "dp 8"));
}

TEST(ModelScenario, GlobalBatchWithMicroBatchGeneratesOneMicroBatchPerReplica) {
  ScenarioFiles files;
  const Scenario s = load_scenario(files.write(
      "both.yaml",
      "version: 2\ncluster: clusters/dgx-h100.yaml\nmesh: {shape: [2, 4], names: [dp, tp]}\n"
      "model: {layers: 1, hidden: 64, heads: 4, ffn: 128, vocab: 256, seq: 24, micro_batch: 2, "
      "global_batch: 8}\n"));
  // One micro-batch on each of dp 2 replicas: 2 x 2 sequences of 24 tokens = 96 rows (the
  // step's 8 sequences are 2 such micro-batches, which the dataflow does not repeat).
  EXPECT_EQ(find_op(s, "embed")->attrs.rows, 96);
  EXPECT_EQ(s.model->global_batch, 8);
  // dp 8 x micro_batch 2 = 16 sequences per pass do not divide 8.
  const auto e = error_of([&] { with_cluster_size(s, 2, {8, 2}); });
  EXPECT_THAT(e.message(), HasSubstr("do not split evenly over dp 8 data-parallel replicas of "
                                     "micro_batch 2 sequences each"));
}

TEST(ModelScenario, StepsTooLargeToGenerateAreRefusedBeforeAnyText) {
  ScenarioFiles files;
  const std::string head =
      "version: 2\ncluster: clusters/dgx-h100.yaml\nmesh: {shape: [1, 8], names: [dp, tp]}\n";
  // 100,000 layers: more than the 512 generated.
  auto e = error_of([&] {
    load_scenario(files.write("many.yaml", head + "model: {layers: 100000, hidden: 64, heads: 4, "
                                                  "ffn: 128, vocab: 256, seq: 24}\n"));
  });
  EXPECT_THAT(e.message(), HasSubstr("layers 100000 is more than 512"));
  // 512 SwiGLU layers, 11 ops each, and the embedding, final norm, output projection and
  // loss: 5,636 ops, over a cap lowered to 3,000.
  setenv("SYMMESH_MAX_OPS", "3000", 1);
  e = error_of([&] {
    load_scenario(files.write("capped.yaml", head + "model: {layers: 512, hidden: 64, heads: 4, "
                                                    "ffn: 128, vocab: 256, seq: 24}\n"));
  });
  unsetenv("SYMMESH_MAX_OPS");
  EXPECT_THAT(e.message(), HasSubstr("model.layers 512 generates 5636 ops, more than the 3000"));
  // seq 60,000,000 x micro_batch 100,000 = 6e12 tokens: the logits [T, vocab 256] hold
  // 1.536e15 elements > 2^50 (about 1.126e15).
  e = error_of([&] {
    load_scenario(files.write("long.yaml", head + "model: {layers: 1, hidden: 64, heads: 4, ffn: "
                                                  "128, vocab: 256, seq: 60000000, "
                                                  "micro_batch: 100000}\n"));
  });
  EXPECT_THAT(e.message(), HasSubstr("largest tensor would hold 1.54e+15 elements"));
  // A width beyond the bounds that keep the counts in 64 bits, at its key.
  const std::string wide = files.write(
      "wide.yaml",
      head + "model: {layers: 1, hidden: 2000000, heads: 4, ffn: 128, vocab: 256, seq: 24}\n");
  e = error_of([&] { load_scenario(wide); });
  EXPECT_EQ(e.where(), wide + ":4:28");  // the value of hidden
  EXPECT_THAT(e.message(), HasSubstr("hidden 2000000 is more than 1048576"));
}

// ---- Errors in the scenario ----

TEST_F(ModelScenarioErrors, MicroBatchesFollowFromTheModelNotTheTrainingBlock) {
  // training.micro_batches is for hand-written steps; a model's follow from global_batch /
  // (dp x micro_batch): here 8 / (2 x 2) = 2, and a written one is refused at its value.
  const Scenario s = load(kHeader +
                          "model: {layers: 1, hidden: 64, heads: 4, ffn: 128, vocab: 256, seq: 24, "
                          "micro_batch: 2, global_batch: 8}\n");
  ASSERT_TRUE(s.training.has_value());
  EXPECT_EQ(s.training->micro_batch_count(), 2);
  const auto e = load_error(kHeader +
                            "model: {layers: 1, hidden: 64, heads: 4, ffn: 128, vocab: 256, "
                            "seq: 24}\ntraining: {micro_batches: 4}\n");
  EXPECT_EQ(e.where(), at(5, 27));
  EXPECT_THAT(e.message(), HasSubstr("training.micro_batches follows from the model"));
  const auto zero = load_error(kHeader +
                               "model: {layers: 1, hidden: 64, heads: 4, ffn: 128, vocab: 256, "
                               "seq: 24}\ntraining: {micro_batches: 0}\n");
  EXPECT_EQ(zero.where(), at(5, 27));
  EXPECT_THAT(zero.message(), HasSubstr("a number of micro-batches >= 1"));
}

// A size the Hugging Face config gave, found wrong once the model is whole, is reported at
// the config's key (its file:line:col, named), not at the scenario's model: block; one the
// model: block gave, at that key. hf_config's layout: line 7 is
// `  "num_key_value_heads": 2,` (value at column 26), line 3 `  "hidden_size": 64,`
// (value at column 18).
TEST_F(ModelScenarioErrors, AConfigsWrongSizeIsReportedAtTheConfigsKey) {
  std::string config = hf_config("llama", "\"head_dim\": 16");
  config.replace(config.find("\"num_key_value_heads\": 2"), 24, "\"num_key_value_heads\": 3");
  files_.write("config.json", config);
  auto e = load_error(kReadsConfig);
  EXPECT_EQ(e.where(), at_in("config.json", 7, 26));
  EXPECT_THAT(e.message(), HasSubstr("num_key_value_heads (model.kv_heads): kv_heads 3 does not "
                                     "divide heads 4"));
  // Overridden in the model: block, the block's value is the one reported (line 4).
  e = load_error(kHeader + "model: {hf_config: config.json, seq: 24, kv_heads: 3}\n");
  EXPECT_EQ(e.where().substr(0, path_.size() + 3), path_ + ":4:");
  config = hf_config("llama", "\"head_dim\": 16");
  config.replace(config.find("\"hidden_size\": 64"), 17, "\"hidden_size\": 2000000");
  files_.write("config.json", config);
  e = load_error(kReadsConfig);
  EXPECT_EQ(e.where(), at_in("config.json", 3, 18));
  EXPECT_THAT(e.message(), HasSubstr("hidden_size (model.hidden): hidden 2000000 is more than "
                                     "1048576"));
}

TEST_F(ModelScenarioErrors, ModelNeedsVersion2) {
  const auto e = load_error(R"yaml(cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 4], names: [dp, tp]}
model: {layers: 2, hidden: 64, heads: 4, ffn: 128, vocab: 256, seq: 24}
)yaml");
  EXPECT_EQ(e.where(), at(3, 1));
  EXPECT_THAT(e.message(), HasSubstr("'model' needs 'version: 2'"));
}

TEST_F(ModelScenarioErrors, ModelWithWorkloadOrTensors) {
  auto e = load_error(kHeader + kTinyModel + "workload: []\n");
  EXPECT_EQ(e.where(), at(5, 1));
  EXPECT_THAT(e.message(), HasSubstr("'workload' is generated from 'model'"));
  EXPECT_THAT(e.message(), HasSubstr("give one or the other"));

  e = load_error(kHeader + "tensors: {}\n" + kTinyModel);
  EXPECT_EQ(e.where(), at(4, 1));
  EXPECT_THAT(e.message(), HasSubstr("'tensors' is generated from 'model'"));
}

TEST_F(ModelScenarioErrors, MeshWithoutNames) {
  // At the mesh (line 3, column 7), which is what lacks the names.
  auto e = load_error("version: 2\ncluster: clusters/dgx-h100.yaml\nmesh: [2, 4]\n" + kTinyModel);
  EXPECT_EQ(e.where(), at(3, 7));
  EXPECT_THAT(e.message(), HasSubstr("a model scenario names its mesh dims"));
  EXPECT_THAT(e.message(), HasSubstr("names: [dp, tp]"));

  e = load_error("version: 2\ncluster: clusters/dgx-h100.yaml\nmesh: {shape: [2, 4]}\n" +
                 kTinyModel);
  EXPECT_EQ(e.where(), at(3, 7));
  EXPECT_THAT(e.message(), HasSubstr("a model scenario names its mesh dims"));
}

TEST_F(ModelScenarioErrors, PipelineDimComesFirst) {
  // mesh: {shape: [4, 2], names: [tp, pp]}
  //                                   ^ column 35: at the offending name, as the loader places
  // its other mesh-name errors (duplicate, numeric) at the name.
  const auto e = load_error(
      "version: 2\ncluster: clusters/dgx-h100.yaml\n"
      "mesh: {shape: [4, 2], names: [tp, pp]}\n" +
      kTinyModel);
  EXPECT_THAT(e.message(), HasSubstr("mesh dim 'pp' holds pipeline stages and comes first"));
  EXPECT_EQ(e.where(), at(3, 35));
}

TEST_F(ModelScenarioErrors, ContextParallelDimIsNotGenerated) {
  // mesh: {shape: [2, 4], names: [cp, tp]}: 'cp' at column 31.
  const auto e = load_error(
      "version: 2\ncluster: clusters/dgx-h100.yaml\n"
      "mesh: {shape: [2, 4], names: [cp, tp]}\n" +
      kTinyModel);
  EXPECT_THAT(e.message(), HasSubstr("mesh dim 'cp'"));
  EXPECT_THAT(e.message(), HasSubstr("context parallelism is not generated yet"));
  EXPECT_EQ(e.where(), at(3, 31));
}

TEST_F(ModelScenarioErrors, TiedEmbeddingsAcrossStagesAreRefused) {
  // Line 4 is the model block (column 8): the table would be read on stage 0 and stage 1.
  const auto e = load_error(
      "version: 2\ncluster: clusters/dgx-h100.yaml\n"
      "mesh: {shape: [2, 4], names: [pp, tp]}\n"
      "model: {layers: 2, hidden: 64, heads: 4, kv_heads: 2, ffn: 128, vocab: 256, seq: 24, "
      "micro_batch: 1, tie_embeddings: true}\n");
  EXPECT_THAT(e.message(), HasSubstr("tied embeddings over 2 pipeline stages"));
  EXPECT_EQ(e.where(), at(4, 8));
}

TEST_F(ModelScenarioErrors, MoreStagesThanLayers) {
  const auto e = load_error(
      "version: 2\ncluster: clusters/dgx-h100.yaml\n"
      "mesh: {shape: [4, 2], names: [pp, tp]}\n" +
      kTinyModel);
  EXPECT_THAT(e.message(), HasSubstr("model.layers 2 cannot fill 4 pipeline stages"));
  EXPECT_EQ(e.where(), at(4, 8));
}

TEST_F(ModelScenarioErrors, UnknownModelKeySuggestsTheClosest) {
  // model: {layers: 2, hiden: 64, ...}: 'hiden' at column 20.
  const auto e = load_error(
      kHeader + "model: {layers: 2, hiden: 64, heads: 4, ffn: 128, vocab: 256, seq: 24}\n");
  EXPECT_EQ(e.where(), at(4, 20));
  EXPECT_THAT(e.message(), HasSubstr("unknown key 'hiden' in model"));
  EXPECT_THAT(e.message(), HasSubstr("did you mean 'hidden'?"));
}

TEST_F(ModelScenarioErrors, SelectiveRecomputationSaysTheFusedAttentionStoresNoScores) {
  // Line 4: "model: {layers: 1, hidden: 64, heads: 4, ffn: 128, vocab: 256, seq: 24, recompute:
  // selective}"; the value 'selective' starts at column 84.
  const auto e = load_error(kHeader +
                            "model: {layers: 1, hidden: 64, heads: 4, ffn: 128, vocab: 256, "
                            "seq: 24, recompute: selective}\n");
  EXPECT_EQ(e.where(), at(4, 84));
  EXPECT_THAT(e.message(), HasSubstr("fused attention never stores"));
}

TEST_F(ModelScenarioErrors, MissingSeq) {
  // At the block (line 4, column 8): seq is the run's, no config gives it.
  const auto e =
      load_error(kHeader + "model: {layers: 2, hidden: 64, heads: 4, ffn: 128, vocab: 256}\n");
  EXPECT_EQ(e.where(), at(4, 8));
  EXPECT_THAT(e.message(), HasSubstr("seq"));
  EXPECT_THAT(e.message(), HasSubstr("missing"));
}

TEST_F(ModelScenarioErrors, MissingSeqWithHfConfig) {
  const auto e = load_error(kHeader + "model: {hf_config: models/llama3.1-8b.json}\n");
  EXPECT_EQ(e.where(), at(4, 8));
  EXPECT_THAT(e.message(), HasSubstr("seq"));
}

TEST_F(ModelScenarioErrors, KvHeadsMustDivideHeads) {
  // model: {layers: 2, hidden: 64, heads: 4, kv_heads: 3, ...}: the 3 at column 52.
  const auto e = load_error(
      kHeader +
      "model: {layers: 2, hidden: 64, heads: 4, kv_heads: 3, ffn: 128, vocab: 256, seq: 24}\n");
  EXPECT_EQ(e.where(), at(4, 52));
  EXPECT_THAT(e.message(), HasSubstr("kv_heads 3 does not divide heads 4"));
}

TEST_F(ModelScenarioErrors, HfConfigNotFound) {
  // model: {hf_config: models/llama3.1-8c.json, ...}: the path at column 20.
  const auto e = load_error(kHeader + "model: {hf_config: models/llama3.1-8c.json, seq: 128}\n");
  EXPECT_EQ(e.where(), at(4, 20));
  EXPECT_THAT(e.message(), HasSubstr("Hugging Face config 'models/llama3.1-8c.json' not found"));
  EXPECT_THAT(e.message(), HasSubstr("did you mean 'models/llama3.1-8b.json'?"));
}

// ---- Errors in the config.json ----

TEST_F(ModelScenarioErrors, HfConfigOfAnotherFamily) {
  // A minimal config naming gpt2: at the model_type's value (line 2, column 17).
  files_.write("config.json", hf_config("gpt2", "\"use_cache\": true"));
  const auto e = load_error(kReadsConfig);
  EXPECT_EQ(e.where(), at_in("config.json", 2, 17));
  EXPECT_THAT(e.message(), HasSubstr("model_type 'gpt2' is not supported"));
  EXPECT_THAT(e.message(), HasSubstr("llama, mistral, qwen2"));
}

TEST_F(ModelScenarioErrors, RealGpt2ConfigSaysItsModelTypeIsNotSupported) {
  // GPT-2's config.json as Hugging Face publishes it (keys sorted; the summary_* and
  // task_specific_params keys left out). Every key but model_type and vocab_size is one
  // symmesh does not know, and the cause is the family: the message a user needs is the
  // model_type's (line 10, column 17), not "unsupported key 'activation_function'".
  files_.write("config.json", R"json({
  "activation_function": "gelu_new",
  "architectures": ["GPT2LMHeadModel"],
  "attn_pdrop": 0.1,
  "bos_token_id": 50256,
  "embd_pdrop": 0.1,
  "eos_token_id": 50256,
  "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05,
  "model_type": "gpt2",
  "n_ctx": 1024,
  "n_embd": 768,
  "n_head": 12,
  "n_layer": 12,
  "n_positions": 1024,
  "resid_pdrop": 0.1,
  "vocab_size": 50257
}
)json");
  const auto e = load_error(kReadsConfig);
  EXPECT_THAT(e.message(), HasSubstr("model_type 'gpt2' is not supported"));
  EXPECT_EQ(e.where(), at_in("config.json", 10, 17));
}

TEST_F(ModelScenarioErrors, HfConfigMixtureOfExperts) {
  files_.write("config.json", hf_config("mistral", "\"num_local_experts\": 8"));
  const auto e = load_error(kReadsConfig);
  EXPECT_EQ(e.where(), at_in("config.json", 9, 3));
  EXPECT_THAT(e.message(), HasSubstr("'num_local_experts'"));
  EXPECT_THAT(e.message(), HasSubstr("mixture of experts"));
}

TEST_F(ModelScenarioErrors, HfConfigUnknownKey) {
  files_.write("config.json", hf_config("llama", "\"foo_bar\": 1"));
  const auto e = load_error(kReadsConfig);
  EXPECT_EQ(e.where(), at_in("config.json", 9, 3));
  EXPECT_THAT(e.message(), HasSubstr("unsupported key 'foo_bar' in a Hugging Face config"));
}

TEST_F(ModelScenarioErrors, HfConfigSlidingWindow) {
  // "sliding_window": 4096: the value at column 21.
  files_.write("config.json", hf_config("mistral", "\"sliding_window\": 4096"));
  const auto e = load_error(kReadsConfig);
  EXPECT_EQ(e.where(), at_in("config.json", 9, 21));
  EXPECT_THAT(e.message(), HasSubstr("sliding-window attention is not modelled"));
  EXPECT_THAT(e.message(), HasSubstr("'sliding_window': null"));
}

TEST_F(ModelScenarioErrors, HfConfigMlpBias) {
  // "mlp_bias": true: the value at column 15.
  files_.write("config.json", hf_config("llama", "\"mlp_bias\": true"));
  const auto e = load_error(kReadsConfig);
  EXPECT_EQ(e.where(), at_in("config.json", 9, 15));
  EXPECT_THAT(e.message(), HasSubstr("'mlp_bias': true is not modelled"));
}
