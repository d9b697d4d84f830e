// Per-op rules: mm/bmm straight from the einsum generator, addmm/baddbmm with the bias
// placement derived from the output placement (reference §1): output dims the bias lacks or
// where the bias has size 1 → R; a shard is re-indexed into the bias; P and R are copied.
#include "strategies/op_rules.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/strategies/strategy_test_support.hpp"

namespace symmesh::strategies {
namespace {

using ::testing::ElementsAre;
using testing::pl;
using testing::problem;
using testing::rule_texts;
using testing::tensor;

Placement P(std::string_view text) {
  return pl(text)[0];
}

TEST(OpRules, MmAndBmmUseTheirEquations) {
  EXPECT_EQ(
      op_single_dim_rules(problem(OpKind::mm, {4}, {tensor({6, 8}, "S(0)"), tensor({8, 12}, "R")}))
          .size(),
      8u);
  EXPECT_EQ(op_single_dim_rules(
                problem(OpKind::bmm, {4}, {tensor({8, 6, 8}, "S(0)"), tensor({8, 8, 12}, "S(0)")}))
                .size(),
            9u);
}

TEST(OpRules, PlaceholdersDependOnWhetherAnyInputIsSharded) {
  // mm(R, R) and mm(P, R): no Shard anywhere → R + 4 linearity rules.
  EXPECT_THAT(rule_texts(op_single_dim_rules(
                  problem(OpKind::mm, {4}, {tensor({6, 8}, "R"), tensor({8, 12}, "R")}))),
              ElementsAre("[R | R | R]", "[P(sum) | P(sum) | R]", "[P(sum) | R | P(sum)]",
                          "[P(avg) | P(avg) | R]", "[P(avg) | R | P(avg)]"));
  EXPECT_EQ(op_single_dim_rules(
                problem(OpKind::mm, {4}, {tensor({6, 8}, "P(sum)"), tensor({8, 12}, "R")}))
                .size(),
            5u);
  // A shard on any mesh dim of any input keeps them, the bias included.
  EXPECT_EQ(op_single_dim_rules(
                problem(OpKind::mm, {2, 2}, {tensor({6, 8}, "R,R"), tensor({8, 12}, "R,S(1)")}))
                .size(),
            8u);
  EXPECT_EQ(op_single_dim_rules(
                problem(OpKind::addmm, {4},
                        {tensor({12, 4}, "S(0)"), tensor({12, 8}, "R"), tensor({8, 4}, "R")}))
                .size(),
            8u);
}

TEST(OpRules, AddmmWithVectorBias) {
  // out (12,4), bias (4,): out dim 0 is broadcast (bias lacks it) → R; out dim 1 → bias S(0).
  const auto rules = op_single_dim_rules(problem(
      OpKind::addmm, {4}, {tensor({4}, "R"), tensor({12, 8}, "S(1)"), tensor({8, 4}, "S(0)")}));
  EXPECT_THAT(rule_texts(rules),
              ElementsAre("[R | R | R | R]", "[P(sum) | P(sum) | S(1) | S(0)]",
                          "[S(0) | R | S(0) | R]", "[S(1) | S(0) | R | S(1)]",
                          "[P(sum) | P(sum) | P(sum) | R]", "[P(sum) | P(sum) | R | P(sum)]",
                          "[P(avg) | P(avg) | P(avg) | R]", "[P(avg) | P(avg) | R | P(avg)]"));
}

// Bias placements of the rules with a Shard output: (rule 2: out S(0), rule 3: out S(1)).
std::pair<std::string, std::string> addmm_bias_for_shards(Shape bias) {
  const auto rules = op_single_dim_rules(problem(
      OpKind::addmm, {2}, {tensor(bias, "R"), tensor({6, 8}, "S(0)"), tensor({8, 4}, "R")}));
  return {to_string(rules[2][1]), to_string(rules[3][1])};
}

TEST(OpRules, AddmmBiasShapes) {
  using Pair = std::pair<std::string, std::string>;
  EXPECT_EQ(addmm_bias_for_shards({4}), Pair("R", "S(0)"));        // (n,)
  EXPECT_EQ(addmm_bias_for_shards({1, 4}), Pair("R", "S(1)"));     // (1,n): size-1 row
  EXPECT_EQ(addmm_bias_for_shards({6, 4}), Pair("S(0)", "S(1)"));  // (m,n)
  EXPECT_EQ(addmm_bias_for_shards({6, 1}), Pair("S(0)", "R"));     // (m,1): size-1 column
  EXPECT_EQ(addmm_bias_for_shards({1}), Pair("R", "R"));           // (1,): a scalar-like bias
}

// Bias placements of baddbmm's rules with Shard outputs S(0), S(1), S(2) (rules 1, 3, 4).
std::vector<std::string> baddbmm_bias_for_shards(Shape bias) {
  const auto rules = op_single_dim_rules(
      problem(OpKind::baddbmm, {2},
              {tensor(bias, "R"), tensor({4, 6, 8}, "S(0)"), tensor({4, 8, 10}, "S(0)")}));
  EXPECT_EQ(to_string(rules[1][0]), "S(0)");
  EXPECT_EQ(to_string(rules[3][0]), "S(1)");
  EXPECT_EQ(to_string(rules[4][0]), "S(2)");
  return {to_string(rules[1][1]), to_string(rules[3][1]), to_string(rules[4][1])};
}

TEST(OpRules, BaddbmmBiasShapes) {
  EXPECT_THAT(baddbmm_bias_for_shards({10}), ElementsAre("R", "R", "S(0)"));
  EXPECT_THAT(baddbmm_bias_for_shards({4, 1, 10}), ElementsAre("S(0)", "R", "S(2)"));
  EXPECT_THAT(baddbmm_bias_for_shards({1, 6, 10}), ElementsAre("R", "S(1)", "S(2)"));
  EXPECT_THAT(baddbmm_bias_for_shards({6, 10}), ElementsAre("R", "S(0)", "S(1)"));
  EXPECT_THAT(baddbmm_bias_for_shards({4, 6, 10}), ElementsAre("S(0)", "S(1)", "S(2)"));
}

TEST(OpRules, BiasCopiesPartialAndReplicate) {
  for (const char* p : {"R", "P(sum)", "P(avg)"})
    EXPECT_EQ(to_string(bias_placement(P(p), {6, 4}, {4})), p);
}

TEST(OpRules, BiasDimOfSizeOneIsReplicateEvenWhenTheOutputDimIsOne) {
  // DTensor maps every size-1 bias dim to "broadcast" (R) before looking at the output, so an
  // output of width 1 sharded on dim 1 still gives the bias R, not S.
  EXPECT_EQ(to_string(bias_placement(P("S(1)"), {5, 1}, {1})), "R");
  EXPECT_EQ(to_string(bias_placement(P("S(1)"), {5, 1}, {5, 1})), "R");
  EXPECT_EQ(to_string(bias_placement(P("S(0)"), {1, 4}, {1, 4})), "R");
  EXPECT_EQ(to_string(bias_placement(P("S(0)"), {5, 1}, {5, 1})), "S(0)");
  EXPECT_EQ(to_string(bias_placement(P("S(2)"), {3, 5, 1}, {1})), "R");
  EXPECT_EQ(to_string(bias_placement(P("S(1)"), {3, 5, 1}, {5, 1})), "S(0)");
}

// linear(a, b) is mm(a, bᵀ) (torch.nn.functional.linear), and DTensor's t() swaps S(0) and
// S(1): linear's rules are mm's on the transposed weight, rule for rule in the same order.
TEST(OpRules, LinearIsMmOnTheTransposedWeight) {
  const auto swapped = [](Placement p) {
    return p.is_shard() ? Placement::shard(1 - p.shard_dim()) : p;
  };
  for (const char* a : {"S(0)", "R"}) {
    const auto linear = op_single_dim_rules(
        problem(OpKind::linear, {4}, {tensor({6, 8}, a), tensor({12, 8}, "R")}));
    const auto mm =
        op_single_dim_rules(problem(OpKind::mm, {4}, {tensor({6, 8}, a), tensor({8, 12}, "R")}));
    ASSERT_EQ(linear.size(), mm.size()) << a;
    for (size_t i = 0; i < mm.size(); ++i) {
      EXPECT_EQ(linear[i][0], mm[i][0]) << "rule " << i;
      EXPECT_EQ(linear[i][1], mm[i][1]) << "rule " << i;
      EXPECT_EQ(linear[i][2], swapped(mm[i][2])) << "rule " << i;
    }
  }
}

// A linear's bias is its last input; its placement follows the output's last dim.
TEST(OpRules, LinearBiasComesLast) {
  const auto rules = op_single_dim_rules(problem(
      OpKind::linear, {4}, {tensor({2, 6, 8}, "S(0)"), tensor({12, 8}, "R"), tensor({12}, "R")}));
  EXPECT_THAT(rule_texts(rules), ::testing::Contains("[S(2) | R | S(0) | S(0)]"));
  EXPECT_THAT(rule_texts(rules), ::testing::Contains("[S(0) | S(0) | R | R]"));
  EXPECT_THAT(rule_texts(rules), ::testing::Contains("[P(sum) | S(2) | S(1) | P(sum)]"));
}

}  // namespace
}  // namespace symmesh::strategies
