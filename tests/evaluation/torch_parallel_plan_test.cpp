// The PyTorch tensor-parallel plan of a model scenario's layout (evaluation/
// torch_parallel_plan.hpp). The expected plans are not symmesh's: they are torchtitan's Llama
// plan (pytorch/torchtitan, torchtitan/models/llama3/infra/parallelize.py, apply_tp, with
// loss_parallel, for the Llama 3 attention.forward(x, freqs_cis)) and the plain tensor
// parallelism of PyTorch's TP tutorial (ColwiseParallel() / RowwiseParallel() with their
// default layouts and no sequence parallelism), written out by hand below.
#include "evaluation/torch_parallel_plan.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
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

TEST(TorchParallelPlan, WholeWeightsOnWholeInputsAreReplicated) {
  ModelTpLayout m;
  m.tp_size = 2;
  m.layers = 1;
  m.ops["l0_qkv"] = mm(R, R, R, R);  // every rank repeats the same product
  const TorchParallelPlan plan = torch_parallel_plan(m);
  EXPECT_TRUE(plan.layers.at(0).empty());
  EXPECT_EQ(plan.replicated,
            (std::vector<std::string>{"layers.0.attention.wq", "layers.0.attention.wk",
                                      "layers.0.attention.wv"}));
  EXPECT_TRUE(plan.notes.empty());
}

// The layout the planner picks for scenarios/llama3-8b-pipeline.yaml's blocks (tp 4): whole
// weights multiplying each rank's own token rows. Torch cannot leave such a module plain: each
// rank's weight gradient would cover its own rows only. SequenceParallel makes the weight a
// replicated DTensor (its gradient summed over tp), and a preparation moves what arrives or
// leaves at another layout first; tests/python/test_torch_plan_dtensor.py runs both blocks
// with real DTensor.
const TorchStyle kSequenceParallelLocal{
    "", "SequenceParallel", {{"use_local_output", "True"}}};
TorchStyle at(TorchStyle s, const std::string& module) {
  s.module = module;
  return s;
}

ModelTpLayout whole_weights_on_token_rows() {
  ModelTpLayout m;
  m.tp_size = 4;
  m.layers = 2;
  for (int l = 0; l < 2; ++l) {
    const std::string p = "l" + std::to_string(l) + "_";
    m.ops[p + "norm1"] = tensor_op(OpKind::rms_norm, {S0, R}, {S0, R}, S0);
    m.ops[p + "norm2"] = tensor_op(OpKind::rms_norm, {S0, R}, {S0, R}, S0);
    // Attention by heads; its output all-to-all'd back to token rows for out.
    m.ops[p + "out"] = mm(S1, S0, R, S0);
    for (const char* w : {"gate", "up", "down"}) m.ops[p + w] = mm(S0, S0, R, S0);
  }
  // Block 0: q/k/v Megatron's way (gathered input, weights by columns, heads per rank).
  m.ops["l0_qkv"] = mm(S0, R, S1, S1);
  m.ops["l0_attention"] = tensor_op(OpKind::attention, {S1}, {S1}, S1);
  // Block 1: q/k/v on token rows, all-to-all'd to heads for attention (Ulysses').
  m.ops["l1_qkv"] = mm(S0, S0, R, S0);
  m.ops["l1_qkv"].read_as = S1;
  m.ops["l1_attention"] = tensor_op(OpKind::attention, {S0}, {S1}, S1);
  return m;
}

