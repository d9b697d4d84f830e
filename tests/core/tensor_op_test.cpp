// The table of core/tensor_op.hpp by hand: every op's output shape, the problems
// check_tensor_op names (operand and message), and the work tensor_op_cost charges a piece —
// bytes, GEMM products, kernels — with the arithmetic written out in the comments. The
// roofline's duration of a tensor op is recomputed here from core/roofline.hpp's documented
// formulas (HBM time, efficiency 0.85 s(m) s(n) s(k) with s(x) = x / (x + 64), 5 µs per
// kernel), not by calling the functions it is built on.
#include "core/tensor_op.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/roofline.hpp"

namespace symmesh {
namespace {

// attention's layout in these tests: 4 query heads in 2 key/value groups of head_dim 2, so a
// group is (4 / 2 + 2) · 2 = 8 columns, qkv (4 + 2·2) · 2 = 16, the output 4 · 2 = 8.
TensorOpAttrs small_attention() {
  TensorOpAttrs a;
  a.seq = 3;
  a.heads = 4;
  a.kv_heads = 2;
  a.head_dim = 2;
  return a;
}

TensorOpAttrs rows(int64_t n) {
  TensorOpAttrs a;
  a.rows = n;
  return a;
}

TEST(TensorOpTable, OutputShapes) {
  const TensorOpAttrs none;
  const TensorOpAttrs att = small_attention();
  struct Row {
    OpKind op;
    std::vector<Shape> in;
    TensorOpAttrs attrs;
    Shape out;
  };
  const std::vector<Row> table = {
      {OpKind::add, {{5, 3}, {5, 3}}, none, {5, 3}},
      {OpKind::rms_norm, {{4, 8}, {8}}, none, {4, 8}},
      {OpKind::swiglu, {{4, 6}, {4, 6}}, none, {4, 6}},
      {OpKind::gelu, {{4, 6}}, none, {4, 6}},
      // 12 tokens (4 sequences of 3), 2 groups -> 4 heads of 2 columns.
      {OpKind::attention, {{12, 16}}, att, {12, 8}},
      // One group's piece (8 columns): its 2 query heads, 4 columns.
      {OpKind::attention, {{12, 8}}, att, {12, 4}},
      // The rows of an embedding's output are the tokens (attrs.rows), its columns the table's.
      {OpKind::embedding, {{7, 4}}, rows(6), {6, 4}},
      {OpKind::cross_entropy, {{7, 11}}, none, {}},
      {OpKind::rms_norm_dgrad, {{4, 8}, {8}, {4, 8}}, none, {4, 8}},
      {OpKind::rms_norm_wgrad, {{4, 8}, {4, 8}}, none, {8}},
      {OpKind::swiglu_dgrad_gate, {{4, 6}, {4, 6}, {4, 6}}, none, {4, 6}},
      {OpKind::swiglu_dgrad_up, {{4, 6}, {4, 6}}, none, {4, 6}},
      {OpKind::gelu_dgrad, {{4, 6}, {4, 6}}, none, {4, 6}},
      {OpKind::attention_dgrad, {{12, 16}, {12, 8}, {12, 8}}, att, {12, 16}},
      // embedding_wgrad's output is the table: attrs.rows = vocabulary rows.
      {OpKind::embedding_wgrad, {{6, 4}}, rows(7), {7, 4}},
      {OpKind::cross_entropy_stats, {{7, 11}}, none, {7, 2}},
      {OpKind::cross_entropy_loss, {{7, 2}}, none, {}},
      {OpKind::cross_entropy_dgrad, {{7, 11}, {7, 2}, {}}, none, {7, 11}},
  };
  for (const Row& r : table) {
    SCOPED_TRACE(to_string(r.op));
    EXPECT_FALSE(check_tensor_op(r.op, r.in, r.attrs).has_value())
        << check_tensor_op(r.op, r.in, r.attrs)->message;
    EXPECT_EQ(tensor_op_output_shape(r.op, r.in, r.attrs), r.out);
    EXPECT_EQ(tensor_op_signature(r.op).inputs.size(), r.in.size());
  }
}

TEST(TensorOpTable, SignaturesNameInputsAndForwardOps) {
  EXPECT_EQ(tensor_op_signature(OpKind::rms_norm_dgrad).inputs,
            (std::vector<std::string_view>{"x", "w", "dy"}));
  EXPECT_EQ(tensor_op_signature(OpKind::attention_dgrad).inputs,
            (std::vector<std::string_view>{"qkv", "out", "dout"}));
  EXPECT_EQ(tensor_op_signature(OpKind::cross_entropy_dgrad).inputs,
            (std::vector<std::string_view>{"logits", "stats", "dloss"}));
  EXPECT_EQ(tensor_op_signature(OpKind::swiglu_dgrad_up).forward, OpKind::swiglu);
  EXPECT_EQ(tensor_op_signature(OpKind::cross_entropy_loss).forward, OpKind::cross_entropy);
  EXPECT_EQ(tensor_op_signature(OpKind::embedding_wgrad).forward, OpKind::embedding);
  EXPECT_EQ(tensor_op_signature(OpKind::gelu).forward, OpKind::gelu);
  EXPECT_THROW(tensor_op_signature(OpKind::mm), InvalidArgument);
  EXPECT_THROW(check_tensor_op(OpKind::mm, {{2, 2}, {2, 2}}, {}), InvalidArgument);
}

TEST(TensorOpTable, AttentionHeadDimAndGroups) {
  TensorOpAttrs a = small_attention();
  // (heads + 2 kv_heads) = 8 head widths in qkv: 16 columns -> head_dim 2; 15 is not whole.
  EXPECT_EQ(attention_head_dim(16, a), 2);
  EXPECT_EQ(attention_head_dim(15, a), 0);
  // A group is (4/2 + 2) · 2 = 8 columns: 16 -> 2 groups, 8 -> 1, 12 and 6 are not whole.
  EXPECT_EQ(attention_groups(16, a), 2);
  EXPECT_EQ(attention_groups(8, a), 1);
  EXPECT_EQ(attention_groups(12, a), -1);
  EXPECT_EQ(attention_groups(6, a), -1);
  a.heads = 3;  // 3 heads in 2 groups: no whole groups at all
  EXPECT_EQ(attention_groups(16, a), -1);
}

TEST(TensorOpTable, CheckNamesTheOperandAndTheProblem) {
  const TensorOpAttrs none;
  const TensorOpAttrs att = small_attention();
  TensorOpAttrs bad_heads = att;
  bad_heads.kv_heads = 3;  // 4 heads do not split into 3 groups
  TensorOpAttrs no_dim = att;
  no_dim.head_dim = 0;
  struct Bad {
    OpKind op;
    std::vector<Shape> in;
    TensorOpAttrs attrs;
    std::string operand;
    std::string message;  // a part of it
  };
  const std::vector<Bad> table = {
      // Mismatched shapes: the second operand is the one named, with both shapes.
      {OpKind::add, {{5, 3}, {5, 4}}, none, "b", "b must have a's shape 5x3; got 5x4"},
      {OpKind::swiglu, {{4, 6}, {4, 5}}, none, "b", "a's shape 4x6"},
      {OpKind::gelu_dgrad, {{4, 6}, {6, 4}}, none, "dy", "dy must have x's shape 4x6"},
      {OpKind::rms_norm_dgrad, {{4, 8}, {8}, {4, 7}}, none, "dy", "x's shape 4x8"},
      {OpKind::rms_norm_wgrad, {{4, 8}, {3, 8}}, none, "dy", "x's shape 4x8"},
      // Wrong ranks.
      {OpKind::gelu, {{6}}, none, "a", "is 2-D; got 1-D 6"},
      {OpKind::rms_norm, {{2, 4, 8}, {8}}, none, "a", "is 2-D; got 3-D 2x4x8"},
      {OpKind::embedding, {{7}}, rows(6), "a", "the embedding table [vocab, hidden] is 2-D"},
      {OpKind::cross_entropy_stats, {{7}}, none, "logits", "the logits [tokens, vocab] is 2-D"},
      {OpKind::cross_entropy_dgrad, {{7, 11}, {7, 2}, {1}}, none, "dloss", "is 0-D; got 1-D"},
      // The norm's weight: one element per column.
      {OpKind::rms_norm, {{4, 8}, {4}}, none, "b", "must be [8], one element per column of 4x8"},
      {OpKind::rms_norm_dgrad, {{4, 8}, {4, 8}, {4, 8}}, none, "w", "must be [8]"},
      // Wrong number of tensors.
      {OpKind::swiglu_dgrad_gate, {{4, 6}, {4, 6}}, none, "gate", "takes 3 tensors, got 2"},
      // Attention: widths that are not whole groups of 8 columns, rows that are not whole
      // sequences of 3, heads that do not split into the groups, no head_dim.
      {OpKind::attention, {{12, 12}}, att, "a", "12 columns, not whole key/value groups"},
      {OpKind::attention, {{12, 12}}, att, "a", "head_dim = 8"},
      {OpKind::attention_dgrad, {{12, 6}, {12, 4}, {12, 4}}, att, "qkv", "not whole key/value"},
      {OpKind::attention, {{10, 16}}, att, "seq", "10 rows are not whole sequences of seq 3"},
      {OpKind::attention_dgrad, {{4, 16}, {4, 8}, {4, 8}}, att, "seq", "4 rows"},
      {OpKind::attention, {{12, 16}}, bad_heads, "heads", "heads 4, kv_heads 3"},
      {OpKind::attention, {{12, 16}}, no_dim, "head_dim", "head_dim >= 1; got 0"},
      // attention_dgrad's out and dout are the forward output, [12, 2 groups · 2 heads · 2].
      {OpKind::attention_dgrad, {{12, 16}, {12, 16}, {12, 8}}, att, "out", "must be 12x8"},
      {OpKind::attention_dgrad, {{12, 16}, {12, 8}, {6, 8}}, att, "dout", "got 6x8"},
      // The loss statistics are [T, 2]; the gradient's are the logits' rows by 2.
      {OpKind::cross_entropy_loss, {{7, 3}}, none, "stats", "are [tokens, 2]; got 7x3"},
      {OpKind::cross_entropy_loss, {{14}}, none, "stats", "is 2-D; got 1-D"},
      {OpKind::cross_entropy_dgrad, {{7, 11}, {6, 2}, {}}, none, "stats", "must be 7x2; got 6x2"},
      {OpKind::cross_entropy_dgrad, {{7, 11}, {7, 11}, {}}, none, "stats", "must be 7x2"},
      // The embedding gradient needs the table's rows.
      {OpKind::embedding_wgrad, {{6, 4}}, rows(0), "vocab", ">= 1 rows"},
  };
  for (const Bad& b : table) {
    SCOPED_TRACE(to_string(b.op) + " expecting '" + b.message + "'");
    const auto problem = check_tensor_op(b.op, b.in, b.attrs);
    ASSERT_TRUE(problem.has_value());
    EXPECT_EQ(problem->operand, b.operand);
    EXPECT_NE(problem->message.find(b.message), std::string::npos) << problem->message;
  }
  // A rank problem lists the rank the operand must have.
  EXPECT_EQ(check_tensor_op(OpKind::gelu, {{6}}, none)->ranks, std::vector<int>{2});
}

// ---- tensor_op_cost, by hand ----

void expect_cost(const TensorOpCost& c, double bytes, int kernels,
                 const std::vector<LocalGemm>& products = {}, double work_fraction = 1.0) {
  EXPECT_DOUBLE_EQ(c.bytes, bytes);
  EXPECT_EQ(c.kernels, kernels);
  EXPECT_EQ(c.products, products);
  EXPECT_DOUBLE_EQ(c.work_fraction, work_fraction);
}

TEST(TensorOpCost, MemoryBoundOpsReadEveryInputAndWriteTheOutputOnce) {
  const DType bf16 = DType::bf16;  // 2 bytes
  // rms_norm [4096, 8192] with its weight [8192]: x and w read, y written, and the fp32
  // reciprocal RMS of each of the 4096 rows: 2·(2·4096·8192 + 8192) + 4·4096 = 134,250,496.
  expect_cost(tensor_op_cost(OpKind::rms_norm, {{4096, 8192}, {8192}}, {4096, 8192}, {}, bf16),
              2.0 * (2 * 4096.0 * 8192 + 8192) + 4 * 4096.0, 1);
  EXPECT_DOUBLE_EQ(2.0 * (2 * 4096.0 * 8192 + 8192) + 4 * 4096.0, 134250496.0);
  // Its input gradient reads x, w, dy and the saved statistic, writes dx.
  expect_cost(tensor_op_cost(OpKind::rms_norm_dgrad, {{4096, 8192}, {8192}, {4096, 8192}},
                             {4096, 8192}, {}, bf16),
              2.0 * (3 * 4096.0 * 8192 + 8192) + 4 * 4096.0, 1);
  // Its weight gradient reads x, dy and the statistic, writes [8192].
  expect_cost(
      tensor_op_cost(OpKind::rms_norm_wgrad, {{4096, 8192}, {4096, 8192}}, {8192}, {}, bf16),
      2.0 * (2 * 4096.0 * 8192 + 8192) + 4 * 4096.0, 1);
  // The residual add [4096, 4096]: two reads and a write, 2·3·4096² = 100,663,296.
  expect_cost(tensor_op_cost(OpKind::add, {{4096, 4096}, {4096, 4096}}, {4096, 4096}, {}, bf16),
              100663296.0, 1);
  // SwiGLU's gate gradient [4096, 14336] in fp32: gate, up, dy read, d gate written.
  expect_cost(
      tensor_op_cost(OpKind::swiglu_dgrad_gate, {{4096, 14336}, {4096, 14336}, {4096, 14336}},
                     {4096, 14336}, {}, DType::fp32),
      4.0 * 4 * 4096 * 14336, 1);
  expect_cost(tensor_op_cost(OpKind::gelu, {{4096, 14336}}, {4096, 14336}, {}, bf16),
              2.0 * 2 * 4096 * 14336, 1);
}

TEST(TensorOpCost, DataOpsChargeOneInt64IdPerToken) {
  const DType bf16 = DType::bf16;
  // embedding of 8192 tokens from a [128256, 4096] table: the 8192 table rows looked up
  // read (not the whole table), the [8192, 4096] output written, and one int64 token id per
  // output row: 2·(8192·4096 + 8192·4096) + 8·8192.
  expect_cost(tensor_op_cost(OpKind::embedding, {{128256, 4096}}, {8192, 4096}, rows(8192), bf16),
              2.0 * (8192.0 * 4096 + 8192.0 * 4096) + 8 * 8192.0, 1);
  // A vocabulary-split piece (a quarter of the table) still looks up every token's id, and
  // reads at most one row per token.
  expect_cost(tensor_op_cost(OpKind::embedding, {{32064, 4096}}, {8192, 4096}, rows(8192), bf16),
              2.0 * (8192.0 * 4096 + 8192.0 * 4096) + 8 * 8192.0, 1);
  // Its gradient: d out [8192, 4096] read, the table's gradient written (zeroed, then the
  // rows added: 2 kernels), and the ids of the 8192 rows.
  expect_cost(
      tensor_op_cost(OpKind::embedding_wgrad, {{8192, 4096}}, {128256, 4096}, rows(128256), bf16),
      2.0 * (8192.0 * 4096 + 128256.0 * 4096) + 8 * 8192.0, 2);
  // The loss statistics of a [8192, 32064] logits piece: read, [8192, 2] written, a label
  // per row: 2·(8192·32064 + 2·8192) + 8·8192.
  expect_cost(tensor_op_cost(OpKind::cross_entropy_stats, {{8192, 32064}}, {8192, 2}, {}, bf16),
              2.0 * (8192.0 * 32064 + 2 * 8192.0) + 8 * 8192.0, 1);
  // The loss from fp32 statistics: [8192, 2] read, one value written; no labels.
  expect_cost(tensor_op_cost(OpKind::cross_entropy_loss, {{8192, 2}}, {}, {}, DType::fp32),
              4.0 * (2 * 8192 + 1), 1);
  // The gradient: logits, statistics and d loss read, d logits written, a label per row.
  expect_cost(tensor_op_cost(OpKind::cross_entropy_dgrad, {{8192, 32064}, {8192, 2}, {}},
                             {8192, 32064}, {}, bf16),
              2.0 * (2 * 8192.0 * 32064 + 2 * 8192 + 1) + 8 * 8192.0, 1);
}

// Llama-3-8B's attention (32 heads, 8 key/value heads, head_dim 128) with seq 2048: a piece
// of 2 sequences (4096 rows) and 2 of the 8 groups (tensor parallel 4), so
// 2 · (32/8 + 2) · 128 = 1536 columns of qkv and 2 · 4 = 8 query heads, 1024 output columns.
TensorOpAttrs llama_attention(bool causal) {
  TensorOpAttrs a;
  a.seq = 2048;
  a.heads = 32;
  a.kv_heads = 8;
  a.head_dim = 128;
  a.causal = causal;
  return a;
}

// The bytes of that piece: qkv and the output (inputs + output, bf16), the fp32 log-sum-exp
// per row and local head (4·4096·8), and the rotary embedding reading and writing q and k:
// 2·2·4096·(8 + 2)·128.
double attention_piece_bytes(double read_written_elements) {
  return 2.0 * read_written_elements + 4 * 4096.0 * 8 + 2 * 2 * 4096.0 * (8 + 2) * 128;
}

TEST(TensorOpCost, AttentionProductsPerSequenceAndLocalHead) {
  // batch = 2 sequences · 8 local heads = 16; scores q·kᵀ m = n = seq = 2048, k = 128;
  // context p·v m = 2048, n = 128, k = 2048. Causal: half the FLOPs. Rope + flash: 2 kernels.
  const LocalGemm scores{16, 2048, 2048, 128, false};
  const LocalGemm context{16, 2048, 128, 2048, false};
  const TensorOpCost fwd = tensor_op_cost(OpKind::attention, {{4096, 1536}}, {4096, 1024},
                                          llama_attention(true), DType::bf16);
  expect_cost(fwd, attention_piece_bytes(4096.0 * 1536 + 4096.0 * 1024), 2, {scores, context}, 0.5);
  // Each product is 2·16·2048·2048·128 = 17,179,869,184 FLOPs; causal halves the two.
  EXPECT_DOUBLE_EQ(fwd.flops(), 2 * 17179869184.0 * 0.5);
  // The backward (not causal here): the scores recomputed and dP = dO·Vᵀ (score-shaped),
  // dV = Pᵀ·dO, dQ = dS·K, dK = dSᵀ·Q (context-shaped): 5 products, 2.5× the forward. It
  // reads qkv, out and d out and writes d qkv; preprocess + flash + rope: 3 kernels.
  const TensorOpCost bwd =
      tensor_op_cost(OpKind::attention_dgrad, {{4096, 1536}, {4096, 1024}, {4096, 1024}},
                     {4096, 1536}, llama_attention(false), DType::bf16);
  expect_cost(bwd, attention_piece_bytes(2 * 4096.0 * 1536 + 2 * 4096.0 * 1024), 3,
              {scores, scores, context, context, context}, 1.0);
  EXPECT_DOUBLE_EQ(bwd.flops(), 5 * 17179869184.0);
  // A piece with every group of one sequence: batch 1 · 32 heads.
  const TensorOpCost whole = tensor_op_cost(OpKind::attention, {{2048, 6144}}, {2048, 4096},
                                            llama_attention(true), DType::bf16);
  ASSERT_EQ(whole.products.size(), 2u);
  EXPECT_EQ(whole.products[0], (LocalGemm{32, 2048, 2048, 128, false}));
}

// H100 SXM: 989 TFLOP/s dense bf16, 3.35 TB/s of HBM3.
GpuSpec h100() {
  GpuSpec g;
  g.name = "h100";
  g.peak_flops_per_s = {{"bf16", 989e12}};
  g.memory_capacity_bytes = 80e9;
  g.memory_bandwidth_bytes_per_s = 3.35e12;
  return g;
}

TEST(TensorOpCost, RooflineDurationOfAMemoryBoundOp) {
  // rms_norm [4096, 8192] bf16: 134,250,496 bytes at 3.35e12 B/s, plus one 5 µs launch:
  // 40.07 µs + 5 µs.
  const TensorOpCost c =
      tensor_op_cost(OpKind::rms_norm, {{4096, 8192}, {8192}}, {4096, 8192}, {}, DType::bf16);
  const double expected = 134250496.0 / 3.35e12 + 5e-6;
  EXPECT_NEAR(roofline::tensor_op_duration_s(h100(), DType::bf16, c), expected, 1e-15);
  EXPECT_NEAR(expected, 45.07e-6, 0.01e-6);
}

TEST(TensorOpCost, RooflineDurationOfAnAttentionPiece) {
  // core/roofline.hpp: efficiency(m, n, k) = 0.85 · s(m) s(n) s(k), s(x) = x / (x + 64).
  const auto s = [](double x) { return x / (x + 64); };
  const auto efficiency = [&](double m, double n, double k) { return 0.85 * s(m) * s(n) * s(k); };
  const double gemm = 2.0 * 16 * 2048 * 2048 * 128;  // FLOPs of each product (see above)
  // scores (2048, 2048, 128) and context (2048, 128, 2048): both at 0.85·s(2048)²·s(128) =
  // 0.85 · (2048/2112)² · (128/192) ≈ 0.533; causal: half of each.
  const double effective =
      (gemm / efficiency(2048, 2048, 128) + gemm / efficiency(2048, 128, 2048)) * 0.5;
  EXPECT_NEAR(efficiency(2048, 2048, 128), 0.5328, 1e-4);
  const double compute_s = effective / 989e12;  // ≈ 32.6 µs
  const double bytes = attention_piece_bytes(4096.0 * 1536 + 4096.0 * 1024);
  ASSERT_GT(compute_s, bytes / 3.35e12);  // compute-bound: 42,074,112 bytes take ≈ 12.6 µs
  const TensorOpCost c = tensor_op_cost(OpKind::attention, {{4096, 1536}}, {4096, 1024},
                                        llama_attention(true), DType::bf16);
  EXPECT_NEAR(c.effective_flops(), effective, effective * 1e-12);
  // Two kernels: rope and flash.
  EXPECT_NEAR(roofline::tensor_op_duration_s(h100(), DType::bf16, c), compute_s + 2 * 5e-6, 1e-12);
}

TEST(TensorOpCost, AnEmptyPieceCostsNothing) {
  // A rank whose torch.chunk piece is empty (e.g. 2 rows over 3 ranks) launches nothing.
  const TensorOpCost c = tensor_op_cost(OpKind::gelu, {{0, 6}}, {0, 6}, {}, DType::bf16);
  EXPECT_DOUBLE_EQ(c.bytes, 0.0);
  EXPECT_DOUBLE_EQ(roofline::tensor_op_duration_s(h100(), DType::bf16, c), 0.0);
}

}  // namespace
}  // namespace symmesh
