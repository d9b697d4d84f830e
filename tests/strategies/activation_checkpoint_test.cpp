// Activation checkpointing in the dataflow graph (strategies/dataflow_graph.hpp): tensors a
// checkpoint segment makes and reads only itself are recomputed when the backward first
// needs them, and die at their last forward reader (tensor_lifetimes). Expected orders and
// lifetimes worked by hand in the comments.
#include <gtest/gtest.h>

#include "strategies/dataflow_graph.hpp"
#include "strategies/step_memory.hpp"
#include "tests/strategies/dataflow_test_support.hpp"

namespace symmesh::strategies {
namespace {

using testing::DataflowScenario;
using testing::op_index;
using testing::tensor_named;

std::vector<std::string> op_names(const DataflowGraph& g) {
  std::vector<std::string> names;
  for (const GraphOp& op : g.ops) names.push_back(op.name);
  return names;
}

std::string read_text(const DataflowGraph& g, const GraphInput& in) {
  return g.tensors[in.tensor].name + (in.transposed ? "^T" : "");
}

// x[64,32] -> up (·w1[32,128]) -> h -> act (gelu) -> a -> down (·w2[128,32]) -> y, training;
// the ops named in `segment` carry `checkpoint: layer`.
Scenario mlp(const std::vector<std::string>& segment) {
  DataflowScenario s({8}, {"tp"});
  s.input("x", {64, 32}, "R").parameter("w1", {32, 128}).parameter("w2", {128, 32});
  s.op("up", OpKind::mm, "x", "w1", "h");
  s.tensor_op("act", OpKind::gelu, "h", "", "a");
  s.op("down", OpKind::mm, "a", "w2", "y");
  s.training();
  Scenario scenario = s.build();
  for (WorkloadOp& op : scenario.workload)
    for (const std::string& name : segment)
      if (op.name == name) op.checkpoint = "layer";
  return scenario;
}

TEST(ActivationCheckpoint, WithoutASegmentTheBackwardReadsTheForwardTensors) {
  const Scenario scenario = mlp({});
  const DataflowGraph g = build_dataflow_graph(scenario);
  const std::vector<std::string> want{"up",         "act",       "down",     "down.dgrad",
                                      "down.wgrad", "act.dgrad", "up.dgrad", "up.wgrad"};
  EXPECT_EQ(op_names(g), want);
  // h is read by act (1) and act.dgrad (5): alive from 0 until 6.
  const Lifetime h = tensor_lifetimes(g).at(tensor_named(g, "h"));
  EXPECT_EQ(h.birth, 0);
  EXPECT_EQ(h.death, 6);
}

TEST(ActivationCheckpoint, AWholeSegmentIsRecomputedWhenItsBackwardFirstNeedsIt) {
  // All three ops in one segment; x (an input) and y (the step's output) are kept. In
  // reverse: down's dgrad reads dy and w2 (a parameter: kept); down's wgrad reads a, which
  // only down read: recompute act, whose input h only act read: recompute up first (from x
  // and w1). act's dgrad then reads h's copy; up's dgrad and wgrad read w1 and x.
  const Scenario scenario = mlp({"up", "act", "down"});
  const DataflowGraph g = build_dataflow_graph(scenario);
  const std::vector<std::string> want{"up",           "act",           "down",       "down.dgrad",
                                      "up.recompute", "act.recompute", "down.wgrad", "act.dgrad",
                                      "up.dgrad",     "up.wgrad"};
  ASSERT_EQ(op_names(g), want);
  const GraphOp& up_again = g.ops[op_index(g, "up.recompute")];
  EXPECT_EQ(up_again.pass, Pass::recompute);
  EXPECT_EQ(up_again.kind, OpKind::mm);
  EXPECT_EQ(read_text(g, up_again.inputs[0]), "x");
  EXPECT_EQ(read_text(g, up_again.inputs[1]), "w1");
  EXPECT_EQ(g.tensors[up_again.output].name, "h.recompute");
  EXPECT_EQ(g.tensors[up_again.output].shape, (Shape{64, 128}));
  EXPECT_EQ(read_text(g, g.ops[op_index(g, "act.recompute")].inputs[0]), "h.recompute");
  EXPECT_EQ(read_text(g, g.ops[op_index(g, "down.wgrad")].inputs[0]), "a.recompute^T");
  EXPECT_EQ(read_text(g, g.ops[op_index(g, "act.dgrad")].inputs[0]), "h.recompute");
  EXPECT_EQ(read_text(g, g.ops[op_index(g, "up.wgrad")].inputs[0]), "x^T");
  // The originals die at their last forward reader: h after act (op 1), a after down (op 2);
  // the copies live from their recomputation to their last backward reader: h.recompute
  // from 4 to act.dgrad (7), a.recompute from 5 to down.wgrad (6).
  const std::vector<Lifetime> lives = tensor_lifetimes(g);
  const auto life = [&](const char* name) { return lives.at(tensor_named(g, name)); };
  EXPECT_EQ(life("h").death, 2);
  EXPECT_EQ(life("a").death, 3);
  EXPECT_EQ(life("h.recompute").birth, 4);
  EXPECT_EQ(life("h.recompute").death, 8);
  EXPECT_EQ(life("a.recompute").birth, 5);
  EXPECT_EQ(life("a.recompute").death, 7);
  EXPECT_EQ(work_group_of("up.recompute"), "recompute");
}

TEST(ActivationCheckpoint, ATensorReadOutsideItsSegmentIsKept) {
  // down is outside the segment, so a (read by down) is the segment's output and kept;
  // h, read only by act inside it, is recomputed when act's dgrad needs it.
  const Scenario scenario = mlp({"up", "act"});
  const DataflowGraph g = build_dataflow_graph(scenario);
  const std::vector<std::string> want{"up",         "act",        "down",
                                      "down.dgrad", "down.wgrad", "up.recompute",
                                      "act.dgrad",  "up.dgrad",   "up.wgrad"};
  ASSERT_EQ(op_names(g), want);
  EXPECT_EQ(read_text(g, g.ops[op_index(g, "down.wgrad")].inputs[0]), "a^T");
  EXPECT_EQ(read_text(g, g.ops[op_index(g, "act.dgrad")].inputs[0]), "h.recompute");
}

}  // namespace
}  // namespace symmesh::strategies
