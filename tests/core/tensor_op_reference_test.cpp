// The reference tensor ops (core/tensor_op_reference.hpp) against sources that do not use
// them: values worked out by hand (the arithmetic is in the comments), central differences
// of the forward ops for every backward op, and the identities the planner's sharding relies
// on (pieces equal slices of the whole, or sum to it).
#include "core/tensor_op_reference.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/thrown.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "core/errors.hpp"

namespace symmesh {
namespace {

using ::testing::HasSubstr;
using testing::thrown;
using Tensor = std::vector<double>;

TensorOpCall call_of(OpKind op, std::vector<Shape> inputs, Shape output) {
  TensorOpCall c;
  c.op = op;
  c.inputs = std::move(inputs);
  c.output = std::move(output);
  return c;
}

Tensor random_tensor(int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  Tensor t(n);
  for (double& e : t) e = u(rng);
  return t;
}

void expect_near(const Tensor& actual, const Tensor& expected, double tolerance = 1e-12) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t e = 0; e < actual.size(); ++e)
    EXPECT_NEAR(actual[e], expected[e], tolerance * std::max(1.0, std::abs(expected[e])))
        << "element " << e;
}

// Rows [first, first + count) of a row-major matrix `cols` wide.
Tensor rows_of(const Tensor& m, int64_t cols, int64_t first, int64_t count) {
  return Tensor(m.begin() + first * cols, m.begin() + (first + count) * cols);
}
// Columns [first, first + count) of a row-major matrix `cols` wide.
Tensor cols_of(const Tensor& m, int64_t cols, int64_t first, int64_t count) {
  Tensor out;
  for (size_t row = 0; row < m.size() / cols; ++row)
    out.insert(out.end(), m.begin() + row * cols + first, m.begin() + row * cols + first + count);
  return out;
}

Tensor sum(const Tensor& a, const Tensor& b) {
  Tensor s(a);
  for (size_t e = 0; e < s.size(); ++e) s[e] += b[e];
  return s;
}

// ∂L/∂(input k) by central differences, L(inputs) = Σ forward(inputs) · g: the gradient a
// backward op computes for upstream gradient g, found without it.
Tensor numeric_gradient(const TensorOpCall& forward, std::vector<Tensor> in, size_t k,
                        const Tensor& g) {
  const double h = 1e-5;
  const auto loss = [&] {
    const Tensor y = tensor_op_reference(forward, in);
    double l = 0;
    for (size_t e = 0; e < y.size(); ++e) l += y[e] * g[e];
    return l;
  };
  Tensor grad(in[k].size());
  for (size_t e = 0; e < grad.size(); ++e) {
    const double x = in[k][e];
    in[k][e] = x + h;
    const double up = loss();
    in[k][e] = x - h;
    const double down = loss();
    in[k][e] = x;
    grad[e] = (up - down) / (2 * h);
  }
  return grad;
}

// ---- token ids and labels ----

TEST(TensorOpReference, TokenIdsAndLabelsAreInRangeDeterministicAndDiffer) {
  for (int64_t vocab : {2, 3, 7, 128256})
    for (int64_t row = 0; row < 5000; ++row) {
      const int64_t t = token_id(row, vocab), l = label_id(row, vocab);
      ASSERT_GE(t, 0);
      ASSERT_LT(t, vocab);
      ASSERT_GE(l, 0);
      ASSERT_LT(l, vocab);
      ASSERT_NE(t, l) << "row " << row << " vocab " << vocab;
      ASSERT_EQ(t, token_id(row, vocab));
      ASSERT_EQ(l, label_id(row, vocab));
    }
  // One id to draw from: both must be it.
  EXPECT_EQ(token_id(12, 1), 0);
  EXPECT_EQ(label_id(12, 1), 0);
}

TEST(TensorOpReference, TokenIdsAndLabelsSpreadOverTheVocabulary) {
  // 16,000 rows over 16 ids: 1000 each expected, binomial sd ≈ 31; ±150 is ~5 sd.
  std::vector<int> tokens(16), labels(16);
  for (int64_t row = 0; row < 16000; ++row) {
    ++tokens[token_id(row, 16)];
    ++labels[label_id(row, 16)];
  }
  for (int v = 0; v < 16; ++v) {
    EXPECT_NEAR(tokens[v], 1000, 150) << "token id " << v;
    EXPECT_NEAR(labels[v], 1000, 150) << "label " << v;
  }
  // 1000 rows into Llama 3's 128256 ids: ~3.9 collisions expected (1000² / 2V), so not
  // consecutive ids or a few clumps.
  std::set<int64_t> distinct;
  for (int64_t row = 0; row < 1000; ++row) distinct.insert(token_id(row, 128256));
  EXPECT_GT(distinct.size(), 985u);
}

