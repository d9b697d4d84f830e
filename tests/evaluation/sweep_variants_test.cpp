// A model scenario's sweep over micro-batch sizes and ZeRO stages (sweep.micro_batch,
// sweep.zero; evaluation/sweep_runner.hpp): every mesh is tried with each, and each point is
// the step the scenario would be had it said that micro_batch and zero itself — checked
// against those scenarios, written out and evaluated on their own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "evaluation/sweep_answer.hpp"
#include "evaluation/sweep_runner.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh::evaluation {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// 4 GPUs on one node; a 2-layer model, 8 sequences of 256 tokens per step.
std::string head(const std::string& mesh, const std::string& micro_batch, const std::string& zero) {
  return "version: 2\n"
         "cluster: {name: four, nodes: 1, gpus_per_node: 4, gpu: {name: H100, peak: {bf16: "
         "989.4 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}, intra_node: {kind: "
         "nvswitch, bandwidth: 450 GB/s, latency: 1 us}}\n"
         "mesh: {shape: " +
         mesh +
         ", names: [pp, dp, tp]}\n"
         "dtype: bf16\n"
         "cost_model: analytic\n"
         "model: {layers: 2, hidden: 256, heads: 4, kv_heads: 2, ffn: 512, vocab: 1024, seq: "
         "256, global_batch: 8, micro_batch: " +
         micro_batch + "}\ntraining: {optimizer: adam, zero: " + zero + "}\n";
}

HostMemory test_host() {
  HostMemory host;
  host.available_bytes = int64_t{16} << 30;
  host.source = "test";
  return host;
}

SweepRun sweep(const std::string& yaml) {
  SweepOptions options;
  options.evaluation.host_memory = test_host();
  return run_sweep(load_scenario_text(yaml, "sweep.yaml"), options);
}

// A node count that no listed shape covers is a skipped point whose reason names where the
// shapes are listed: sweep.mesh on line 8 (the head's 7 lines, then `sweep:`), its value
// at column 30 of `sweep: {nodes: [1, 2], mesh: [[2, 1, 2]]}`.
TEST(SweepVariants, ANodeCountNoListedShapeCoversSaysWhereTheShapesAre) {
  std::string yaml = head("[2, 1, 2]", "1", "0");
  yaml.replace(yaml.find("}}\nmesh:"), 2,
               "}, inter_node: {kind: rail, nics_per_node: 4, bandwidth: 400 Gb/s, latency: "
               "3 us}}");
  const Scenario s =
      load_scenario_text(yaml + "sweep: {nodes: [1, 2], mesh: [[2, 1, 2]]}\n", "sweep.yaml");
  const std::vector<SweepPoint> points = sweep_points(s);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_FALSE(points[0].skip_reason.has_value());
  EXPECT_EQ(points[1].skip_reason,
            "no mesh shape listed in sweep.mesh (sweep.yaml:8:30) covers 8 GPUs");
}

TEST(SweepVariants, EveryMeshIsTriedWithEachMicroBatchSizeAndZeroStage) {
  const Scenario s = load_scenario_text(
      head("[2, 1, 2]", "1", "0") +
          "sweep: {nodes: [1], mesh: [[2, 1, 2], [1, 2, 2]], micro_batch: [1, 2], zero: [0, 1]}\n",
      "sweep.yaml");
  std::vector<std::string> labels;
  for (const SweepPoint& p : sweep_points(s)) labels.push_back(point_layout_text(p));
  EXPECT_THAT(labels, ElementsAre("2x1x2 mb 1 zero 0", "2x1x2 mb 1 zero 1", "2x1x2 mb 2 zero 0",
                                  "2x1x2 mb 2 zero 1", "1x2x2 mb 1 zero 0", "1x2x2 mb 1 zero 1",
                                  "1x2x2 mb 2 zero 0", "1x2x2 mb 2 zero 1"));
}

