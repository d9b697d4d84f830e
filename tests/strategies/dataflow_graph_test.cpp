// The dataflow graph of a version-2 workload and the backward derived from it. Expected
// ops follow the chain rule by hand: for C = A·B, dA = dC·Bᵀ and dB = Aᵀ·dC.
#include "strategies/dataflow_graph.hpp"

#include <gtest/gtest.h>

#include "tests/strategies/dataflow_test_support.hpp"

namespace symmesh::strategies {
namespace {

using testing::DataflowScenario;

const GraphOp& op_named(const DataflowGraph& g, const std::string& name) {
  for (const GraphOp& op : g.ops)
    if (op.name == name) return op;
  throw std::runtime_error("no op " + name);
}

std::string read_text(const DataflowGraph& g, const GraphInput& in) {
  return g.tensors[in.tensor].name + (in.transposed ? "^T" : "");
}

// x[64,32]·w1[32,128] -> h;  h·w2[128,32] -> y.
Scenario mlp(bool training) {
  DataflowScenario s({8}, {"tp"});
  s.input("x", {64, 32}, "R").parameter("w1", {32, 128}).parameter("w2", {128, 32});
  s.op("up", OpKind::mm, "x", "w1", "h").op("down", OpKind::mm, "h", "w2", "y");
  if (training) s.training();
  return s.build();
}

TEST(DataflowGraph, ForwardOnlyHasTheFilesOpsAndTensors) {
  const Scenario scenario = mlp(false);
  const DataflowGraph g = build_dataflow_graph(scenario);
  ASSERT_EQ(g.ops.size(), 2u);
  EXPECT_FALSE(g.training);
  const GraphOp& down = op_named(g, "down");
  EXPECT_EQ(g.tensors[down.output].name, "y");
  EXPECT_EQ(g.tensors[down.output].shape, (Shape{64, 32}));
  EXPECT_EQ(g.tensors[op_named(g, "up").output].shape, (Shape{64, 128}));
  EXPECT_TRUE(g.is_graph_output(down.output));
  EXPECT_EQ(g.parameters().size(), 2u);
}

TEST(DataflowGraph, BackwardOfAnMlpIsTheChainRule) {
  const Scenario scenario = mlp(true);
  const DataflowGraph g = build_dataflow_graph(scenario);
  // Forward 2 ops, then per op in reverse: dgrad, wgrad.
  ASSERT_EQ(g.ops.size(), 6u);
  const std::vector<std::string> names{"up",         "down",     "down.dgrad",
                                       "down.wgrad", "up.dgrad", "up.wgrad"};
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(g.ops[i].name, names[i]);
  // dh = dy · w2ᵀ : [64,32]·[32,128] = [64,128]
  const GraphOp& dh = op_named(g, "down.dgrad");
  EXPECT_EQ(dh.kind, OpKind::mm);
  EXPECT_EQ(dh.pass, Pass::dgrad);
  EXPECT_EQ(read_text(g, dh.inputs[0]), "dy");
  EXPECT_EQ(read_text(g, dh.inputs[1]), "w2^T");
  EXPECT_EQ(g.shape_read(dh.inputs[1]), (Shape{32, 128}));
  EXPECT_EQ(g.tensors[dh.output].shape, (Shape{64, 128}));
  EXPECT_EQ(g.tensors[dh.output].name, "dh");
  // dw2 = hᵀ · dy : [128,64]·[64,32] = [128,32], the shape of w2
  const GraphOp& dw2 = op_named(g, "down.wgrad");
  EXPECT_EQ(dw2.pass, Pass::wgrad);
  EXPECT_EQ(read_text(g, dw2.inputs[0]), "h^T");
  EXPECT_EQ(read_text(g, dw2.inputs[1]), "dy");
  EXPECT_TRUE(g.tensors[dw2.output].is_parameter_gradient);
  EXPECT_EQ(g.tensors[dw2.output].shape, (Shape{128, 32}));
  // dx = dh · w1ᵀ, dw1 = xᵀ · dh
  EXPECT_EQ(read_text(g, op_named(g, "up.dgrad").inputs[0]), "dh");
  EXPECT_EQ(read_text(g, op_named(g, "up.dgrad").inputs[1]), "w1^T");
  EXPECT_EQ(read_text(g, op_named(g, "up.wgrad").inputs[0]), "x^T");
  // The seed dy is the loss gradient of y.
  const TensorId dy = dh.inputs[0].tensor;
  EXPECT_EQ(g.tensors[dy].kind, GraphTensor::Kind::seed);
  EXPECT_EQ(g.tensors[g.tensors[dy].of].name, "y");
}

TEST(DataflowGraph, ATensorReadTwiceAccumulatesItsGradientWithAddmm) {
  // gate = x·wg, up = x·wu, out = gate·wd (up unused beyond its own output): x's gradient
  // is dgate·wgᵀ + dup·wuᵀ. Backward runs in reverse: up's contribution first (an mm),
  // then gate's as addmm(dx, dgate, wgᵀ).
  DataflowScenario s({8}, {"tp"});
  s.input("x", {64, 32}, "R").parameter("wg", {32, 128}).parameter("wu", {32, 128});
  s.parameter("wd", {128, 32});
  s.op("gate", OpKind::mm, "x", "wg", "g").op("up", OpKind::mm, "x", "wu", "u");
  s.op("down", OpKind::mm, "g", "wd", "y").training();
  const Scenario scenario = s.build();
  const DataflowGraph g = build_dataflow_graph(scenario);
  const GraphOp& first = op_named(g, "up.dgrad");
  const GraphOp& second = op_named(g, "gate.dgrad");
  EXPECT_EQ(first.kind, OpKind::mm);
  EXPECT_EQ(g.tensors[first.output].name, "dx");
  EXPECT_EQ(second.kind, OpKind::addmm);
  ASSERT_EQ(second.inputs.size(), 3u);  // (bias, a, b)
  EXPECT_EQ(read_text(g, second.inputs[0]), "dx");
  EXPECT_EQ(read_text(g, second.inputs[1]), "dg");
  EXPECT_EQ(read_text(g, second.inputs[2]), "wg^T");
  EXPECT_EQ(g.tensors[second.output].name, "dx.1");
  EXPECT_EQ(g.tensors[second.output].shape, (Shape{64, 32}));
}

TEST(DataflowGraph, BatchedBackwardTransposesTheLastTwoDims) {
  // s = q[4,8,6] · k[4,6,10] (bmm) = [4,8,10]: dq = ds · kᵀ with kᵀ [4,10,6], dk = qᵀ · ds
  // with qᵀ [4,6,8], giving [4,6,10] = k's shape.
  DataflowScenario s({2}, {"dp"});
  s.input("q", {4, 8, 6}, "S(0)").parameter("k", {4, 6, 10});
  s.op("scores", OpKind::bmm, "q", "k", "s").training();
  const Scenario scenario = s.build();
  const DataflowGraph g = build_dataflow_graph(scenario);
  const GraphOp& dq = op_named(g, "scores.dgrad");
  const GraphOp& dk = op_named(g, "scores.wgrad");
  EXPECT_EQ(dq.kind, OpKind::bmm);
  EXPECT_EQ(g.shape_read(dq.inputs[1]), (Shape{4, 10, 6}));
  EXPECT_EQ(g.tensors[dq.output].shape, (Shape{4, 8, 6}));
  EXPECT_EQ(g.shape_read(dk.inputs[0]), (Shape{4, 6, 8}));
  EXPECT_EQ(g.tensors[dk.output].shape, (Shape{4, 6, 10}));
}

TEST(DataflowGraph, TransposedViewsSwapTheLastTwoDims) {
  EXPECT_EQ(transposed_shape({4, 8}), (Shape{8, 4}));
  EXPECT_EQ(transposed_shape({2, 4, 8}), (Shape{2, 8, 4}));
  EXPECT_EQ(to_string(transposed_placements(parse_placements("S(0),S(1),R,P"), 2)),
            "S(1),S(0),R,P(sum)");
  // A 3-D tensor: the batch shard S(0) stays.
  EXPECT_EQ(to_string(transposed_placements(parse_placements("S(0),S(2)"), 3)), "S(0),S(1)");
}

}  // namespace
}  // namespace symmesh::strategies