TEST(TensorOpReference, TokenIdsNeedAVocabulary) {
  EXPECT_THROW(token_id(0, 0), InvalidArgument);
  EXPECT_THROW(label_id(0, 0), InvalidArgument);
  EXPECT_THROW(token_id(3, -5), InvalidArgument);
}

// ---- forward ops by hand ----

TEST(TensorOpReference, AddSums) {
  const auto c = call_of(OpKind::add, {{3}, {3}}, {3});
  EXPECT_EQ(tensor_op_reference(c, {{1, 2, 3}, {10, 20, 30}}), (Tensor{11, 22, 33}));
}

TEST(TensorOpReference, RmsNormByHand) {
  // x = [3, 4]: mean(x²) = (9 + 16) / 2 = 12.5, rms = √(12.5 + 1e-5) = 3.5355353201460170;
  // y = [3 / rms · 1, 4 / rms · 2] = [0.8485277980128058, 2.2627407947008153].
  const auto c = call_of(OpKind::rms_norm, {{1, 2}, {2}}, {1, 2});
  expect_near(tensor_op_reference(c, {{3, 4}, {1, 2}}), {0.8485277980128058, 2.2627407947008153});
}

TEST(TensorOpReference, SwigluByHand) {
  // silu(g) = g σ(g): silu(0) = 0; silu(1) = 0.7310585786300049, times 2 = 1.4621171572600098;
  // silu(−2) = −2 · 0.11920292202211755 = −0.2384058440442351, times 3 = −0.7152175321327052.
  const auto c = call_of(OpKind::swiglu, {{1, 3}, {1, 3}}, {1, 3});
  expect_near(tensor_op_reference(c, {{0, 1, -2}, {5, 2, 3}}),
              {0, 1.4621171572600098, -0.7152175321327052});
}

TEST(TensorOpReference, GeluByHand) {
  // 0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³))): at 1, tanh(0.7978845608 · 1.044715)
  // = tanh(0.8335625) = 0.6823839812, so 0.8411919906; at −1 it is −(1 − 0.8411919906)
  // (gelu(x) − gelu(−x) = x); at 3, tanh(0.7978845608 · 4.207305) ≈ 0.9975750719.
  const auto c = call_of(OpKind::gelu, {{1, 4}}, {1, 4});
  expect_near(tensor_op_reference(c, {{0, 1, -1, 3}}),
              {0, 0.8411919906082768, -0.15880800939172324, 2.996362607918227});
}

TEST(TensorOpReference, CrossEntropyByHand) {
  // logits [[1, 2, 3], [0, 0, 0]] over a vocabulary of 3: logsumexp of row 0 is
  // 3 + ln(1 + e⁻¹ + e⁻²) = 3.4076059644443806, softmax [0.0900305731703804,
  // 0.2447284710547976, 0.6652409557748217]; row 1's is ln 3 = 1.0986122886681098, softmax ⅓.
  const Tensor logits{1, 2, 3, 0, 0, 0};
  const double lse[2] = {3.4076059644443806, 1.0986122886681098};
  const double softmax[2][3] = {{0.0900305731703804, 0.2447284710547976, 0.6652409557748217},
                                {1.0 / 3, 1.0 / 3, 1.0 / 3}};
  for (const int64_t row_offset : {0, 5}) {
    auto c = call_of(OpKind::cross_entropy, {{2, 3}}, {});
    c.vocab = 3;
    c.row_offset = row_offset;
    c.total_rows = 4;  // two more rows elsewhere: this piece's share of the mean over 4
    const int64_t label[2] = {label_id(row_offset, 3), label_id(row_offset + 1, 3)};
    const double expected = (lse[0] - logits[label[0]] + lse[1] - logits[3 + label[1]]) / 4;
    expect_near(tensor_op_reference(c, {logits}), {expected});

    // The same loss in two steps, as the dataflow runs it: per row Σ exp(logit) (row 0:
    // e + e² + e³; row 1: 3) and the label's logit, then the mean of log Σ − logit[label].
    const Tensor stats{std::exp(1.0) + std::exp(2.0) + std::exp(3.0), logits[label[0]], 3.0,
                       logits[3 + label[1]]};
    c.op = OpKind::cross_entropy_stats;
    c.output = {2, 2};
    expect_near(tensor_op_reference(c, {logits}), stats);
    c.op = OpKind::cross_entropy_loss;
    c.inputs = {{2, 2}};
    c.output = {};
    expect_near(tensor_op_reference(c, {stats}), {expected});

    // (softmax − onehot(label)) · dloss / total_rows, dloss = 2.
    c.op = OpKind::cross_entropy_dgrad;
    c.inputs = {{2, 3}, {2, 2}, {}};
    c.output = {2, 3};
    Tensor d(6);
    for (int t = 0; t < 2; ++t)
      for (int v = 0; v < 3; ++v) d[t * 3 + v] = (softmax[t][v] - (v == label[t])) * 2 / 4;
    expect_near(tensor_op_reference(c, {logits, stats, {2}}), d);
  }
}

