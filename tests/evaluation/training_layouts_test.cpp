// `symmesh layouts`' search space (evaluation/training_layouts.hpp): what a scenario declares
// is held fixed, its lists and the command line's replace that, any value that divides may
// be asked for, and what cannot be priced at all is refused with the reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "core/errors.hpp"
#include "evaluation/training_layouts.hpp"
#include "scenario/scenario_loader.hpp"

using namespace symmesh;
using evaluation::LayoutChoices;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

// A small transformer (8 layers, 8 heads) on 2 DGX H100 nodes: every layout fits, so what
// the search tries is what it returns. `extra` adds keys: a training: block, a sweep.
Scenario scenario(const std::string& mesh, const std::string& model_keys,
                  const std::string& extra = "", int layers = 8) {
  const std::string text = "version: 2\nname: small\ncluster: {base: " +
                           std::string(SYMMESH_SOURCE_DIR) +
                           "/scenarios/clusters/dgx-h100.yaml, nodes: 2}\nmesh: " + mesh +
                           "\ncost_model: analytic\n"
                           "model: {layers: " + std::to_string(layers) + ", hidden: 512, heads: 8, kv_heads: 8, ffn: 1024, "
                           "vocab: 1024, seq: 256" +
                           model_keys + "}\n" + extra;
  return load_scenario_text(text, "small.yaml");
}

const std::string kDpTp = "{shape: [4, 4], names: [dp, tp]}";
const std::string kPpDpTp = "{shape: [2, 2, 4], names: [pp, dp, tp]}";

template <typename Get>
auto values_of(const evaluation::TrainingLayoutsRun& run, Get get) {
  std::set<decltype(get(run.sizes.front().best.front().layout))> out;
  for (const auto& size : run.sizes)
    for (const auto& e : size.best) out.insert(get(e.layout));
  return out;
}

constexpr int kAll = 100000;  // keep every fitting layout

TEST(TrainingLayouts, ADeclaredMicroBatchZeroAndRecomputeAreHeldFixed) {
  const Scenario s = scenario(kDpTp, ", global_batch: 48, micro_batch: 2, recompute: full",
                              "training: {optimizer: adam, zero: 1}\nsweep: {nodes: [1, 2], "
                              "layouts: {}}\n");
  const auto run = evaluation::run_training_layouts(s, {8, 16}, kAll);
  ASSERT_EQ(run.sizes.size(), 2u);
  ASSERT_FALSE(run.sizes[0].best.empty());
  EXPECT_THAT(values_of(run, [](const auto& l) { return l.micro_batch; }), ElementsAre(2));
  EXPECT_THAT(values_of(run, [](const auto& l) { return l.recompute; }),
              ElementsAre(Recompute::full));
  EXPECT_THAT(values_of(run, [](const auto& l) { return l.zero_stage; }), ElementsAre(1));
  // A sweep's node counts replace the mesh: tp and pp are searched.
  EXPECT_GT(values_of(run, [](const auto& l) { return l.tp; }).size(), 1u);
  EXPECT_GT(values_of(run, [](const auto& l) { return l.pp; }).size(), 1u);
  EXPECT_THAT(run.sizes[0].fixed, ElementsAre("mb 2 (model.micro_batch)",
                                              "recompute full (model.recompute)",
                                              "zero 1 (training.zero)"));
}

