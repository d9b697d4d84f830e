// The dataflow graph of a version-2 workload and the backward derived from it. Expected
// ops follow the chain rule by hand: for C = A·B, dA = dC·Bᵀ and dB = Aᵀ·dC.
#include "strategies/dataflow_graph.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
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

// ---- Tensor ops (core/tensor_op.hpp) ----

// One pre-norm residual block and the loss, as a model step writes it:
//   n = rms_norm(x, w_norm);  h = n · w [16, 16];  y = x + h;  a = swiglu(y, y2)
// with y2 = y · w2, then logits = a · w_out [16, 10] and loss = cross_entropy(logits).
Scenario residual_block() {
  DataflowScenario s({2}, {"tp"});
  s.input("x", {8, 16}, "S(0)")
      .parameter("w_norm", {16})
      .parameter("w", {16, 16})
      .parameter("w2", {16, 16})
      .parameter("w_out", {16, 10});
  s.tensor_op("norm", OpKind::rms_norm, "x", "w_norm", "n")
      .op("proj", OpKind::mm, "n", "w", "h")
      .tensor_op("residual", OpKind::add, "x", "h", "y")
      .op("proj2", OpKind::mm, "y", "w2", "y2")
      .tensor_op("act", OpKind::swiglu, "y", "y2", "a")
      .op("output", OpKind::mm, "a", "w_out", "logits")
      .tensor_op("loss", OpKind::cross_entropy, "logits", "", "loss")
      .training();
  return s.build();
}

TEST(DataflowGraph, CrossEntropyRunsAsStatisticsThenTheLoss) {
  const Scenario scenario = residual_block();
  const DataflowGraph g = build_dataflow_graph(scenario);
  const GraphOp& stats = op_named(g, "loss.stats");
  EXPECT_EQ(stats.kind, OpKind::cross_entropy_stats);
  EXPECT_EQ(read_text(g, stats.inputs[0]), "logits");
  EXPECT_EQ(g.tensors[stats.output].name, "loss.stats");
  EXPECT_EQ(g.tensors[stats.output].shape, (Shape{8, 2}));  // [T, 2]
  const GraphOp& loss = op_named(g, "loss");
  EXPECT_EQ(loss.kind, OpKind::cross_entropy_loss);
  EXPECT_EQ(read_text(g, loss.inputs[0]), "loss.stats");
  EXPECT_EQ(g.tensors[loss.output].shape, Shape{});  // the 0-d loss
  EXPECT_TRUE(g.is_graph_output(loss.output));
  // Its gradient reads the logits, the statistics and the loss's seed.
  const GraphOp& dlogits = op_named(g, "loss.dgrad");
  EXPECT_EQ(dlogits.kind, OpKind::cross_entropy_dgrad);
  ASSERT_EQ(dlogits.inputs.size(), 3u);
  EXPECT_EQ(read_text(g, dlogits.inputs[0]), "logits");
  EXPECT_EQ(read_text(g, dlogits.inputs[1]), "loss.stats");
  EXPECT_EQ(g.tensors[dlogits.inputs[2].tensor].kind, GraphTensor::Kind::seed);
  EXPECT_EQ(g.tensors[dlogits.output].name, "dlogits");
}