TEST(TensorOpReference, VocabularyPiecesOfTheLossStatisticsAddUpToTheWhole) {
  // Megatron's vocab-parallel cross entropy: each piece of columns sums its exponentials and
  // holds the label's logit only when the label is among its columns, so the pieces' [T, 2]
  // statistics sum to the whole rows'; each piece's gradient columns are the whole's.
  std::mt19937_64 rng(21);
  const int64_t rows = 5, vocab = 7;
  const Tensor logits = random_tensor(rows * vocab, rng);
  auto stats = call_of(OpKind::cross_entropy_stats, {{rows, vocab}}, {rows, 2});
  stats.vocab = vocab;
  const Tensor whole = tensor_op_reference(stats, {logits});
  auto dgrad = call_of(OpKind::cross_entropy_dgrad, {{rows, vocab}, {rows, 2}, {}}, {rows, vocab});
  dgrad.vocab = vocab;
  dgrad.total_rows = rows;
  const Tensor whole_dlogits = tensor_op_reference(dgrad, {logits, whole, {0.5}});
  Tensor summed(rows * 2);
  for (const auto& [first, count] : {std::pair{0, 3}, std::pair{3, 4}}) {
    Tensor piece, piece_dlogits;
    for (int64_t t = 0; t < rows; ++t)
      for (int64_t c = first; c < first + count; ++c) {
        piece.push_back(logits[t * vocab + c]);
        piece_dlogits.push_back(whole_dlogits[t * vocab + c]);
      }
    stats.inputs = {{rows, count}};
    stats.vocab_offset = first;
    summed = sum(summed, tensor_op_reference(stats, {piece}));
    dgrad.inputs = {{rows, count}, {rows, 2}, {}};
    dgrad.output = {rows, count};
    dgrad.vocab_offset = first;
    expect_near(tensor_op_reference(dgrad, {piece, whole, {0.5}}), piece_dlogits);
  }
  expect_near(summed, whole);
}

TEST(TensorOpReference, EmbeddingByHand) {
  // Table row v = [v, 10 v], so output row t must be [id, 10 id] for its token id; a piece
  // holding ids [2, 5) gives that only for the rows whose id is there, zeros elsewhere.
  const int64_t vocab = 7, rows = 12, row_offset = 30;
  Tensor table;
  for (int v = 0; v < vocab; ++v) table.insert(table.end(), {double(v), 10.0 * v});
  auto c = call_of(OpKind::embedding, {{vocab, 2}}, {rows, 2});
  c.vocab = vocab;
  c.row_offset = row_offset;
  c.attrs.rows = rows;
  Tensor whole, piece;
  bool inside = false, outside = false;
  for (int64_t t = 0; t < rows; ++t) {
    const double id = double(token_id(row_offset + t, vocab));
    whole.insert(whole.end(), {id, 10 * id});
    const bool held = id >= 2 && id < 5;
    (held ? inside : outside) = true;
    piece.insert(piece.end(), {held ? id : 0, held ? 10 * id : 0});
  }
  ASSERT_TRUE(inside && outside) << "the rows' ids should fall both in and out of [2, 5)";
  EXPECT_EQ(tensor_op_reference(c, {table}), whole);
  c.inputs = {{3, 2}};
  c.vocab_offset = 2;
  EXPECT_EQ(tensor_op_reference(c, {rows_of(table, 2, 2, 3)}), piece);
}