TEST(SweepVariants, APointIsTheStepItsScenarioWouldBe) {
  const SweepRun run = sweep(head("[2, 1, 2]", "1", "0") +
                             "sweep: {nodes: [1], mesh: [[2, 1, 2]], micro_batch: [1, 4], "
                             "zero: [0, 1]}\n");
  ASSERT_EQ(run.points.size(), 4u);
  EvaluationOptions options;
  options.host_memory = test_host();
  for (const SweepPoint& p : run.points) {
    SCOPED_TRACE(point_layout_text(p));
    ASSERT_TRUE(p.simulated()) << *p.skip_reason;
    const Evaluation alone = evaluate_scenario(
        load_scenario_text(head("[2, 1, 2]", std::to_string(p.micro_batch), std::to_string(p.zero)),
                           "alone.yaml"),
        options);
    EXPECT_DOUBLE_EQ(p.total_time_s(), alone.report.total_time_s);
    // global_batch 8 over dp 1 in micro-batches of 1 or 4: 8 or 2 micro-batches.
    EXPECT_EQ(p.report.step->micro_batches, p.micro_batch == 1 ? 8 : 2);
  }
  // Micro-batches of 4 leave the 2-stage pipeline a bubble of (2 - 1)/2 against 1/8.
  EXPECT_DOUBLE_EQ(run.points[2].report.step->bubble_fraction, 0.5);
  EXPECT_DOUBLE_EQ(run.points[0].report.step->bubble_fraction, 0.125);
}

TEST(SweepVariants, TheAnswerNamesThePointsMicroBatchAndZero) {
  const SweepRun run = sweep(head("[2, 1, 2]", "1", "0") +
                             "sweep: {nodes: [1], mesh: [[2, 1, 2]], micro_batch: [1, 4], "
                             "zero: [1]}\n");
  const SweepAnswer answer = answer_sweep(run.points, std::nullopt);
  ASSERT_TRUE(answer.best.has_value());
  const SweepPoint& best = run.points[*answer.best];
  EXPECT_THAT(answer_text(answer, run.points, {"pp", "dp", "tp"}),
              HasSubstr("mesh 2x1x2 (pp,dp,tp), micro-batch " + std::to_string(best.micro_batch) +
                        ", ZeRO 1"));
}

TEST(SweepVariants, BadListsAreRefusedAtTheirPlace) {
  const auto error = [](const std::string& yaml) {
    try {
      load_scenario_text(yaml, "sweep.yaml");
    } catch (const InvalidArgument& e) {
      return e.where() + ": " + e.message();
    }
    return std::string("accepted");
  };
  const std::string model = head("[2, 1, 2]", "1", "0");  // 7 lines; the sweep is line 8
  EXPECT_THAT(error(model + "sweep: {nodes: [1], zero: [0, 4]}\n"),
              HasSubstr("sweep.yaml:8:31: sweep.zero: a ZeRO stage is 0, 1, 2 or 3"));
  EXPECT_THAT(error(model + "sweep: {nodes: [1], micro_batch: [2, 2]}\n"),
              HasSubstr("sweep.yaml:8:38: sweep.micro_batch: 2 twice"));
  std::string no_global = model;
  no_global.replace(no_global.find("global_batch: 8, "), 17, "");
  EXPECT_THAT(error(no_global + "sweep: {nodes: [1], micro_batch: [1, 2]}\n"),
              HasSubstr("sweep.micro_batch needs model.global_batch"));
  EXPECT_THAT(error("version: 2\ncluster: clusters/dgx-h100.yaml\nmesh: {shape: [8], names: "
                    "[tp]}\ntensors:\n  x: {shape: [8, 8], placements: [R]}\nworkload:\n  - "
                    "{name: a, op: gelu, a: x, output: y}\nsweep: {nodes: [1], zero: [0, 1]}\n"),
              HasSubstr("sweep.zero varies a model's training step"));
}

}  // namespace
}  // namespace symmesh::evaluation