TEST(TrainingLayouts, WithoutASweepTheMeshAndVirtualStagesAreTheLayoutAtItsOwnSize) {
  // training.virtual_stages 5 was loaded and then ignored (only 1, 2, 4, 8 were tried).
  // (16 layers: the loader checks that the mesh's 2 stages x 5 chunks each get a layer.)
  const Scenario s = scenario(kPpDpTp, ", global_batch: 16, micro_batch: 1",
                              "training: {optimizer: adam, virtual_stages: 5}\n", 16);
  // 16 GPUs is the scenario's own size: tp 4 pp 2 (dp 2) from its mesh.
  auto run = evaluation::run_training_layouts(s, {16}, kAll);
  ASSERT_FALSE(run.sizes[0].best.empty());
  for (const auto& e : run.sizes[0].best) {
    EXPECT_EQ(e.layout.tp, 4);
    EXPECT_EQ(e.layout.pp, 2);
    EXPECT_EQ(e.layout.dp, 2);
    EXPECT_EQ(e.layout.virtual_stages, 5);
  }
  EXPECT_THAT(run.sizes[0].fixed,
              ElementsAre("mb 1 (model.micro_batch)", "v 5 (training.virtual_stages)",
                          "tp 4 (mesh)", "pp 2 (mesh)"));
  // At another size the mesh cannot be the layout: tp and pp are searched, v stays 5.
  run = evaluation::run_training_layouts(s, {8}, kAll);
  ASSERT_FALSE(run.sizes[0].best.empty());
  EXPECT_GT(values_of(run, [](const auto& l) { return l.tp; }).size(), 1u);
  EXPECT_THAT(values_of(run, [](const auto& l) { return l.virtual_stages; }), ElementsAre(5));
}

TEST(TrainingLayouts, CommandLineListsReplaceWhatTheScenarioFixes) {
  const Scenario s = scenario(kPpDpTp, ", global_batch: 48, micro_batch: 1",
                              "training: {optimizer: adam, zero: 1, virtual_stages: 2}\n");
  LayoutChoices choices;
  // 3 and 6 sequences per micro-batch: any size that divides 48 / dp may be asked for.
  choices.micro_batches = {3, 6};
  choices.virtual_stages = {1};
  choices.tps = {2};
  const auto run = evaluation::run_training_layouts(s, {16}, kAll, 0, choices);
  ASSERT_FALSE(run.sizes[0].best.empty());
  EXPECT_THAT(values_of(run, [](const auto& l) { return l.micro_batch; }), ElementsAre(3, 6));
  EXPECT_THAT(values_of(run, [](const auto& l) { return l.virtual_stages; }), ElementsAre(1));
  EXPECT_THAT(values_of(run, [](const auto& l) { return l.tp; }), ElementsAre(2));
  // pp stays the mesh's (only tp was replaced); zero stays declared.
  EXPECT_THAT(values_of(run, [](const auto& l) { return l.pp; }), ElementsAre(2));
  EXPECT_THAT(run.sizes[0].fixed, ElementsAre("zero 1 (training.zero)", "pp 2 (mesh)"));
  // 48 sequences over dp = 16 / (2 x 2) = 4 replicas: 12 each; micro-batches 3 and 6 make
  // m = 4 and 2.
  for (const auto& e : run.sizes[0].best)
    EXPECT_EQ(e.micro_batches, 12 / e.layout.micro_batch) << to_string(e.layout);
}

TEST(TrainingLayouts, TheScenariosSearchListsReplaceItsDeclaredValues) {
  const Scenario s =
      scenario(kDpTp, ", global_batch: 48, micro_batch: 1",
               "training: {optimizer: adam, zero: 0}\nsweep: {nodes: [2], micro_batch: [2, 3], "
               "zero: [1, 3], layouts: {tp: [2], pp: [2, 4], virtual_stages: [1, 3]}}\n");
  ASSERT_TRUE(s.sweep);
  EXPECT_THAT(s.sweep->layouts_virtual_stages, ElementsAre(1, 3));
  const auto run = evaluation::sweep_training_layouts(s);
  ASSERT_EQ(run.sizes.size(), 1u);
  const auto& size = run.sizes[0];
  EXPECT_TRUE(size.fixed.empty());
  // The search's own order of the best (top = simulate = 1): price every layout instead.
  const auto all = evaluation::run_training_layouts(s, {16}, kAll);
  EXPECT_THAT(values_of(all, [](const auto& l) { return l.micro_batch; }), ElementsAre(2, 3));
  EXPECT_THAT(values_of(all, [](const auto& l) { return l.tp; }), ElementsAre(2));
  EXPECT_THAT(values_of(all, [](const auto& l) { return l.pp; }), ElementsAre(2, 4));
  // With pipelines only ZeRO-1 of the listed stages runs (3 is refused with pp > 1).
  EXPECT_THAT(values_of(all, [](const auto& l) { return l.zero_stage; }), ElementsAre(1));
  EXPECT_THAT(values_of(all, [](const auto& l) { return l.virtual_stages; }), ElementsAre(1, 3));
}