TEST(TensorOpReference, EmbeddingWgradCountsEachIdsRows) {
  // dy all ones: row v of the table's gradient is the number of rows whose id is v.
  const int64_t vocab = 5, rows = 20;
  auto c = call_of(OpKind::embedding_wgrad, {{rows, 1}}, {vocab, 1});
  c.vocab = vocab;
  c.attrs.rows = vocab;
  Tensor counts(vocab);
  for (int64_t t = 0; t < rows; ++t) ++counts[token_id(t, vocab)];
  EXPECT_EQ(tensor_op_reference(c, {Tensor(rows, 1.0)}), counts);
}

TEST(TensorOpReference, AttentionOfOneHeadByHand) {
  // seq 2, one head, head_dim 1, columns [q, k, v]: rows [1, 2, 10] and [3, 4, 20]; scale
  // 1/√1. Causal: row 0 sees only itself, so 10; row 1 scores 3·2 = 6 and 3·4 = 12, weights
  // [σ(−6), σ(6)] = [0.0024726232, 0.9975273768]: 10 · 0.0024726232 + 20 · 0.9975273768
  // = 19.975273768433652. Not causal, row 0 scores 2 and 4: 10 σ(−2) + 20 σ(2)
  // = 18.807970779778824; row 1 as before.
  auto c = call_of(OpKind::attention, {{2, 3}}, {2, 1});
  c.attrs = {.seq = 2, .heads = 1, .kv_heads = 1, .head_dim = 1, .causal = true};
  const Tensor qkv{1, 2, 10, 3, 4, 20};
  expect_near(tensor_op_reference(c, {qkv}), {10, 19.975273768433652});
  c.attrs.causal = false;
  expect_near(tensor_op_reference(c, {qkv}), {18.807970779778824, 19.975273768433652});
}

TEST(TensorOpReference, AttentionScalesByTheRootOfTheHeadDim) {
  // head_dim 2: rows q k v = [0 0 | 0 0 | 1 2] and [1 1 | 1 1 | 3 5]. Row 1's scores are
  // 0 and (1 + 1)/√2 = √2, weights [σ(−√2), σ(√2)] = [0.1955703175, 0.8044296825]:
  // [1 · 0.1955703175 + 3 · 0.8044296825, 2 · 0.1955703175 + 5 · 0.8044296825].
  auto c = call_of(OpKind::attention, {{2, 6}}, {2, 2});
  c.attrs = {.seq = 2, .heads = 1, .kv_heads = 1, .head_dim = 2, .causal = true};
  expect_near(tensor_op_reference(c, {{0, 0, 0, 0, 1, 2, 1, 1, 1, 1, 3, 5}}),
              {1, 2, 2.6088593650139136, 4.413289047520871});
}

TEST(TensorOpReference, AttentionSoftmaxSurvivesLargeScores) {
  // Row 1's scores are 40 · 25 = 1000 and 40 · 25.025 = 1001: e¹⁰⁰⁰ overflows a double, so
  // only a softmax that subtracts the row max gets weights [σ(−1), σ(1)] =
  // [0.2689414213699951, 0.7310585786300049]: 10 · 0.26894 + 20 · 0.73106 = 17.310585786300049.
  auto c = call_of(OpKind::attention, {{2, 3}}, {2, 1});
  c.attrs = {.seq = 2, .heads = 1, .kv_heads = 1, .head_dim = 1, .causal = true};
  expect_near(tensor_op_reference(c, {{0, 25, 10, 40, 25.025, 20}}), {10, 17.310585786300049},
              1e-9);
}

// ---- attention's structure ----

// 2 sequences of seq 3, heads 4 in 2 key/value groups of head_dim 2: qkv [6, 2 · (2+2) · 2].
TensorOpAttrs gqa_attrs(bool causal) {
  return {.seq = 3, .heads = 4, .kv_heads = 2, .head_dim = 2, .causal = causal};
}