TEST(DataflowGraph, TensorOpBackwardIsTheChainRuleThroughNormAddAndSwiglu) {
  // By hand, in reverse: loss -> dlogits; output -> da, dw_out; act -> dy (gate), dy2 (up);
  // proj2 -> dy += dy2 · w2ᵀ (an addmm onto dy), dw2; residual -> dx = dy, dh = dy (the same
  // tensor: an add passes its gradient on); proj -> dn, dw; norm -> dx += rms_norm_dgrad(x,
  // w_norm, dn) (an add), dw_norm = rms_norm_wgrad(x, dn).
  const Scenario scenario = residual_block();
  const DataflowGraph g = build_dataflow_graph(scenario);
  const std::vector<std::string> names{
      "norm",         "proj",           "residual",     "proj2",          "act",
      "output",       "loss.stats",     "loss",         "loss.dgrad",     "output.dgrad",
      "output.wgrad", "act.dgrad.gate", "act.dgrad.up", "proj2.dgrad",    "proj2.wgrad",
      "proj.dgrad",   "proj.wgrad",     "norm.dgrad",   "norm.dgrad.acc", "norm.wgrad"};
  ASSERT_EQ(g.ops.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(g.ops[i].name, names[i]) << i;

  const GraphOp& gate = op_named(g, "act.dgrad.gate");
  EXPECT_EQ(gate.kind, OpKind::swiglu_dgrad_gate);
  EXPECT_EQ(read_text(g, gate.inputs[0]), "y");
  EXPECT_EQ(read_text(g, gate.inputs[1]), "y2");
  EXPECT_EQ(read_text(g, gate.inputs[2]), "da");
  EXPECT_EQ(g.tensors[gate.output].name, "dy");  // y's first contribution
  const GraphOp& up = op_named(g, "act.dgrad.up");
  EXPECT_EQ(up.kind, OpKind::swiglu_dgrad_up);
  EXPECT_EQ(read_text(g, up.inputs[0]), "y");
  EXPECT_EQ(read_text(g, up.inputs[1]), "da");
  EXPECT_EQ(g.tensors[up.output].name, "dy2");
  // y's second contribution comes through proj2: an accumulating matmul onto dy.
  const GraphOp& dy = op_named(g, "proj2.dgrad");
  EXPECT_EQ(dy.kind, OpKind::addmm);
  EXPECT_EQ(read_text(g, dy.inputs[0]), "dy");
  const TensorId dy_total = dy.output;
  // The residual add passes dy on to both x and h unchanged: proj's dgrad reads it.
  const GraphOp& dn = op_named(g, "proj.dgrad");
  EXPECT_EQ(dn.inputs[0].tensor, dy_total);
  EXPECT_EQ(g.tensors[dn.output].name, "dn");
  // The norm's input gradient: rms_norm_dgrad(x, w_norm, dn), a part added to dx = dy.
  const GraphOp& norm = op_named(g, "norm.dgrad");
  EXPECT_EQ(norm.kind, OpKind::rms_norm_dgrad);
  EXPECT_EQ(norm.pass, Pass::dgrad);
  EXPECT_EQ(read_text(g, norm.inputs[0]), "x");
  EXPECT_EQ(read_text(g, norm.inputs[1]), "w_norm");
  EXPECT_EQ(read_text(g, norm.inputs[2]), "dn");
  const GraphOp& acc = op_named(g, "norm.dgrad.acc");
  EXPECT_EQ(acc.kind, OpKind::add);
  EXPECT_EQ(acc.inputs[0].tensor, dy_total);
  EXPECT_EQ(acc.inputs[1].tensor, norm.output);
  EXPECT_EQ(g.tensors[acc.output].of, norm.inputs[0].tensor);  // x's whole gradient
  // The norm's weight gradient is a parameter gradient of the wgrad pass.
  const GraphOp& dw = op_named(g, "norm.wgrad");
  EXPECT_EQ(dw.kind, OpKind::rms_norm_wgrad);
  EXPECT_EQ(dw.pass, Pass::wgrad);
  EXPECT_EQ(read_text(g, dw.inputs[0]), "x");
  EXPECT_EQ(read_text(g, dw.inputs[1]), "dn");
  EXPECT_TRUE(g.tensors[dw.output].is_parameter_gradient);
  EXPECT_EQ(g.tensors[dw.output].shape, (Shape{16}));
}

TEST(DataflowGraph, AttentionAndEmbeddingBackwardReadWhatTheirKernelsNeed) {
  // embedding(table [10, 8]) -> x [6, 8]; qkv = x · w [8, 16]; attention over 2 sequences of
  // seq 3 with heads 2, kv_heads 1, head_dim 4: (2 + 2) · 4 = 16 columns -> ctx [6, 8].
  DataflowScenario s({2}, {"tp"});
  s.parameter("table", {10, 8}).parameter("w", {8, 16});
  s.output("x", "S(0)");
  TensorOpAttrs embedding;
  embedding.rows = 6;
  TensorOpAttrs attention;
  attention.heads = 2;
  attention.kv_heads = 1;
  attention.head_dim = 4;
  attention.seq = 3;
  s.tensor_op("embed", OpKind::embedding, "table", "", "x", embedding)
      .op("qkv", OpKind::mm, "x", "w", "qkv_out")
      .tensor_op("attn", OpKind::attention, "qkv_out", "", "ctx", attention)
      .training();
  const Scenario scenario = s.build();
  const DataflowGraph g = build_dataflow_graph(scenario);
  const GraphOp& attn = op_named(g, "attn");
  EXPECT_EQ(g.tensors[attn.output].shape, (Shape{6, 8}));
  const GraphOp& d_attn = op_named(g, "attn.dgrad");
  EXPECT_EQ(d_attn.kind, OpKind::attention_dgrad);
  ASSERT_EQ(d_attn.inputs.size(), 3u);  // qkv, the forward's output, d out
  EXPECT_EQ(read_text(g, d_attn.inputs[0]), "qkv_out");
  EXPECT_EQ(read_text(g, d_attn.inputs[1]), "ctx");
  EXPECT_EQ(read_text(g, d_attn.inputs[2]), "dctx");
  EXPECT_EQ(d_attn.attrs, attention);
  EXPECT_EQ(g.tensors[d_attn.output].shape, (Shape{6, 16}));
  // The table's gradient: embedding_wgrad of dx, as many rows as the table.
  const GraphOp& d_table = op_named(g, "embed.wgrad");
  EXPECT_EQ(d_table.kind, OpKind::embedding_wgrad);
  EXPECT_EQ(d_table.pass, Pass::wgrad);
  EXPECT_EQ(read_text(g, d_table.inputs[0]), "dx");
  EXPECT_EQ(d_table.attrs.rows, 10);
  EXPECT_TRUE(g.tensors[d_table.output].is_parameter_gradient);
  EXPECT_EQ(g.tensors[d_table.output].shape, (Shape{10, 8}));
}

TEST(DataflowGraph, AnAddOfAParameterIsRefusedInTraining) {
  DataflowScenario s({2}, {"tp"});
  s.input("x", {4, 8}, "R").parameter("b", {4, 8});
  s.tensor_op("bias", OpKind::add, "x", "b", "y").training();
  const Scenario scenario = s.build();
  try {
    build_dataflow_graph(scenario);
    FAIL() << "expected the add of a parameter to be refused";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("gradient of parameter 'b' through an add"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace symmesh::strategies
