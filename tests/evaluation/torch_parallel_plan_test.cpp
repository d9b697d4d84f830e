// The PyTorch tensor-parallel plan of a model scenario's layout (evaluation/
// torch_parallel_plan.hpp). The expected plans are not symmesh's: they are torchtitan's Llama
// plan (pytorch/torchtitan, torchtitan/models/llama3/infra/parallelize.py, apply_tp, with
// loss_parallel, for the Llama 3 attention.forward(x, freqs_cis)) and the plain tensor
// parallelism of PyTorch's TP tutorial (ColwiseParallel() / RowwiseParallel() with their
// default layouts and no sequence parallelism), written out by hand below.
#include "evaluation/torch_parallel_plan.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh::evaluation {

// "attention.wo: RowwiseParallel(output_layouts=Shard(1))" in failure messages.
void PrintTo(const TorchStyle& s, std::ostream* os) {
  *os << s.module << ": " << s.style << "(";
  for (const auto& [k, v] : s.kwargs) *os << k << "=" << v << " ";
  *os << ")";
}

namespace {

using ::testing::HasSubstr;

const Placement R = Placement::replicate();
const Placement S0 = Placement::shard(0);
const Placement S1 = Placement::shard(1);

TpOpPlacements mm(Placement a_arriving, Placement a_computed, Placement w, Placement out) {
  return {OpKind::mm, {a_arriving, w}, {a_computed, w}, out, 0, 1};
}
TpOpPlacements tensor_op(OpKind kind, std::vector<Placement> arriving,
                         std::vector<Placement> computed, Placement out) {
  return {kind, std::move(arriving), std::move(computed), out, 0, 1};
}

// Megatron's layout with sequence parallelism, over tp, as the generated ops read it: the
// residual stream split by tokens (S(0)); qkv, gate and up split their weights by columns
// and gather their input whole; out and down split theirs by rows, read the features split
// (S(1)) and reduce-scatter back to tokens; the norms work on token rows; the embedding
// table is split by vocabulary; the output projection by vocabulary (logits S(1)).
ModelTpLayout megatron_sp(int layers) {
  ModelTpLayout m;
  m.tp_size = 8;
  m.layers = layers;
  m.ops["embed"] = {OpKind::embedding, {S0}, {S0}, S0, 0, 1};
  for (int l = 0; l < layers; ++l) {
    const std::string p = "l" + std::to_string(l) + "_";
    m.ops[p + "norm1"] = tensor_op(OpKind::rms_norm, {S0, R}, {S0, R}, S0);
    m.ops[p + "qkv"] = mm(S0, R, S1, S1);
    m.ops[p + "out"] = mm(S1, S1, S0, S0);
    m.ops[p + "norm2"] = tensor_op(OpKind::rms_norm, {S0, R}, {S0, R}, S0);
    m.ops[p + "gate"] = mm(S0, R, S1, S1);
    m.ops[p + "up"] = mm(S0, R, S1, S1);
    m.ops[p + "down"] = mm(S1, S1, S0, S0);
  }
  m.ops["norm"] = tensor_op(OpKind::rms_norm, {S0, R}, {S0, R}, S0);
  m.ops["output"] = mm(S0, R, S1, S1);
  return m;
}

// torchtitan's apply_tp, layer_plan (Llama 3: attention.forward(x, freqs_cis)).
std::vector<TorchStyle> torchtitan_layer_plan() {
  return {
      {"attention_norm", "SequenceParallel", {}},
      {"attention",
       "PrepareModuleInput",
       {{"input_layouts", "(Shard(1), None)"}, {"desired_input_layouts", "(Replicate(), None)"}}},
      {"attention.wq", "ColwiseParallel", {}},
      {"attention.wk", "ColwiseParallel", {}},
      {"attention.wv", "ColwiseParallel", {}},
      {"attention.wo", "RowwiseParallel", {{"output_layouts", "Shard(1)"}}},
      {"ffn_norm", "SequenceParallel", {}},
      {"feed_forward",
       "PrepareModuleInput",
       {{"input_layouts", "(Shard(1),)"}, {"desired_input_layouts", "(Replicate(),)"}}},
      {"feed_forward.w1", "ColwiseParallel", {}},
      {"feed_forward.w2", "RowwiseParallel", {{"output_layouts", "Shard(1)"}}},
      {"feed_forward.w3", "ColwiseParallel", {}},
  };
}

// torchtitan's apply_tp, the model-level plan with loss_parallel=True.
const TorchStyle kTorchtitanNorm{"norm", "SequenceParallel", {}};
const TorchStyle kTorchtitanOutput{"output",
                                   "ColwiseParallel",
                                   {{"input_layouts", "Shard(1)"},
                                    {"output_layouts", "Shard(-1)"},
                                    {"use_local_output", "False"}}};

TEST(TorchParallelPlan, MegatronWithSequenceParallelIsTorchtitansLlamaPlan) {
  const TorchParallelPlan plan = torch_parallel_plan(megatron_sp(3));
  const std::vector<TorchStyle> model{
      {"tok_embeddings",
       "RowwiseParallel",
       {{"input_layouts", "Replicate()"}, {"output_layouts", "Shard(1)"}}},
      kTorchtitanNorm,
      kTorchtitanOutput};
  EXPECT_EQ(plan.model, model);
  ASSERT_EQ(plan.layers.size(), 3u);
  for (const auto& layer : plan.layers) EXPECT_EQ(layer, torchtitan_layer_plan());
  EXPECT_TRUE(plan.replicated.empty());
  EXPECT_TRUE(plan.notes.empty());
  EXPECT_TRUE(plan.uniform_layers());
}

// Without sequence parallelism the activations between layers are whole on every tp rank:
// PyTorch's TP tutorial plan, ColwiseParallel() and RowwiseParallel() with their defaults
// (input Replicate / output Shard(-1); input Shard(-1) / output Replicate), norms untouched.
TEST(TorchParallelPlan, MegatronWithoutSequenceParallelIsTheTutorialsDefaults) {
  ModelTpLayout m;
  m.tp_size = 4;
  m.layers = 1;
  m.ops["l0_norm1"] = tensor_op(OpKind::rms_norm, {R, R}, {R, R}, R);
  m.ops["l0_qkv"] = mm(R, R, S1, S1);
  m.ops["l0_out"] = mm(S1, S1, S0, R);
  m.ops["l0_norm2"] = tensor_op(OpKind::rms_norm, {R, R}, {R, R}, R);
  m.ops["l0_gate"] = mm(R, R, S1, S1);
  m.ops["l0_up"] = mm(R, R, S1, S1);
  m.ops["l0_down"] = mm(S1, S1, S0, R);
  const TorchParallelPlan plan = torch_parallel_plan(m);
  ASSERT_EQ(plan.layers.size(), 1u);
  const std::vector<TorchStyle> expected{
      {"attention.wq", "ColwiseParallel", {}},    {"attention.wk", "ColwiseParallel", {}},
      {"attention.wv", "ColwiseParallel", {}},    {"attention.wo", "RowwiseParallel", {}},
      {"feed_forward.w1", "ColwiseParallel", {}}, {"feed_forward.w2", "RowwiseParallel", {}},
      {"feed_forward.w3", "ColwiseParallel", {}},
  };
  EXPECT_EQ(plan.layers[0], expected);
  EXPECT_EQ(plan.replicated,
            (std::vector<std::string>{"layers.0.attention_norm", "layers.0.ffn_norm"}));
}

TEST(TorchParallelPlan, WholeWeightsAreReplicatedAndUnexpressibleChoicesAreNoted) {
  ModelTpLayout m;
  m.tp_size = 2;
  m.layers = 1;
  m.ops["l0_qkv"] = mm(S0, S0, R, S0);   // data parallel over tp: the weight is whole
  m.ops["l0_out"] = mm(S0, S0, S1, S0);  // a column-split weight on token rows
  const TorchParallelPlan plan = torch_parallel_plan(m);
  EXPECT_EQ(plan.replicated,
            (std::vector<std::string>{"layers.0.attention.wq", "layers.0.attention.wk",
                                      "layers.0.attention.wv"}));
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_THAT(plan.notes[0], HasSubstr("layers.0.attention.wo: no ParallelStyle expresses this"));
}

TEST(TorchParallelPlan, PythonSourceIsTorchtitansCall) {
  const std::string py = torch_plan_python(torch_parallel_plan(megatron_sp(2)));
  EXPECT_THAT(py, HasSubstr("def apply_tp(model, tp_mesh):\n"));
  EXPECT_THAT(py, HasSubstr("\"tok_embeddings\": RowwiseParallel(input_layouts=Replicate(), "
                            "output_layouts=Shard(1)),\n"));
  EXPECT_THAT(py, HasSubstr("\"output\": ColwiseParallel(input_layouts=Shard(1), "
                            "output_layouts=Shard(-1), use_local_output=False),\n"));
  // Identical blocks: one loop over model.layers, as torchtitan writes it.
  EXPECT_THAT(py, HasSubstr("for transformer_block in model.layers.values():\n"));
  EXPECT_THAT(py, HasSubstr("\"attention\": PrepareModuleInput(input_layouts=(Shard(1), None), "
                            "desired_input_layouts=(Replicate(), None)),\n"));
  EXPECT_THAT(py, HasSubstr("\"feed_forward.w2\": RowwiseParallel(output_layouts=Shard(1)),\n"));
  EXPECT_THAT(py, HasSubstr("parallelize_module(transformer_block, tp_mesh, layer_plan)\n"));
}

TEST(TorchParallelPlan, JsonHoldsEveryModuleWithItsKeywordArguments) {
  const nlohmann::ordered_json j = torch_plan_json(torch_parallel_plan(megatron_sp(1)));
  EXPECT_EQ(j["tp_size"], 8);
  EXPECT_EQ(j["model"]["output"]["kwargs"]["use_local_output"], "False");
  EXPECT_EQ(j["layers"][0]["attention.wo"]["style"], "RowwiseParallel");
  EXPECT_EQ(j["layers"][0]["attention.wo"]["kwargs"]["output_layouts"], "Shard(1)");
}

// End to end: two layers of Llama 3.1 8B on 8 GPUs, planned by the analytic model. The
// planner keeps the embedding table whole (it chooses so for this step: 1 GiB per GPU, no
// gather) and picks Megatron's sequence-parallel layout for everything else, so every
// block, the final norm and the output projection are torchtitan's.
TEST(TorchParallelPlan, PlannedLlamaStepGivesTorchtitansBlocks) {
  const Scenario s =
      load_scenario(std::string(SYMMESH_SOURCE_DIR) + "/tests/python/llama3-8b-2layer-tp8.yaml");
  const TorchParallelPlan plan = torch_parallel_plan(s);
  EXPECT_EQ(plan.tp_size, 8);
  ASSERT_EQ(plan.layers.size(), 2u);
  for (const auto& layer : plan.layers) EXPECT_EQ(layer, torchtitan_layer_plan());
  ASSERT_EQ(plan.model.size(), 3u);
  EXPECT_EQ(plan.model[1], kTorchtitanNorm);
  EXPECT_EQ(plan.model[2], kTorchtitanOutput);
  // The whole table's output cut to the sequence-parallel rows the first norm reads.
  EXPECT_EQ(
      plan.model[0],
      (TorchStyle{"tok_embeddings",
                  "PrepareModuleOutput",
                  {{"output_layouts", "Replicate()"}, {"desired_output_layouts", "Shard(1)"}}}));
  EXPECT_EQ(plan.replicated, std::vector<std::string>{"tok_embeddings"});
  EXPECT_TRUE(plan.notes.empty());
}

TEST(TorchParallelPlan, NeedsAModelScenarioWithATpDim) {
  const std::string no_model =
      "version: 2\nname: x\ncluster: clusters/dgx-h100.yaml\nmesh: [8]\ndtype: bf16\n"
      "tensors:\n  a: {shape: [64, 64], placements: [R]}\n  b: {shape: [64, 64], placements: [R]}\n"
      "workload:\n  - {name: m, op: mm, a: a, b: b, output: c}\n";
  try {
    torch_parallel_plan(load_scenario_text(no_model, "nomodel.yaml"));
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.message(), HasSubstr("needs a model scenario"));
    EXPECT_EQ(e.where(), "nomodel.yaml");
  }
  const std::string dp_only =
      "version: 2\nname: x\ncluster: clusters/dgx-h100.yaml\nmesh: {shape: [8], names: [dp]}\n"
      "dtype: bf16\ncost_model: analytic\n"
      "model: {hf_config: models/llama3.1-8b.json, layers: 1, seq: 1024, global_batch: 8}\n";
  try {
    torch_parallel_plan(load_scenario_text(dp_only, "dponly.yaml"));
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.message(), HasSubstr("no tp dim"));
  }
}

}  // namespace
}  // namespace symmesh::evaluation