TEST(TensorOpReference, GroupedAttentionEqualsUngroupedWithRepeatedKeysAndValues) {
  std::mt19937_64 rng(1);
  const int64_t rows = 6, d = 2;
  const Tensor grouped = random_tensor(rows * 16, rng);
  // The same model with a key/value head per query head: group g's k and v copied to both
  // of its query heads, each group now [q, k, v].
  Tensor ungrouped;
  for (int64_t t = 0; t < rows; ++t)
    for (int64_t g = 0; g < 2; ++g)
      for (int64_t r = 0; r < 2; ++r) {
        const auto at = [&](int64_t head) { return grouped.begin() + t * 16 + g * 8 + head * d; };
        ungrouped.insert(ungrouped.end(), at(r), at(r) + d);  // q
        ungrouped.insert(ungrouped.end(), at(2), at(2) + d);  // k
        ungrouped.insert(ungrouped.end(), at(3), at(3) + d);  // v
      }
  for (const bool causal : {true, false}) {
    auto c = call_of(OpKind::attention, {{rows, 16}}, {rows, 8});
    c.attrs = gqa_attrs(causal);
    const Tensor expected = tensor_op_reference(c, {grouped});
    c.inputs = {{rows, 24}};
    c.attrs.kv_heads = 4;
    expect_near(tensor_op_reference(c, {ungrouped}), expected);
  }
}

TEST(TensorOpReference, CausalMaskChangesEveryRowButEachSequencesLast) {
  std::mt19937_64 rng(2);
  const Tensor qkv = random_tensor(6 * 16, rng);
  auto c = call_of(OpKind::attention, {{6, 16}}, {6, 8});
  c.attrs = gqa_attrs(true);
  const Tensor causal = tensor_op_reference(c, {qkv});
  c.attrs.causal = false;
  const Tensor full = tensor_op_reference(c, {qkv});
  for (int64_t t = 0; t < 6; ++t)
    for (int64_t col = 0; col < 8; ++col) {
      const double a = causal[t * 8 + col], b = full[t * 8 + col];
      if (t % 3 == 2)
        EXPECT_NEAR(a, b, 1e-14) << "row " << t << " col " << col;
      else
        EXPECT_GT(std::abs(a - b), 1e-6) << "row " << t << " col " << col;
    }
}

// ---- every backward op against central differences of its forward op ----

TEST(TensorOpReference, RmsNormGradientsAreTheForwardsDerivatives) {
  std::mt19937_64 rng(3);
  const Tensor x = random_tensor(3 * 5, rng), w = random_tensor(5, rng),
               dy = random_tensor(3 * 5, rng);
  const auto forward = call_of(OpKind::rms_norm, {{3, 5}, {5}}, {3, 5});
  expect_near(tensor_op_reference(call_of(OpKind::rms_norm_dgrad, {{3, 5}, {5}, {3, 5}}, {3, 5}),
                                  {x, w, dy}),
              numeric_gradient(forward, {x, w}, 0, dy), 1e-6);
  expect_near(tensor_op_reference(call_of(OpKind::rms_norm_wgrad, {{3, 5}, {3, 5}}, {5}), {x, dy}),
              numeric_gradient(forward, {x, w}, 1, dy), 1e-6);
}

TEST(TensorOpReference, SwigluGradientsAreTheForwardsDerivatives) {
  std::mt19937_64 rng(4);
  Tensor gate = random_tensor(2 * 4, rng), up = random_tensor(2 * 4, rng),
         dy = random_tensor(2 * 4, rng);
  for (double& g : gate) g *= 4;  // reach σ's tails, not only its linear middle
  const auto forward = call_of(OpKind::swiglu, {{2, 4}, {2, 4}}, {2, 4});
  expect_near(
      tensor_op_reference(call_of(OpKind::swiglu_dgrad_gate, {{2, 4}, {2, 4}, {2, 4}}, {2, 4}),
                          {gate, up, dy}),
      numeric_gradient(forward, {gate, up}, 0, dy), 1e-6);
  expect_near(
      tensor_op_reference(call_of(OpKind::swiglu_dgrad_up, {{2, 4}, {2, 4}}, {2, 4}), {gate, dy}),
      numeric_gradient(forward, {gate, up}, 1, dy), 1e-6);
}

TEST(TensorOpReference, GeluGradientIsTheForwardsDerivative) {
  std::mt19937_64 rng(5);
  Tensor x = random_tensor(2 * 6, rng);
  const Tensor dy = random_tensor(2 * 6, rng);
  for (double& e : x) e *= 4;
  expect_near(tensor_op_reference(call_of(OpKind::gelu_dgrad, {{2, 6}, {2, 6}}, {2, 6}), {x, dy}),
              numeric_gradient(call_of(OpKind::gelu, {{2, 6}}, {2, 6}), {x}, 0, dy), 1e-6);
}