TEST(TorchParallelPlan, WholeWeightsOnTokenRowsAreSequenceParallel) {
  const TorchParallelPlan plan = torch_parallel_plan(whole_weights_on_token_rows());
  ASSERT_EQ(plan.layers.size(), 2u);
  const TorchStyle wo_input{
      "attention.wo",
      "PrepareModuleInput",
      {{"input_layouts", "(Shard(-1),)"}, {"desired_input_layouts", "(Shard(1),)"}}};
  const std::vector<TorchStyle> mlp{at(kSequenceParallelLocal, "feed_forward.w1"),
                                    at(kSequenceParallelLocal, "feed_forward.w2"),
                                    at(kSequenceParallelLocal, "feed_forward.w3")};
  std::vector<TorchStyle> block0{
      {"attention_norm", "SequenceParallel", {}},
      torchtitan_layer_plan()[1],  // attention: PrepareModuleInput, gathering the rows
      {"attention.wq", "ColwiseParallel", {}},
      {"attention.wk", "ColwiseParallel", {}},
      {"attention.wv", "ColwiseParallel", {}},
      wo_input,
      at(kSequenceParallelLocal, "attention.wo"),
      {"ffn_norm", "SequenceParallel", {}}};
  block0.insert(block0.end(), mlp.begin(), mlp.end());
  EXPECT_EQ(plan.layers[0], block0);
  std::vector<TorchStyle> block1{{"attention_norm", "SequenceParallel", {}}};
  for (const char* w : {"attention.wq", "attention.wk", "attention.wv"}) {
    block1.push_back({w,
                      "PrepareModuleOutput",
                      {{"output_layouts", "Shard(1)"}, {"desired_output_layouts", "Shard(-1)"}}});
    block1.push_back({w, "SequenceParallel", {}});  // the preparation makes the output plain
  }
  block1.push_back(wo_input);
  block1.push_back(at(kSequenceParallelLocal, "attention.wo"));
  block1.push_back({"ffn_norm", "SequenceParallel", {}});
  block1.insert(block1.end(), mlp.begin(), mlp.end());
  EXPECT_EQ(plan.layers[1], block1);
  EXPECT_TRUE(plan.replicated.empty());
  EXPECT_TRUE(plan.notes.empty());

  // The JSON keeps one entry per module, its second style under "then"; the source applies
  // the second styles by a second parallelize_module call, after the first.
  const nlohmann::ordered_json j = torch_plan_json(plan);
  EXPECT_EQ(j["layers"][1]["attention.wq"]["style"], "PrepareModuleOutput");
  EXPECT_EQ(j["layers"][1]["attention.wq"]["then"]["style"], "SequenceParallel");
  EXPECT_EQ(j["layers"][0]["attention.wo"]["then"]["kwargs"]["use_local_output"], "True");
  EXPECT_FALSE(j["layers"][0]["feed_forward.w1"].contains("then"));
  const std::string py = torch_plan_python(plan);
  EXPECT_THAT(py, HasSubstr("    parallelize_module(model, tp_mesh, {\n"
                            "        \"layers.0.attention_norm\": SequenceParallel(),\n"));
  EXPECT_THAT(py, HasSubstr("        \"layers.0.attention.wo\": PrepareModuleInput("
                            "input_layouts=(Shard(-1),), desired_input_layouts=(Shard(1),)),\n"));
  EXPECT_THAT(py, HasSubstr("    # Second styles, after the first: SequenceParallel behind a "
                            "preparation of the same module.\n"
                            "    parallelize_module(model, tp_mesh, {\n"
                            "        \"layers.0.attention.wo\": SequenceParallel("
                            "use_local_output=True),\n"
                            "        \"layers.1.attention.wq\": SequenceParallel(),\n"));
  EXPECT_THAT(py, HasSubstr("    PrepareModuleOutput,\n"));
}

// An input arriving whole and an output read by heads: one preparation for both.
TEST(TorchParallelPlan, WholeWeightMovedInAndOutTakesOnePreparation) {
  ModelTpLayout m;
  m.tp_size = 2;
  m.layers = 1;
  m.ops["l0_qkv"] = mm(R, S0, R, S0);
  m.ops["l0_qkv"].read_as = S1;
  const TorchParallelPlan plan = torch_parallel_plan(m);
  ASSERT_EQ(plan.layers.at(0).size(), 6u);
  EXPECT_EQ(plan.layers[0][0], (TorchStyle{"attention.wq",
                                           "PrepareModuleInputOutput",
                                           {{"input_layouts", "(Replicate(),)"},
                                            {"desired_input_layouts", "(Shard(1),)"},
                                            {"output_layouts", "Shard(1)"},
                                            {"desired_output_layouts", "Shard(-1)"}}}));
  EXPECT_EQ(plan.layers[0][1], (TorchStyle{"attention.wq", "SequenceParallel", {}}));
  const std::string py = torch_plan_python(plan);
  EXPECT_THAT(py, HasSubstr("    PrepareModuleInputOutput,\n"));
  // One block: the loop, and the second call inside it.
  EXPECT_THAT(py, HasSubstr("        parallelize_module(transformer_block, tp_mesh, layer_plan)\n"
                            "        # Second styles, after the first"));
}