TEST(TrainingLayouts, WhatCannotBePricedAtAllIsRefusedWithTheReason) {
  // (A declared micro_batch that cannot split the batch at the mesh is refused at load.)
  // 5 sequences per micro-batch divide none of 16 / dp: nothing can be priced at any size.
  const Scenario s = scenario(kDpTp, ", global_batch: 16, micro_batch: 2",
                              "training: {optimizer: adam}\n");
  LayoutChoices five;
  five.micro_batches = {5};
  try {
    evaluation::run_training_layouts(s, {16, 8}, 1, 0, five);
    FAIL() << "no throw";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "small.yaml");
    EXPECT_THAT(e.message(), HasSubstr("no layout of 16 GPUs can be priced (nor of any other "
                                       "count asked) with what the scenario fixes (tp 4 "
                                       "(mesh); pp 1 (mesh))"));
    // At the mesh's own size dp = 16 / 4 = 4: 5 x 4 = 20 does not divide 16.
    EXPECT_THAT(e.message(), HasSubstr("micro_batch 5 x dp 4 does not divide the global batch "
                                       "of 16"));
  }
  // A value that is impossible beside a possible one is skipped, not refused.
  const Scenario& fine = s;
  LayoutChoices tp_3_or_2;
  tp_3_or_2.tps = {3, 2};
  const auto run = evaluation::run_training_layouts(fine, {16}, 1, 0, tp_3_or_2);
  EXPECT_GT(run.sizes[0].priced, 0);
  EXPECT_TRUE(run.sizes[0].unpriceable.empty());
  LayoutChoices tp_3;
  tp_3.tps = {3};
  try {
    evaluation::run_training_layouts(fine, {16}, 1, 0, tp_3);
    FAIL() << "no throw";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.message(), HasSubstr("tp 3 does not divide the 8 heads, 8 key/value heads and "
                                       "FFN width 1024"));
  }
}

TEST(TrainingLayouts, ZeroThreeOfAModelScenarioIsPriced) {
  // The loader refused the key outright although the search prices ZeRO-3 (the generated
  // dataflow plans it too: tests/evaluation/zero_step_test.cpp).
  const Scenario s =
      scenario(kDpTp, ", global_batch: 16, micro_batch: 1", "training: {optimizer: adam, zero: 3}\n");
  const auto run = evaluation::run_training_layouts(s, {32}, kAll);
  EXPECT_THAT(values_of(run, [](const auto& l) { return l.zero_stage; }), ElementsAre(3));
}

// The scenario a layout stands for (what symmesh.torch_plan plans for a layouts answer): its
// mesh [pp, dp, tp] or [dp, tp], on the nodes it fills, its step generated again.
TEST(TrainingLayouts, ALayoutsScenarioIsItsMeshOnTheNodesItFills) {
  const Scenario s = scenario(kDpTp, ", global_batch: 16", "training: {optimizer: adam}\n");
  strategies::TrainingLayout l;
  l.tp = 4, l.pp = 2, l.dp = 4, l.micro_batch = 2, l.virtual_stages = 2, l.zero_stage = 1;
  l.recompute = Recompute::full;
  const Scenario piped = evaluation::training_layout_scenario(s, l);
  EXPECT_EQ(piped.mesh_shape, (std::vector<int>{2, 4, 4}));
  EXPECT_EQ(piped.mesh_names, (std::vector<std::string>{"pp", "dp", "tp"}));
  EXPECT_EQ(piped.cluster.nodes, 4);
  EXPECT_EQ(piped.cluster.gpus_per_node, 8);
  EXPECT_EQ(piped.model->micro_batch, 2);
  EXPECT_TRUE(piped.model->full_recompute);
  EXPECT_EQ(piped.training->zero_stage, 1);
  EXPECT_EQ(piped.virtual_stages(), 2);
  EXPECT_EQ(piped.training->micro_batches, 2);  // 16 sequences / (dp 4 x 2)
  // Generated again: its ops run on the 4 virtual stages (pp 2 x 2 chunks).
  int last_stage = 0;
  for (const WorkloadOp& op : piped.workload) last_stage = std::max(last_stage, op.stage);
  EXPECT_EQ(last_stage, 3);

  // Without pipeline stages the mesh is [dp, tp]; fewer GPUs than a node are its first ones.
  l = {};
  l.tp = 2, l.dp = 2;
  const Scenario small = evaluation::training_layout_scenario(s, l);
  EXPECT_EQ(small.mesh_shape, (std::vector<int>{2, 2}));
  EXPECT_EQ(small.mesh_names, (std::vector<std::string>{"dp", "tp"}));
  EXPECT_EQ(small.cluster.nodes, 1);
  EXPECT_EQ(small.cluster.gpus_per_node, 4);
}