TEST(TensorOpReference, AttentionGradientIsTheForwardsDerivative) {
  std::mt19937_64 rng(6);
  const Tensor qkv = random_tensor(6 * 16, rng), dout = random_tensor(6 * 8, rng);
  for (const bool causal : {true, false}) {
    auto forward = call_of(OpKind::attention, {{6, 16}}, {6, 8});
    forward.attrs = gqa_attrs(causal);
    const Tensor out = tensor_op_reference(forward, {qkv});
    auto backward = call_of(OpKind::attention_dgrad, {{6, 16}, {6, 8}, {6, 8}}, {6, 16});
    backward.attrs = forward.attrs;
    expect_near(tensor_op_reference(backward, {qkv, out, dout}),
                numeric_gradient(forward, {qkv}, 0, dout), 1e-6);
  }
}

TEST(TensorOpReference, EmbeddingWgradIsTheLookupsDerivative) {
  // The lookup is linear in the table, so the differences are exact up to rounding.
  std::mt19937_64 rng(7);
  const int64_t vocab = 5, rows = 12;
  const Tensor table = random_tensor(vocab * 3, rng), dy = random_tensor(rows * 3, rng);
  auto forward = call_of(OpKind::embedding, {{vocab, 3}}, {rows, 3});
  forward.vocab = vocab;
  forward.row_offset = 7;
  forward.attrs.rows = rows;
  auto backward = call_of(OpKind::embedding_wgrad, {{rows, 3}}, {vocab, 3});
  backward.vocab = vocab;
  backward.row_offset = 7;
  backward.attrs.rows = vocab;
  expect_near(tensor_op_reference(backward, {dy}), numeric_gradient(forward, {table}, 0, dy), 1e-6);
}

TEST(TensorOpReference, CrossEntropyGradientIsTheLossDerivative) {
  std::mt19937_64 rng(8);
  const Tensor logits = random_tensor(4 * 6, rng);
  const double dloss = 0.7;
  auto forward = call_of(OpKind::cross_entropy, {{4, 6}}, {});
  forward.vocab = 6;
  forward.row_offset = 3;
  forward.total_rows = 10;
  auto stats = forward;
  stats.op = OpKind::cross_entropy_stats;
  stats.output = {4, 2};
  const Tensor row_stats = tensor_op_reference(stats, {logits});
  auto backward = forward;
  backward.op = OpKind::cross_entropy_dgrad;
  backward.inputs = {{4, 6}, {4, 2}, {}};
  backward.output = {4, 6};
  expect_near(tensor_op_reference(backward, {logits, row_stats, {dloss}}),
              numeric_gradient(forward, {logits}, 0, {dloss}), 1e-6);
}

// ---- what sharding relies on ----

TEST(TensorOpReference, RowwiseOpsOnARowSplitAreTheWholesRows) {
  std::mt19937_64 rng(9);
  const Tensor x = random_tensor(5 * 4, rng), w = random_tensor(4, rng),
               up = random_tensor(5 * 4, rng), dy = random_tensor(5 * 4, rng);
  const Tensor norm = tensor_op_reference(call_of(OpKind::rms_norm, {{5, 4}, {4}}, {5, 4}), {x, w});
  const Tensor swiglu =
      tensor_op_reference(call_of(OpKind::swiglu, {{5, 4}, {5, 4}}, {5, 4}), {x, up});
  const Tensor wgrad =
      tensor_op_reference(call_of(OpKind::rms_norm_wgrad, {{5, 4}, {5, 4}}, {4}), {x, dy});
  Tensor wgrad_sum(4);
  for (const auto& [first, count] : {std::pair{0, 2}, std::pair{2, 3}}) {
    const Tensor xs = rows_of(x, 4, first, count);
    EXPECT_EQ(
        tensor_op_reference(call_of(OpKind::rms_norm, {{count, 4}, {4}}, {count, 4}), {xs, w}),
        rows_of(norm, 4, first, count));
    EXPECT_EQ(tensor_op_reference(call_of(OpKind::swiglu, {{count, 4}, {count, 4}}, {count, 4}),
                                  {xs, rows_of(up, 4, first, count)}),
              rows_of(swiglu, 4, first, count));
    // The weight's gradient is a partial sum over rows: the pieces add up to the whole.
    wgrad_sum = sum(wgrad_sum, tensor_op_reference(
                                   call_of(OpKind::rms_norm_wgrad, {{count, 4}, {count, 4}}, {4}),
                                   {xs, rows_of(dy, 4, first, count)}));
  }
  expect_near(wgrad_sum, wgrad);
}

