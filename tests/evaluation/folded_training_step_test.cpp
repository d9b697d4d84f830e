// A model scenario's step folded at its own mesh (evaluation/folded_training_step.hpp): when
// it is folded, the layout it declares, what it refuses, and what the folded run stands for.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "evaluation/folded_training_step.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/thrown.hpp"

namespace symmesh::evaluation {
namespace {

using ::testing::HasSubstr;

// What `f` throws as InvalidArgument, its place included.
template <typename F>
std::string refusal(F&& f) {
  return testing::thrown<InvalidArgument>(std::forward<F>(f)).what();
}

const std::string kScenarios = shipped_scenarios_dir();

// A model scenario on `nodes` DGX H100 nodes with `mesh` and the extra top-level lines.
Scenario model_scenario(int nodes, const std::string& mesh, const std::string& model_extra,
                        const std::string& rest) {
  return load_scenario_text(
      "version: 2\nname: folded\ncluster: {base: " + kScenarios +
          "/clusters/dgx-h100.yaml, nodes: " + std::to_string(nodes) + "}\nmesh: " + mesh +
          "\nmodel: {hf_config: " + kScenarios +
          "/models/llama3.1-8b.json, seq: 8192, micro_batch: 1, global_batch: 512" + model_extra +
          "}\n" + rest,
      "folded.yaml");
}

const std::string kPpDpTp = "{shape: [4, 16, 8], names: [pp, dp, tp]}";  // 512 GPUs

TEST(FoldedTrainingStep, ModelStepsBeyond256GpusFold) {
  // 16 GPUs (2 nodes): rank by rank; 512 (64 nodes): folded; a scenario without a model
  // never folds.
  EXPECT_FALSE(simulated_folded(load_scenario(kScenarios + "/llama3-8b-train.yaml")));
  EXPECT_TRUE(simulated_folded(
      model_scenario(64, kPpDpTp, "", "training: {optimizer: adam}\n")));
  EXPECT_FALSE(simulated_folded(load_scenario(kScenarios + "/quickstart.yaml")));
}

// The shipped 405B scenario is Meta's 16,384-GPU run (The Llama 3 Herd of Models, Table 4:
// TP 8, PP 16, DP 128, one 8,192-token sequence per micro-batch, 2,048 per step), with
// Megatron's distributed optimizer (ZeRO-1).
TEST(FoldedTrainingStep, TheShipped405bDeclaresMetasLayout) {
  const Scenario s = load_scenario(kScenarios + "/training/llama3-405b-train.yaml");
  ASSERT_TRUE(simulated_folded(s));
  const strategies::TrainingLayout l = declared_training_layout(s);
  EXPECT_EQ(l.tp, 8);
  EXPECT_EQ(l.pp, 16);
  EXPECT_EQ(l.dp, 128);
  EXPECT_EQ(l.micro_batch, 1);
  EXPECT_EQ(l.virtual_stages, 1);
  EXPECT_EQ(l.recompute, Recompute::none);
  EXPECT_EQ(l.zero_stage, 1);
}

// Folded, 16,384 GPUs are one replica of pp·tp = 128 ranks and one stage's rings of
// tp·dp = 1,024 ranks; the step stands for all 16,384, and its 16 micro-batches per replica
// are 2,048 sequences / 128 replicas.
TEST(FoldedTrainingStep, The405bStepStandsForEveryGpu) {
  const Scenario s = load_scenario(kScenarios + "/training/llama3-405b-train.yaml");
  const TrainingLayoutsRun run = run_folded_step(s);
  ASSERT_EQ(run.sizes.size(), 1u);
  const TrainingLayoutsAtSize& at = run.sizes.front();
  EXPECT_EQ(at.gpus, 16384);
  ASSERT_EQ(at.best.size(), 1u);
  EXPECT_EQ(at.best.front().micro_batches, 16);
  ASSERT_EQ(at.simulated.size(), 1u);
  const SimulatedTrainingStep& step = at.simulated.front();
  ASSERT_TRUE(step.simulated()) << step.not_simulated;
  EXPECT_EQ(step.replica_ranks, 128);
  EXPECT_EQ(step.data_parallel_ranks, 1024);
  EXPECT_EQ(step.represented_ranks, 16384);
  // The simulated step against the closed form of the same layout: the two share their
  // byte and FLOP counts but not their schedule (the closed form's (m + p - 1)·stage time
  // against the simulated 1F1B order, its ring formulas against SimGrid's flows); they
  // agree within a few percent where the pipeline's stages are alike (-1.5 % here on
  // 2026-12-07). The published MFU band is published_training_test.cpp's, over the
  // layouts the search picks.
  EXPECT_NEAR(step.step_s / at.best.front().step_s, 1.0, 0.05);
}

TEST(FoldedTrainingStep, AMissingGlobalBatchIsOneMicroBatchPerReplica) {
  const Scenario s = load_scenario_text(
      "version: 2\nname: folded\ncluster: {base: " + kScenarios +
          "/clusters/dgx-h100.yaml, nodes: 64}\nmesh: " + kPpDpTp + "\nmodel: {hf_config: " +
          kScenarios + "/models/llama3.1-8b.json, seq: 8192, micro_batch: 2}\n" +
          "training: {optimizer: adam}\n",
      "folded.yaml");
  // dp 16 replicas x 2 sequences.
  EXPECT_EQ(folded_step_scenario(s).model->global_batch, 32);
  EXPECT_EQ(declared_training_layout(s).micro_batch, 2);
}

TEST(FoldedTrainingStep, WhatTheFoldedStepCannotRunIsRefused) {
  // Forward only: the folded step is a training step.
  EXPECT_THAT(refusal([&] {
                declared_training_layout(
                    model_scenario(64, kPpDpTp, "", "training: {backward: false}\n"));
              }),
              HasSubstr("prices a whole training step"));
  EXPECT_THAT(refusal([&] {
                declared_training_layout(
                    model_scenario(64, kPpDpTp, "", "training: {optimizer: sgd}\n"));
              }),
              HasSubstr("folded.yaml:6:"));
  EXPECT_THAT(refusal([&] {
                declared_training_layout(
                    model_scenario(64, kPpDpTp, ", dropout: true", "training: {optimizer: adam}\n"));
              }),
              HasSubstr("model.dropout"));
  EXPECT_THAT(refusal([&] {
                declared_training_layout(model_scenario(
                    64, kPpDpTp, "", "cost_model: dtensor\ntraining: {optimizer: adam}\n"));
              }),
              HasSubstr("cost_model dtensor"));
  // ZeRO-2 with pipeline stages is refused by the closed form's layout check.
  EXPECT_THAT(refusal([&] {
                declared_training_layout(
                    model_scenario(64, kPpDpTp, "", "training: {optimizer: adam, zero: 2}\n"));
              }),
              HasSubstr("ZeRO-2 with pipeline parallelism"));
}

// Llama 3.1 8B on 512 GPUs without pipeline stages, 64 sequences of 8,192 tokens per
// replica in one micro-batch: its activations alone are far beyond 80 GiB (Korthikanti et
// al.: about 34·s·b·h bytes per layer at tp 1, 34·8192·64·4096 B = 68 GiB per layer).
TEST(FoldedTrainingStep, AStepThatDoesNotFitSaysWhatItNeeds) {
  const Scenario s = load_scenario_text(
      "version: 2\nname: folded\ncluster: {base: " + kScenarios +
          "/clusters/dgx-h100.yaml, nodes: 64}\nmesh: {shape: [512, 1], names: [dp, tp]}\n"
          "model: {hf_config: " +
          kScenarios + "/models/llama3.1-8b.json, seq: 8192, global_batch: 32768}\n" +
          "training: {optimizer: adam}\n",
      "folded.yaml");
  const std::string message = refusal([&] { run_folded_step(s); });
  EXPECT_THAT(message, HasSubstr("needs"));
  EXPECT_THAT(message, HasSubstr("activations"));
  EXPECT_THAT(message, HasSubstr("has 80.00 GiB"));
  // At the model: block that generated the step (line 5, its map at column 8).
  EXPECT_THAT(message, ::testing::StartsWith("folded.yaml:5:8: "));
}

}  // namespace
}  // namespace symmesh::evaluation