TEST(TorchParallelPlan, UnexpressibleChoicesAreNoted) {
  ModelTpLayout m;
  m.tp_size = 2;
  m.layers = 1;
  m.ops["l0_out"] = mm(S0, S0, S1, S0);  // a column-split weight on token rows
  // A row-split product whose partial sum the residual add keeps partial.
  m.ops["l0_down"] = mm(S1, S1, S0, Placement::partial());
  // The residual stream arrives by token rows but the norm computes it whole.
  m.ops["l0_norm2"] = tensor_op(OpKind::rms_norm, {S0, R}, {R, R}, R);
  // Whole sequences split by tp: torch's batch, not the sequence.
  m.ops["l0_attention"] = tensor_op(OpKind::attention, {S0}, {S0}, S0);
  // A whole weight on an input gathered whole (a plain module takes it as it arrives).
  m.ops["l0_qkv"] = mm(S0, R, R, R);
  // Split over dp as no data parallelism does (said apart from the notes).
  m.ops["l0_gate"] = mm(R, R, S1, S1);
  m.ops["l0_gate"].other_dims = "input 1 at S(1) over dp";
  const TorchParallelPlan plan = torch_parallel_plan(m);
  const auto noted = [&](const std::string& text) {
    return std::any_of(plan.notes.begin(), plan.notes.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(noted("layers.0.attention.wo: no ParallelStyle expresses this"));
  EXPECT_TRUE(noted("layers.0.feed_forward.w2: no ParallelStyle expresses this: it hands on a "
                    "partial sum"));
  EXPECT_TRUE(noted("layers.0.ffn_norm: no ParallelStyle expresses this: it normalises its "
                    "input at R over tp, arriving at S(0)"));
  EXPECT_TRUE(noted("layers.0.attention: no ParallelStyle expresses this: it computes attention "
                    "over whole sequences split by tp"));
  EXPECT_TRUE(noted("layers.0.attention.wq: no ParallelStyle expresses this: its whole weight "
                    "multiplies an input gathered from S(0)"));
  EXPECT_EQ(plan.notes.size(), 7u) << ::testing::PrintToString(plan.notes);  // wq, wk, wv
  // What the planner does over dp is said apart: the tp plan still runs as written.
  ASSERT_EQ(plan.other_dims.size(), 1u);
  EXPECT_THAT(plan.other_dims[0], HasSubstr("the planner also splits l0_gate (input 1 at S(1) "
                                            "over dp) over the other mesh dims"));
  EXPECT_THAT(torch_plan_python(plan), HasSubstr("    # Other mesh dims: the planner also "));
  EXPECT_EQ(torch_plan_json(plan)["other_dims"][0], plan.other_dims[0]);
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
  EXPECT_TRUE(plan.other_dims.empty());  // one node, dp 1
}

// scenarios/llama3-8b-pipeline.yaml cut to 4 layers (2 per stage): the planner keeps every
// weight whole, q/k/v's included, and multiplies it by token rows (q/k/v all-to-all'd to
// heads for attention). Its layers are planned once (LayoutSearchOptions::periodic_layers),
// so every block has the same plan — where the unconstrained search gave the first blocks
// column-parallel q/k/v and the last whole ones. No note: torch runs it as planned.
TEST(TorchParallelPlan, PlannedPipelineStepMultipliesWholeWeightsByTokenRows) {
  const std::string text =
      "version: 2\nname: pp4\ncluster: {base: clusters/dgx-h100.yaml, nodes: 2}\n"
      "mesh: {shape: [2, 2, 4], names: [pp, dp, tp]}\ndtype: bf16\ncost_model: analytic\n"
      "model: {hf_config: models/llama3.1-8b.json, layers: 4, seq: 8192, global_batch: 16, "
      "micro_batch: 1}\ntraining: {optimizer: adam}\n";
  const TorchParallelPlan plan = torch_parallel_plan(
      load_scenario_text(text, "pp4.yaml"));
  EXPECT_EQ(plan.tp_size, 4);
  ASSERT_EQ(plan.layers.size(), 4u);
  EXPECT_TRUE(plan.notes.empty()) << ::testing::PrintToString(plan.notes);
  const auto styles_of = [](const std::vector<TorchStyle>& layer, const std::string& module) {
    std::vector<std::string> out;
    for (const TorchStyle& s : layer)
      if (s.module == module) out.push_back(s.style);
    return out;
  };
  using V = std::vector<std::string>;
  for (size_t l = 1; l < plan.layers.size(); ++l) EXPECT_EQ(plan.layers[l], plan.layers[0]) << l;
  EXPECT_EQ(styles_of(plan.layers[0], "attention.wq"), (V{"PrepareModuleOutput", "SequenceParallel"}));
  EXPECT_EQ(styles_of(plan.layers[0], "attention.wo"), (V{"PrepareModuleInput", "SequenceParallel"}));
  EXPECT_EQ(styles_of(plan.layers[0], "feed_forward.w2"), V{"SequenceParallel"});
}

// Llama 3.1 8B on one node as dp 4 x tp 2: the planner splits features over dp too (FSDP's
// mesh dim used as a second tensor-parallel one), which a tp plan cannot say; over tp alone
// its residual stream is then partial or gathered where torchtitan's block cannot follow.
TEST(TorchParallelPlan, PlannedStepSplittingOverDpIsNoted) {
  const std::string text =
      "version: 2\nname: dp4tp2\ncluster: clusters/dgx-h100.yaml\n"
      "mesh: {shape: [4, 2], names: [dp, tp]}\ndtype: bf16\ncost_model: analytic\n"
      "model: {hf_config: models/llama3.1-8b.json, layers: 2, seq: 8192, global_batch: 4}\n"
      "training: {optimizer: adam}\n";
  const TorchParallelPlan plan = torch_parallel_plan(
      load_scenario_text(text, "dp4tp2.yaml"));
  EXPECT_FALSE(plan.notes.empty());
  ASSERT_EQ(plan.other_dims.size(), 1u);
  EXPECT_THAT(plan.other_dims[0], HasSubstr(" over dp) "));
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
