// The single-mesh-dim rules generated from an einsum equation, in DTensor's order
// (docs/dtensor-strategies.md §1). Expected lists are written out by hand from
// the reference; the order matters because it decides ties.
#include "strategies/einsum_rules.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/strategies/strategy_test_support.hpp"

namespace symmesh::strategies {
namespace {

using ::testing::ElementsAre;
using testing::pl;
using testing::rule_texts;

std::vector<std::string> rules_of(std::string_view equation, bool any_input_sharded) {
  return rule_texts(einsum_single_dim_rules(parse_einsum(equation), any_input_sharded));
}

TEST(ParseEinsum, SplitsInputsAndOutput) {
  const auto eq = parse_einsum("bmk,bkn->bmn");
  EXPECT_EQ(eq.lhs, "bmk");
  EXPECT_EQ(eq.rhs, "bkn");
  EXPECT_EQ(eq.out, "bmn");
}

TEST(ParseEinsum, RejectsMalformedEquations) {
  for (const char* bad : {
           "mkkn->mn",      // no comma: one input
           "mk,kn",         // no arrow
           "mk,kn,nj->mj",  // three inputs
           "mk->mn,kn",     // the comma sits in the output
           "m1,kn->mn",     // a digit is not a dim letter
           "mm,kn->mn",     // a letter twice in one tensor
           "mk,kn->mm",     // ... also in the output
           "mk,kn->mz",     // output letter in no input
           "mk, kn->mn",    // spaces are not dims
       }) {
    EXPECT_THROW(parse_einsum(bad), InvalidArgument) << bad;
  }
}

TEST(EinsumRules, MmHasEightRulesInDTensorOrder) {
  // R; contracting k; lhs-only m; rhs-only n; linearity (sum, avg) x (lhs, rhs).
  EXPECT_THAT(rules_of("mk,kn->mn", true),
              ElementsAre("[R | R | R]", "[P(sum) | S(1) | S(0)]", "[S(0) | S(0) | R]",
                          "[S(1) | R | S(1)]", "[P(sum) | P(sum) | R]", "[P(sum) | R | P(sum)]",
                          "[P(avg) | P(avg) | R]", "[P(avg) | R | P(avg)]"));
}

TEST(EinsumRules, BmmHasNineRulesInDTensorOrder) {
  EXPECT_THAT(
      rules_of("bmk,bkn->bmn", true),
      ElementsAre("[R | R | R]", "[S(0) | S(0) | S(0)]", "[P(sum) | S(2) | S(1)]",
                  "[S(1) | S(1) | R]", "[S(2) | R | S(2)]", "[P(sum) | P(sum) | R]",
                  "[P(sum) | R | P(sum)]", "[P(avg) | P(avg) | R]", "[P(avg) | R | P(avg)]"));
}

TEST(EinsumRules, WithoutShardedInputsOnlyReplicateAndLinearityRemain) {
  // DTensor fills shard placeholders with the shard kinds the inputs use; none → dropped.
  EXPECT_THAT(rules_of("mk,kn->mn", false),
              ElementsAre("[R | R | R]", "[P(sum) | P(sum) | R]", "[P(sum) | R | P(sum)]",
                          "[P(avg) | P(avg) | R]", "[P(avg) | R | P(avg)]"));
  EXPECT_EQ(rules_of("bmk,bkn->bmn", false).size(), 5u);
}

TEST(EinsumRules, DimsOfOneCategoryFollowSortedLetterOrder) {
  // Batch dims 'a' and 'b': 'a' first although it sits second in the tensors.
  const auto rules = rules_of("bamk,bakn->bamn", true);
  ASSERT_GE(rules.size(), 3u);
  EXPECT_EQ(rules[1], "[S(1) | S(1) | S(1)]");  // a
  EXPECT_EQ(rules[2], "[S(0) | S(0) | S(0)]");  // b
}

TEST(EinsumRules, OutputIndicesComeFromTheOutputLetters) {
  // A transposed output: m is output dim 1, n is output dim 0.
  EXPECT_THAT(rules_of("mk,kn->nm", true),
              ElementsAre("[R | R | R]", "[P(sum) | S(1) | S(0)]", "[S(1) | S(0) | R]",
                          "[S(0) | R | S(1)]", "[P(sum) | P(sum) | R]", "[P(sum) | R | P(sum)]",
                          "[P(avg) | P(avg) | R]", "[P(avg) | R | P(avg)]"));
}

TEST(EinsumRules, ContractingRuleIsPartialSum) {
  const auto rules = einsum_single_dim_rules(parse_einsum("mk,kn->mn"), true);
  ASSERT_TRUE(rules[1][0].is_partial());
  EXPECT_EQ(rules[1][0].reduce_op(), ReduceOp::sum);
  EXPECT_EQ(rules[6][0], pl("P(avg)")[0]);
}

}  // namespace
}  // namespace symmesh::strategies
