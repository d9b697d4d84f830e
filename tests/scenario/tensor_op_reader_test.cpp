// Tensor ops in version-2 files (core/tensor_op.hpp, scenario/workload_reader.cpp): their
// keys are read into the op, their output shapes follow the table, and every mistake is an
// error at the YAML node (line:column counted by hand in the texts below, 1-based).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/scenario/scenario_test_files.hpp"

using namespace symmesh;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

class TensorOpReader : public symmesh::testing::ScenarioFileTest {};

// Lines 1-8; the ops follow from line 9 on.
const std::string kHead = R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [8], names: [tp]}
tensors:
  x:   {shape: [48, 64], placements: ["S(0)"]}
  w:   {shape: [64], parameter: true}
  qkv: {shape: [48, 128], placements: ["R"]}
workload:
)yaml";

const WorkloadOp& op_named(const Scenario& s, const std::string& name) {
  for (const WorkloadOp& op : s.workload)
    if (op.name == name) return op;
  throw std::runtime_error("no op " + name);
}

TEST_F(TensorOpReader, KeysAndOutputShapes) {
  // attention over qkv [48, 128]: 2 sequences of 24; (heads 4 + 2 · kv_heads 2) · head_dim
  // 16 = 128 columns, so head_dim is derived as 16 and the output is [48, 4 · 16 = 64].
  const Scenario s = load(kHead + R"yaml(  - {name: n, op: rms_norm, a: x, b: w, output: y}
  - {name: r, op: add, a: x, b: y, output: z}
  - {name: s, op: swiglu, a: z, b: y, output: act}
  - {name: g, op: gelu, a: act, output: act2}
  - {name: att, op: attention, a: qkv, output: ctx, heads: 4, kv_heads: 2, seq: 24}
  - {name: both, op: add, a: ctx, b: act2, output: sum}
)yaml");
  const WorkloadOp& att = op_named(s, "att");
  EXPECT_EQ(att.kind, OpKind::attention);
  EXPECT_EQ(att.a_tensor, "qkv");
  EXPECT_EQ(att.attrs.heads, 4);
  EXPECT_EQ(att.attrs.kv_heads, 2);
  EXPECT_EQ(att.attrs.head_dim, 16);
  EXPECT_EQ(att.attrs.seq, 24);
  EXPECT_TRUE(att.attrs.causal);  // the default
  // `both` reads ctx and act2: both [48, 64] as worked out above, or the add would refuse.
  EXPECT_THAT(op_named(s, "both").a, ElementsAre(48, 64));
  EXPECT_THAT(op_named(s, "both").b, ElementsAre(48, 64));
  EXPECT_EQ(op_named(s, "n").b_tensor, "w");
}

TEST_F(TensorOpReader, EmbeddingAndLoss) {
  const Scenario s = load(R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [8], names: [tp]}
tensors:
  table: {shape: [100, 16], parameter: true}
  w:     {shape: [16, 100], parameter: true}
workload:
  - {name: embed, op: embedding, a: table, output: x, tokens: 40}
  - {name: out, op: mm, a: x, b: w, output: logits}
  - {name: loss, op: cross_entropy, a: logits, output: loss}
)yaml");
  EXPECT_EQ(op_named(s, "embed").attrs.rows, 40);
  EXPECT_THAT(op_named(s, "out").a, ElementsAre(40, 16));  // [tokens, hidden]
  EXPECT_THAT(op_named(s, "loss").a, ElementsAre(40, 100));
}

TEST_F(TensorOpReader, ShapesThatDoNotFitAreRefusedAtTheOperand) {
  // The norm's weight must be [64], one element per column of x.
  auto e = load_error(kHead + "  - {name: n, op: rms_norm, a: x, b: qkv, output: y}\n");
  EXPECT_EQ(e.where(), at(9, 38));
  EXPECT_THAT(e.message(), HasSubstr("tensor 'qkv' is 48x128"));
  EXPECT_THAT(e.message(), HasSubstr("the norm's weight must be [64]"));
  // add needs the same shapes.
  e = load_error(kHead + "  - {name: r, op: add, a: x, b: qkv, output: y}\n");
  EXPECT_EQ(e.where(), at(9, 33));
  EXPECT_THAT(e.message(), HasSubstr("b must have a's shape 48x64; got 48x128"));
  // 48 rows are not whole sequences of 20.
  e = load_error(
      kHead + "  - {name: a, op: attention, a: qkv, output: c, heads: 4, kv_heads: 2, seq: 20}\n");
  EXPECT_EQ(e.where(), at(9, 77));
  EXPECT_THAT(e.message(), HasSubstr("48 rows are not whole sequences of seq 20"));
  // 128 columns are not 3 + 2 · 3 = 9 heads of equal width.
  e = load_error(kHead + "  - {name: a, op: attention, a: qkv, output: c, heads: 3, seq: 24}\n");
  EXPECT_EQ(e.where(), at(9, 56));
  EXPECT_THAT(e.message(), HasSubstr("128 columns are not (heads + 2 kv_heads) = 9 heads"));
  // kv_heads must divide heads.
  e = load_error(
      kHead + "  - {name: a, op: attention, a: qkv, output: c, heads: 4, kv_heads: 3, seq: 24}\n");
  EXPECT_EQ(e.where(), at(9, 69));
  EXPECT_THAT(e.message(), HasSubstr("kv_heads 3 does not divide heads 4"));
}

TEST_F(TensorOpReader, MissingAndUnknownKeys) {
  auto e = load_error(kHead + "  - {name: a, op: attention, a: qkv, output: c, seq: 24}\n");
  EXPECT_EQ(e.where(), at(9, 5));
  EXPECT_THAT(e.message(), HasSubstr("missing key 'heads'"));
  e = load_error(kHead + "  - {name: g, op: gelu, a: x, b: x, output: y}\n");
  EXPECT_EQ(e.where(), at(9, 31));
  EXPECT_THAT(e.message(), HasSubstr("unknown key 'b'"));
  e = load_error(R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [8], names: [tp]}
tensors:
  table: {shape: [100, 16], parameter: true}
workload:
  - {name: embed, op: embedding, a: table, output: x}
)yaml");
  EXPECT_EQ(e.where(), at(7, 5));
  EXPECT_THAT(e.message(), HasSubstr("missing key 'tokens'"));
}

TEST_F(TensorOpReader, GeneratedOpsAndVersionOneAreRefused) {
  // A backward op is derived, never written.
  auto e = load_error(kHead + "  - {name: d, op: rms_norm_dgrad, a: x, output: y}\n");
  EXPECT_EQ(e.where(), at(9, 19));
  EXPECT_THAT(e.message(), HasSubstr("'rms_norm_dgrad' ops are not written"));
  EXPECT_THAT(e.message(), HasSubstr("each 'rms_norm' op"));
  e = load_error(kHead + "  - {name: d, op: cross_entropy_stats, a: x, output: y}\n");
  EXPECT_THAT(e.message(), HasSubstr("each 'cross_entropy' op"));
  // Tensor ops read named tensors: version 1 has none.
  e = load_error(R"yaml(cluster: clusters/dgx-h100.yaml
mesh: [8]
workload:
  - {name: n, op: rms_norm, a: x, b: w, output: y}
)yaml");
  EXPECT_EQ(e.where(), at(4, 5));
  EXPECT_THAT(e.message(), HasSubstr("'rms_norm' is a version-2 op"));
}

}  // namespace
