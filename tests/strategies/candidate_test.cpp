// Expansion of single-dim rules to an N-D mesh (reference §2): rules^ndim candidates, the
// last mesh dim varying fastest (index = Σ rule_d · K^(ndim-1-d)), and DTensor's filters.
#include "strategies/candidate.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/strategies/strategy_test_support.hpp"

namespace symmesh::strategies {
namespace {

using testing::pl;
using testing::problem;
using testing::tensor;

std::vector<Candidate> expand(const OpProblem& p) {
  return expand_candidates(p, op_single_dim_rules(p));
}

int kept(const std::vector<Candidate>& cs) {
  int n = 0;
  for (const auto& c : cs) n += c.kept();
  return n;
}

TEST(ExpandCandidates, CountIsRulesToTheMeshRank) {
  const auto a = tensor({64, 32}, "S(0),R,R"), b = tensor({32, 64}, "R,R,R");
  EXPECT_EQ(expand(problem(OpKind::mm, {2, 2, 2}, {a, b})).size(), 512u);  // 8^3
  EXPECT_EQ(expand(problem(OpKind::mm, {2, 2, 2, 2},
                           {tensor({64, 32}, "S(0),R,R,R"), tensor({32, 64}, "R,R,R,R")}))
                .size(),
            4096u);  // 8^4
  EXPECT_EQ(
      expand(problem(OpKind::bmm, {2, 2}, {tensor({4, 8, 8}, "S(0),R"), tensor({4, 8, 8}, "R,R")}))
          .size(),
      81u);  // 9^2
  // No shard anywhere: 5 rules, 5^2.
  EXPECT_EQ(expand(problem(OpKind::mm, {2, 2}, {tensor({8, 8}, "R,R"), tensor({8, 8}, "P(sum),R")}))
                .size(),
            25u);
}

TEST(ExpandCandidates, LastMeshDimVariesFastest) {
  const auto p =
      problem(OpKind::mm, {2, 2, 2}, {tensor({64, 32}, "S(0),R,R"), tensor({32, 64}, "R,R,R")});
  const auto rules = op_single_dim_rules(p);
  const auto cs = expand(p);
  const int K = 8;
  for (int r0 = 0; r0 < K; ++r0)
    for (int r1 = 0; r1 < K; ++r1)
      for (int r2 = 0; r2 < K; ++r2) {
        const int index = r0 * K * K + r1 * K + r2;
        const Candidate& c = cs[index];
        ASSERT_EQ(c.index, index);
        ASSERT_EQ(c.rule_per_mesh_dim, (std::vector<int>{r0, r1, r2}));
        const int rule_of_dim[3] = {r0, r1, r2};
        for (int d = 0; d < 3; ++d) {
          ASSERT_EQ(c.output_placements[d], rules[rule_of_dim[d]][0]);
          ASSERT_EQ(c.input_placements[0][d], rules[rule_of_dim[d]][1]);
          ASSERT_EQ(c.input_placements[1][d], rules[rule_of_dim[d]][2]);
        }
      }
  // Spot checks written out: index 1 = (R, R, [P,S1,S0]); index 8 = (R, [P,S1,S0], R).
  EXPECT_EQ(cs[1].output_placements, pl("R,R,P(sum)"));
  EXPECT_EQ(cs[1].input_placements[0], pl("R,R,S(1)"));
  EXPECT_EQ(cs[8].output_placements, pl("R,P(sum),R"));
  EXPECT_EQ(cs[8].input_placements[1], pl("R,S(0),R"));
  // index 128 = 2·64: mesh dim 0 takes rule 2 [S0,S0,R].
  EXPECT_EQ(cs[128].output_placements, pl("S(0),R,R"));
}

TEST(ExpandCandidates, AddmmCandidatesCarryTheBias) {
  const auto p = problem(OpKind::addmm, {2, 2},
                         {tensor({4}, "R,R"), tensor({12, 8}, "S(1),R"), tensor({8, 4}, "S(0),R")});
  const auto cs = expand(p);
  ASSERT_EQ(cs.size(), 64u);
  // index 3·8+2: dim 0 rule 3 [S1 | S0 | R | S1], dim 1 rule 2 [S0 | R | S0 | R].
  const Candidate& c = cs[26];
  EXPECT_EQ(c.output_placements, pl("S(1),S(0)"));
  EXPECT_EQ(c.input_placements[0], pl("S(0),R"));
  EXPECT_EQ(c.input_placements[1], pl("R,S(0)"));
  EXPECT_EQ(c.input_placements[2], pl("S(1),R"));
}

TEST(Shardability, SmallerThanPiecesIsDroppedUnevenIsKept) {
  const DeviceMesh m4({4});
  EXPECT_FALSE(is_shardable({3, 8}, pl("S(0)"), m4));  // 3 rows over 4
  EXPECT_TRUE(is_shardable({10, 8}, pl("S(0)"), m4));  // 10 rows over 4: 3,3,3,1
  EXPECT_TRUE(is_shardable({4, 8}, pl("S(0)"), m4));   // exactly one row each
  EXPECT_TRUE(is_shardable({3, 8}, pl("R"), m4));
  EXPECT_TRUE(is_shardable({3, 8}, pl("P(sum)"), m4));
  // A dim sharded over two mesh dims is cut into their product.
  const DeviceMesh m23({2, 3});
  EXPECT_FALSE(is_shardable({5, 8}, pl("S(0),S(0)"), m23));  // 5 < 6
  EXPECT_TRUE(is_shardable({6, 8}, pl("S(0),S(0)"), m23));
  EXPECT_TRUE(is_shardable({7, 8}, pl("S(0),S(0)"), m23));
  EXPECT_TRUE(is_shardable({5, 3}, pl("S(0),S(1)"), m23));  // 5 >= 2 and 3 >= 3
  EXPECT_FALSE(is_shardable({5, 2}, pl("S(0),S(1)"), m23));
  // A mesh dim of size 1 never drops anything.
  EXPECT_TRUE(is_shardable({1, 1}, pl("S(0),S(1)"), DeviceMesh({1, 1})));
}

TEST(ExpandCandidates, UnshardableInputsAreFilteredWithAReason) {
  // mm (3,4)@(4,4) on 4 ranks: only [S0,S0,R] cuts a's 3 rows 4 ways.
  const auto cs = expand(problem(OpKind::mm, {4}, {tensor({3, 4}, "S(0)"), tensor({4, 4}, "R")}));
  ASSERT_EQ(cs.size(), 8u);
  for (const auto& c : cs) EXPECT_EQ(c.kept(), c.index != 2) << c.index;
  EXPECT_EQ(cs[2].filtered.rfind("a ", 0), 0u) << cs[2].filtered;  // names the input
  // 10 rows over 4 are fine.
  EXPECT_EQ(kept(expand(problem(OpKind::mm, {4}, {tensor({10, 4}, "S(0)"), tensor({4, 4}, "R")}))),
            8);
}

TEST(ExpandCandidates, ProductOfMeshDimsDecidesShardability) {
  // a is (5,6) on 2x3: [S0,S0,R] on both mesh dims cuts 5 rows 6 ways → dropped; on one
  // mesh dim only → kept.
  const auto p = problem(OpKind::mm, {2, 3}, {tensor({5, 6}, "S(0),R"), tensor({6, 6}, "R,R")});
  const auto cs = expand(p);
  EXPECT_FALSE(cs[2 * 8 + 2].kept());
  EXPECT_TRUE(cs[2 * 8 + 0].kept());
  EXPECT_TRUE(cs[0 * 8 + 2].kept());
}

TEST(ExpandCandidates, SumAndAvgPartialInOneTensorAreKept) {
  // dim 0 [P(sum),P(sum),R], dim 1 [P(avg),P(avg),R]: a is (P(sum),P(avg)); DTensor allows
  // sum with avg, so nothing is filtered (the rule list has 5 entries: no shard anywhere).
  const auto cs = expand(
      problem(OpKind::mm, {2, 2}, {tensor({16, 12}, "P(sum),P(avg)"), tensor({12, 20}, "R,R")}));
  ASSERT_EQ(cs.size(), 25u);
  EXPECT_EQ(kept(cs), 25);
  const Candidate& c = cs[1 * 5 + 3];
  EXPECT_EQ(c.input_placements[0], pl("P(sum),P(avg)"));
  EXPECT_EQ(c.output_placements, pl("P(sum),P(avg)"));
}

TEST(ExpandCandidates, TooManyCandidatesIsAnError) {
  // 8^7 = 2,097,152 > 1,000,000.
  const auto p = problem(OpKind::mm, {1, 1, 1, 1, 1, 1, 1},
                         {tensor({8, 8}, "S(0),R,R,R,R,R,R"), tensor({8, 8}, "R,R,R,R,R,R,R")});
  EXPECT_THROW(expand(p), InvalidArgument);
}

}  // namespace
}  // namespace symmesh::strategies
