// A version-1 scenario's `placement_search: priority-queue` reaches every op's choice, and
// what it cannot mean is refused at the key. The case is the hand-worked 2x2 one of
// tests/strategies/placement_search_test.cpp: one GPU per node, so DTensor's model calls
// both mesh dims inter-host; mm a 64x32 (S0,S0) by b 32x64 (R,S0), fp32.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh::evaluation {
namespace {

using ::testing::HasSubstr;

std::string scenario(const std::string& extra, const std::string& cost_model = "dtensor") {
  return "name: pq\n"
         "cluster:\n  nodes: 4\n  gpus_per_node: 1\n"
         "  gpu: {peak: {fp32: 67 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}\n"
         "  intra_node: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}\n"
         "  inter_node: {kind: rail, nics_per_node: 1, bandwidth: 400 Gb/s, latency: 3 us}\n"
         "mesh: [2, 2]\ndtype: fp32\ncost_model: " +
         cost_model + "\n" + extra +
         "workload:\n"
         "  - {name: proj, op: mm, a: [64, 32], b: [32, 64], a_placements: [\"S(0)\", \"S(0)\"],\n"
         "     b_placements: [R, \"S(0)\"]}\n";
}

std::string chosen(const std::string& yaml) {
  EvaluationOptions options;
  options.host_memory = HostMemory{int64_t{16} << 30, "test"};
  const Evaluation e = evaluate_scenario(load_scenario_text(yaml, "pq.yaml"), options);
  const OpReport& op = e.report.ops.at(0);
  return to_string(op.input_placements->at(0)) + " x " + to_string(op.input_placements->at(1)) +
         " -> " + to_string(*op.output_placements);
}

TEST(PlacementSearchScenario, EachModeMakesItsOwnChoice) {
  // Full expansion: b's d1 all-gather, 9.498 µs, is the cheapest candidate. The search:
  // a's d1 S0→R→S1 along a path of 9.399 µs, which then runs as one all-to-all.
  EXPECT_EQ(chosen(scenario("")), "S(0),S(0) x R,R -> S(0),S(0)");
  EXPECT_EQ(chosen(scenario("placement_search: full-expansion\n")), "S(0),S(0) x R,R -> S(0),S(0)");
  EXPECT_EQ(chosen(scenario("placement_search: priority-queue\n")),
            "S(0),S(1) x R,S(0) -> S(0),P(sum)");
}

TEST(PlacementSearchScenario, WhatItCannotMeanIsRefusedAtTheKey) {
  try {
    load_scenario_text(scenario("placement_search: dijkstra\n"), "pq.yaml");
    FAIL() << "an unknown placement search was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "pq.yaml:11:19");
    EXPECT_THAT(e.message(), HasSubstr("unknown placement_search 'dijkstra'"));
  }
  try {
    load_scenario_text(scenario("placement_search: priority-queue\n", "analytic"), "pq.yaml");
    FAIL() << "the search was accepted under the analytic model";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "pq.yaml:11:19");
    EXPECT_THAT(e.message(), HasSubstr("needs cost_model: dtensor, not analytic"));
  }
}

}  // namespace
}  // namespace symmesh::evaluation