TEST(TensorOpReference, AttentionOnWholeSequencesOrWholeGroupsIsTheWholesSlice) {
  std::mt19937_64 rng(10);
  const int64_t rows = 12;  // 4 sequences of 3
  const Tensor qkv = random_tensor(rows * 16, rng), dout = random_tensor(rows * 8, rng);
  auto c = call_of(OpKind::attention, {{rows, 16}}, {rows, 8});
  c.attrs = gqa_attrs(true);
  const Tensor out = tensor_op_reference(c, {qkv});
  auto b = call_of(OpKind::attention_dgrad, {{rows, 16}, {rows, 8}, {rows, 8}}, {rows, 16});
  b.attrs = c.attrs;
  const Tensor dqkv = tensor_op_reference(b, {qkv, out, dout});

  // Row pieces of whole sequences: rows [0, 3) and [3, 12).
  for (const auto& [first, count] : {std::pair{0, 3}, std::pair{3, 9}}) {
    c.inputs = {{count, 16}};
    c.output = {count, 8};
    EXPECT_EQ(tensor_op_reference(c, {rows_of(qkv, 16, first, count)}),
              rows_of(out, 8, first, count));
  }
  // Column pieces of whole groups: group g is qkv columns [8g, 8g + 8), output [4g, 4g + 4).
  for (int64_t g = 0; g < 2; ++g) {
    c.inputs = {{rows, 8}};
    c.output = {rows, 4};
    const Tensor qkv_piece = cols_of(qkv, 16, 8 * g, 8);
    EXPECT_EQ(tensor_op_reference(c, {qkv_piece}), cols_of(out, 8, 4 * g, 4));
    b.inputs = {{rows, 8}, {rows, 4}, {rows, 4}};
    b.output = {rows, 8};
    EXPECT_EQ(
        tensor_op_reference(b, {qkv_piece, cols_of(out, 8, 4 * g, 4), cols_of(dout, 8, 4 * g, 4)}),
        cols_of(dqkv, 16, 8 * g, 8));
  }
}

TEST(TensorOpReference, EmbeddingPiecesOfTheVocabularySumToTheWholeLookup) {
  std::mt19937_64 rng(11);
  const int64_t vocab = 10, rows = 16;
  const Tensor table = random_tensor(vocab * 3, rng);
  auto c = call_of(OpKind::embedding, {{vocab, 3}}, {rows, 3});
  c.vocab = vocab;
  c.attrs.rows = rows;
  const Tensor whole = tensor_op_reference(c, {table});
  Tensor pieces(rows * 3);
  for (const auto& [first, count] : {std::pair{0, 4}, std::pair{4, 6}}) {
    c.inputs = {{count, 3}};
    c.vocab_offset = first;
    pieces = sum(pieces, tensor_op_reference(c, {rows_of(table, 3, first, count)}));
  }
  EXPECT_EQ(pieces, whole);
}

