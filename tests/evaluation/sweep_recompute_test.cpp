// A sweep of a model scenario that leaves `recompute` open (evaluation/sweep_runner.hpp):
// a point that does not fit without recomputation is planned again with every layer
// recomputed; a block that says `recompute: none` keeps it, and the point is skipped.
// The GPU's memory is set between the step's two peaks, each measured by evaluating the
// step alone at 80 GiB, on one GPU (a [1, 1] mesh: no layout to choose, so the peak is the
// step's own).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "evaluation/scenario_evaluation.hpp"
#include "evaluation/sweep_runner.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh::evaluation {
namespace {

// One H100-like GPU with `capacity` of memory; a 2-layer model whose 8,192 tokens
// (4 sequences of 2,048) make activations far larger than its 0.2 M parameters.
std::string scenario_yaml(const std::string& capacity, const std::string& recompute) {
  return "version: 2\n"
         "cluster: {name: one, nodes: 1, gpus_per_node: 1, gpu: {name: H100, peak: {bf16: "
         "989.4 TFLOP/s}, memory: {capacity: " +
         capacity +
         ", bandwidth: 3.35 TB/s}}, intra_node: {kind: nvswitch, bandwidth: 450 GB/s, "
         "latency: 1 us}}\n"
         "mesh: {shape: [1, 1], names: [dp, tp]}\n"
         "dtype: bf16\n"
         "cost_model: analytic\n"
         "model: {layers: 2, hidden: 64, heads: 4, kv_heads: 2, ffn: 128, vocab: 256, seq: "
         "2048, micro_batch: 4" +
         (recompute.empty() ? "" : ", recompute: " + recompute) +
         "}\n"
         "sweep: {nodes: [1], mesh: auto}\n";
}

// 16 GiB of host memory, whatever this machine has free.
HostMemory test_host() {
  HostMemory host;
  host.available_bytes = int64_t{16} << 30;
  host.source = "test";
  return host;
}

int64_t peak_bytes(const std::string& recompute) {
  EvaluationOptions options;
  options.host_memory = test_host();
  const Evaluation e = evaluate_scenario(
      load_scenario_text(scenario_yaml("80 GiB", recompute), "step.yaml"), options);
  return e.report.step->peak_memory_bytes;
}

SweepRun sweep(const std::string& capacity, const std::string& recompute) {
  SweepOptions options;
  options.evaluation.host_memory = test_host();
  return run_sweep(load_scenario_text(scenario_yaml(capacity, recompute), "sweep.yaml"), options);
}

TEST(SweepRecompute, APointThatFitsOnlyWithRecomputationIsPlannedWithIt) {
  const int64_t without = peak_bytes("none");
  const int64_t with = peak_bytes("full");
  ASSERT_LT(with, without);
  const std::string between = std::to_string((with + without) / 2) + " B";

  const SweepRun open = sweep(between, "");
  ASSERT_EQ(open.points.size(), 1u);
  const SweepPoint& p = open.points[0];
  ASSERT_TRUE(p.simulated()) << *p.skip_reason;
  EXPECT_TRUE(p.recompute_fallback);
  ASSERT_TRUE(p.report.model.has_value());
  EXPECT_EQ(p.report.model->recompute, Recompute::full);
  EXPECT_EQ(p.report.step->peak_memory_bytes, with);
  // The answer's trace is the recomputed step's (its ops are there).
  EXPECT_NE(open.best_trace_json.find(".recompute"), std::string::npos);

  const SweepRun kept = sweep(between, "none");
  ASSERT_EQ(kept.points.size(), 1u);
  ASSERT_FALSE(kept.points[0].simulated());
  EXPECT_THAT(*kept.points[0].skip_reason, ::testing::HasSubstr("least-memory layout"));
}

TEST(SweepRecompute, APointThatFitsIsNotRecomputed) {
  const SweepRun run = sweep("80 GiB", "");
  ASSERT_EQ(run.points.size(), 1u);
  ASSERT_TRUE(run.points[0].simulated());
  EXPECT_FALSE(run.points[0].recompute_fallback);
  EXPECT_EQ(run.points[0].report.model->recompute, Recompute::none);
}

}  // namespace
}  // namespace symmesh::evaluation