TEST(TrainingLayouts, ALayoutTheStepCannotTakeIsRefusedAtTheLayout) {
  const Scenario s = scenario(kDpTp, ", global_batch: 48", "training: {optimizer: adam}\n");
  const auto refusal = [&](int tp, int pp, int dp, int zero) {
    strategies::TrainingLayout l;
    l.tp = tp, l.pp = pp, l.dp = dp, l.zero_stage = zero;
    try {
      evaluation::training_layout_scenario(s, l);
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.where(), "layout");
      return e.message();
    }
    return std::string("no throw");
  };
  EXPECT_THAT(refusal(4, 1, 3, 0),
              HasSubstr("takes 12 GPUs, which fill no whole number of nodes"));
  EXPECT_EQ(refusal(4, 1, 4, 3), "no throw");  // ZeRO-3 is planned (the weights sharded)
  EXPECT_THAT(refusal(3, 1, 1, 0), HasSubstr("tp 3 does not divide the 8 heads"));
  EXPECT_THAT(refusal(4, 2, 2, 2), HasSubstr("with pipeline parallelism is not modelled"));
}

// The candidates one count's search considers, by hand: at 16 GPUs on 8-GPU nodes the
// default tp sizes are 1, 2, 4, 8 (powers of two within a node) and the default pp sizes
// the divisors of 16 up to the 8 layers (1, 2, 4, 8); the default micro-batches {1, 2, 4,
// 8}, virtual stages {1, 2, 4, 8}, recomputations {none, full} and ZeRO stages {0..3}:
// 4 · 4 · 4 · 4 · 2 · 4 = 2,048.
TEST(TrainingLayouts, TheCandidatesOfOneCountAreTheProductOfItsLists) {
  const Scenario s = scenario(kDpTp, ", global_batch: 48");
  EXPECT_EQ(strategies::layout_candidates(*s.model, s.cluster, 16, {}), 2048);
  strategies::TrainingSearchOptions listed;
  listed.tps = {2};
  listed.pps = {1, 3};
  EXPECT_EQ(strategies::layout_candidates(*s.model, s.cluster, 16, listed), 1 * 2 * 4 * 4 * 2 * 4);
}

// 64 micro-batch sizes and 64 virtual-stage counts with tp and pp [1, 2, 4, 8] at 8 and 16
// GPUs: 2 counts · 4 · 4 · 64 · 64 · 2 recomputations · 4 ZeRO stages = 1,048,576
// candidates, past the 1,000,000 bound: refused at sweep.layouts (line 10) before any is
// priced.
TEST(TrainingLayouts, ASweepOfTooManyLayoutsIsRefusedAtItsKey) {
  std::string sixty_four;
  for (int i = 1; i <= 64; ++i) sixty_four += (i > 1 ? ", " : "") + std::to_string(i);
  const Scenario s = scenario(kDpTp, ", global_batch: 48",
                              "sweep:\n  nodes: [1, 2]\n  micro_batch: [" + sixty_four +
                                  "]\n  layouts: {tp: [1, 2, 4, 8], pp: [1, 2, 4, 8], "
                                  "virtual_stages: [" + sixty_four + "]}\n");
  try {
    evaluation::sweep_training_layouts(s);
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "small.yaml:10:3");
    EXPECT_THAT(e.message(), HasSubstr("sweep.layouts: 1048576 layouts to consider over 2 GPU "
                                       "counts"));
    EXPECT_THAT(e.message(), HasSubstr("more than the 1000000 one search prices"));
  }
}

}  // namespace