TEST(TensorOpReference, TokenSplitPiecesOfEmbeddingAndLossAddUpToTheWhole) {
  std::mt19937_64 rng(12);
  const int64_t vocab = 6, rows = 9;
  const Tensor table = random_tensor(vocab * 2, rng), dy = random_tensor(rows * 2, rng),
               logits = random_tensor(rows * vocab, rng);
  auto lookup = call_of(OpKind::embedding, {{vocab, 2}}, {rows, 2});
  auto wgrad = call_of(OpKind::embedding_wgrad, {{rows, 2}}, {vocab, 2});
  auto loss = call_of(OpKind::cross_entropy, {{rows, vocab}}, {});
  auto dlogits =
      call_of(OpKind::cross_entropy_dgrad, {{rows, vocab}, {rows, 2}, {}}, {rows, vocab});
  auto stats = call_of(OpKind::cross_entropy_stats, {{rows, vocab}}, {rows, 2});
  stats.vocab = vocab;
  const Tensor row_stats = tensor_op_reference(stats, {logits});
  for (TensorOpCall* c : {&lookup, &wgrad, &loss, &dlogits}) {
    c->vocab = vocab;
    c->total_rows = rows;
  }
  lookup.attrs.rows = rows;
  wgrad.attrs.rows = vocab;
  const Tensor whole_lookup = tensor_op_reference(lookup, {table});
  const Tensor whole_wgrad = tensor_op_reference(wgrad, {dy});
  const double whole_loss = tensor_op_reference(loss, {logits})[0];
  const Tensor whole_dlogits = tensor_op_reference(dlogits, {logits, row_stats, {1.5}});

  Tensor wgrad_sum(vocab * 2);
  double loss_sum = 0;
  for (const auto& [first, count] : {std::pair{0, 4}, std::pair{4, 5}}) {
    for (TensorOpCall* c : {&lookup, &wgrad, &loss, &dlogits}) c->row_offset = first;
    lookup.output = {count, 2};
    EXPECT_EQ(tensor_op_reference(lookup, {table}), rows_of(whole_lookup, 2, first, count));
    wgrad.inputs = {{count, 2}};
    wgrad_sum = sum(wgrad_sum, tensor_op_reference(wgrad, {rows_of(dy, 2, first, count)}));
    loss.inputs = {{count, vocab}};
    loss_sum += tensor_op_reference(loss, {rows_of(logits, vocab, first, count)})[0];
    dlogits.inputs = {{count, vocab}, {count, 2}, {}};
    dlogits.output = {count, vocab};
    EXPECT_EQ(tensor_op_reference(dlogits, {rows_of(logits, vocab, first, count),
                                            rows_of(row_stats, 2, first, count),
                                            {1.5}}),
              rows_of(whole_dlogits, vocab, first, count));
  }
  expect_near(wgrad_sum, whole_wgrad);
  EXPECT_NEAR(loss_sum, whole_loss, 1e-12);
}

// ---- errors ----

TEST(TensorOpReference, WrongSizesNameTheOpAndTheInput) {
  const auto e = thrown<InvalidArgument>([] {
    tensor_op_reference(call_of(OpKind::rms_norm_dgrad, {{2, 3}, {3}, {2, 3}}, {2, 3}),
                        {Tensor(6), Tensor(3), Tensor(5)});
  });
  EXPECT_THAT(e.message(), HasSubstr("rms_norm_dgrad"));
  EXPECT_THAT(e.message(), HasSubstr("'dy'"));
  EXPECT_THAT(e.message(), HasSubstr("5 values"));

  EXPECT_THROW(tensor_op_reference(call_of(OpKind::add, {{3}, {3}}, {3}), {Tensor(3)}),
               InvalidArgument);
  EXPECT_THROW(tensor_op_reference(call_of(OpKind::gelu, {{2, 3}}, {3, 2}), {Tensor(6)}),
               InvalidArgument);
}

TEST(TensorOpReference, RefusesANonTensorOp) {
  const auto e = thrown<InvalidArgument>([] {
    tensor_op_reference(call_of(OpKind::mm, {{2, 2}, {2, 2}}, {2, 2}), {Tensor(4), Tensor(4)});
  });
  EXPECT_THAT(e.message(), HasSubstr("'mm' is not a tensor op"));
}

TEST(TensorOpReference, RefusesShapesTheOpCannotTake) {
  // A qkv piece 6 columns wide is not whole groups of (4/2 + 2) · 2 = 8.
  auto attention = call_of(OpKind::attention, {{3, 6}}, {3, 4});
  attention.attrs = gqa_attrs(true);
  EXPECT_THAT(
      thrown<InvalidArgument>([&] { tensor_op_reference(attention, {Tensor(18)}); }).message(),
      HasSubstr("attention"));
  // Logits narrower than the vocabulary the labels are drawn from; no rows to average over.
  auto loss = call_of(OpKind::cross_entropy, {{2, 3}}, {});
  loss.vocab = 4;
  loss.total_rows = 2;
  EXPECT_THROW(tensor_op_reference(loss, {Tensor(6)}), InvalidArgument);
  loss.vocab = 3;
  loss.total_rows = 0;
  EXPECT_THROW(tensor_op_reference(loss, {Tensor(6)}), InvalidArgument);
  // An embedding with no vocabulary to draw ids from.
  auto lookup = call_of(OpKind::embedding, {{3, 2}}, {4, 2});
  EXPECT_THROW(tensor_op_reference(lookup, {Tensor(6)}), InvalidArgument);
}

}  // namespace
}  // namespace symmesh
