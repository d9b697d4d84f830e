// End-to-end choices under the `dtensor` cost model: every worked case of reference §5
// (from PyTorch's own tests), then cases derived by hand from the reference's formulas, with
// the deciding arithmetic in the comments. AG/AR below are the reference formulas; sizes are
// fp32 bytes; "intra" = 87.7 GB/s, 0.6 µs/hop; "inter" = 19.294 GB/s, 2.7 µs/hop.
#include <gtest/gtest.h>

#include "strategies/plan.hpp"
#include "tests/strategies/strategy_test_support.hpp"

namespace symmesh::strategies {
namespace {

using namespace testing;

Plan plan_for(const OpProblem& p, int devices_per_host) {
  return build_plan(p, *make_cost_model("dtensor", {devices_per_host}));
}

void expect_choice(const Plan& plan, std::string_view out, std::vector<std::string_view> inputs) {
  const Candidate& c = plan.chosen_candidate();
  EXPECT_EQ(to_string(c.output_placements), to_string(pl(out))) << "candidate " << c.index;
  ASSERT_EQ(c.input_placements.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i)
    EXPECT_EQ(to_string(c.input_placements[i]), to_string(pl(inputs[i])))
        << "input " << i << ", candidate " << c.index;
}

// ---- reference §5 ----

TEST(WorkedCases, Mm_S0xR_On4) {
  const auto p = problem(OpKind::mm, {4}, {tensor({6, 8}, "S(0)"), tensor({8, 12}, "R")});
  expect_choice(plan_for(p, 8), "S(0)", {"S(0)", "R"});
}

TEST(WorkedCases, Mm_RxS1_On4) {
  const auto p = problem(OpKind::mm, {4}, {tensor({6, 8}, "R"), tensor({8, 12}, "S(1)")});
  expect_choice(plan_for(p, 8), "S(1)", {"R", "S(1)"});
}

TEST(WorkedCases, Mm_S1xS0_On4) {
  const auto p = problem(OpKind::mm, {4}, {tensor({6, 8}, "S(1)"), tensor({8, 12}, "S(0)")});
  expect_choice(plan_for(p, 8), "P(sum)", {"S(1)", "S(0)"});
}

TEST(WorkedCases, Bmm_S0xS0_On4) {
  const auto p = problem(OpKind::bmm, {4}, {tensor({8, 6, 8}, "S(0)"), tensor({8, 8, 12}, "S(0)")});
  expect_choice(plan_for(p, 8), "S(0)", {"S(0)", "S(0)"});
}

TEST(WorkedCases, Bmm_S2xS1_On4) {
  const auto p = problem(OpKind::bmm, {4}, {tensor({8, 6, 8}, "S(2)"), tensor({8, 8, 12}, "S(1)")});
  expect_choice(plan_for(p, 8), "P(sum)", {"S(2)", "S(1)"});
}

TEST(WorkedCases, Mm_ThreeRowsCannotSplitFourWays) {
  // [S0,S0,R] is filtered (3 < 4). Every device its own host: AG inter, n = 4.
  // a S0→R costs AG(48 B) = 6.6 + 3·2.7 + ε; [R,R,R] (index 0) ties with [S1,R,S1] (3),
  // [P,R,P] (5) and [Pavg,R,Pavg] (7), which all gather a and touch b for free; [P,S1,S0]
  // costs AG(12 B)+1 and linearity on a is S→P = ∞. First minimum: index 0.
  const auto p = problem(OpKind::mm, {4}, {tensor({3, 4}, "S(0)"), tensor({4, 4}, "R")});
  const Plan plan = plan_for(p, 1);
  expect_choice(plan, "R", {"R", "R"});
  EXPECT_EQ(plan.chosen_candidate().index, 0);
  EXPECT_EQ(plan.kept_count(), 7);
}

TEST(WorkedCases, Mm_PartialsOnTwoByTwoStayPut) {
  const auto p =
      problem(OpKind::mm, {2, 2}, {tensor({16, 12}, "P(sum),R"), tensor({12, 20}, "R,P(sum)")});
  const Plan plan = plan_for(p, 8);
  expect_choice(plan, "P(sum),P(sum)", {"P(sum),R", "R,P(sum)"});
  EXPECT_TRUE(plan.redistributions.empty());
}

TEST(WorkedCases, Mm_S0RR_OnTwoByTwoByTwo) {
  const auto p =
      problem(OpKind::mm, {2, 2, 2}, {tensor({64, 32}, "S(0),R,R"), tensor({32, 64}, "R,R,R")});
  const Plan plan = plan_for(p, 8);
  expect_choice(plan, "S(0),R,R", {"S(0),R,R", "R,R,R"});
  EXPECT_EQ(plan.chosen_candidate().index, 2 * 64);
}

TEST(WorkedCases, Addmm_BiasBecomesPartial) {
  // [P | P | S1 | S0] needs only bias R→P (free) but is not "unchanged"; nothing is
  // unchanged, so the first free candidate wins.
  const auto p = problem(OpKind::addmm, {4},
                         {tensor({4}, "R"), tensor({12, 8}, "S(1)"), tensor({8, 4}, "S(0)")});
  expect_choice(plan_for(p, 8), "P(sum)", {"P(sum)", "S(1)", "S(0)"});
}

// ---- derived from the formulas ----

TEST(DerivedCases, UnevenShardsAreKept) {
  // 10 rows over 4 (3,3,3,1) and 5 batches over 3 (2,2,1): the unchanged candidate is kept.
  expect_choice(
      plan_for(problem(OpKind::mm, {4}, {tensor({10, 8}, "S(0)"), tensor({8, 12}, "R")}), 8),
      "S(0)", {"S(0)", "R"});
  expect_choice(
      plan_for(problem(OpKind::bmm, {3}, {tensor({5, 6, 8}, "S(0)"), tensor({5, 8, 12}, "S(0)")}),
               8),
      "S(0)", {"S(0)", "S(0)"});
  // 5 rows over 4 (2,2,1,0): still shardable.
  expect_choice(
      plan_for(problem(OpKind::mm, {4}, {tensor({5, 8}, "S(0)"), tensor({8, 12}, "R")}), 8), "S(0)",
      {"S(0)", "R"});
}

TEST(DerivedCases, PartialInputsStayPartial) {
  expect_choice(
      plan_for(problem(OpKind::mm, {4}, {tensor({8, 8}, "P(sum)"), tensor({8, 8}, "R")}), 8),
      "P(sum)", {"P(sum)", "R"});
  expect_choice(
      plan_for(problem(OpKind::mm, {4}, {tensor({8, 8}, "R"), tensor({8, 8}, "P(avg)")}), 8),
      "P(avg)", {"R", "P(avg)"});
}

TEST(DerivedCases, TwoPartialInputsReduceTheSmallerOne) {
  // No shard: rules R, [Ps,Ps,R], [Ps,R,Ps], [Pa,Pa,R], [Pa,R,Pa]. n = 4 intra.
  // a (64,32) = 8192 B, b (32,128) = 16384 B: AR(a) = 10.2 + 1e6·2·(8192/2^30)·3/(4·87.7)
  // = 10.3305 < AR(b) = 10.4610; [R,R,R] = both; avg rules: P(sum)→P(avg) = ∞.
  const auto p =
      problem(OpKind::mm, {4}, {tensor({64, 32}, "P(sum)"), tensor({32, 128}, "P(sum)")});
  const Plan plan = plan_for(p, 8);
  expect_choice(plan, "P(sum)", {"R", "P(sum)"});
  EXPECT_NEAR(plan.chosen_candidate().cost_us,
              ref_allreduce_us(gib(8192), 4, kIntraGbPerS, kIntraHopUs), 1e-9);
  EXPECT_NEAR(plan.chosen_candidate().cost_us, 10.330491354582382, 1e-9);
}

TEST(DerivedCases, EqualPartialsTieToTheLowerIndex) {
  // Same bytes: AR(a) == AR(b); [Ps,Ps,R] (index 1, reduce b) precedes [Ps,R,Ps] (index 2).
  const auto p = problem(OpKind::mm, {4}, {tensor({64, 64}, "P(sum)"), tensor({64, 64}, "P(sum)")});
  const Plan plan = plan_for(p, 8);
  expect_choice(plan, "P(sum)", {"P(sum)", "R"});
  EXPECT_EQ(plan.chosen_candidate().index, 1);
}

TEST(DerivedCases, SumAndAvgInputsNeverConvertIntoEachOther) {
  // a P(sum), b P(avg): [Ps,Ps,R] reduces b; [Pa,R,Pa] reduces a; the other two need
  // P(sum)↔P(avg) = ∞. a (64,32) 8192 B < b 16384 B → reduce a, output P(avg).
  expect_choice(
      plan_for(problem(OpKind::mm, {4}, {tensor({64, 32}, "P(sum)"), tensor({32, 128}, "P(avg)")}),
               8),
      "P(avg)", {"R", "P(avg)"});
  // a (64,128) 32768 B > b (128,32) 16384 B → reduce b, output P(sum).
  expect_choice(
      plan_for(problem(OpKind::mm, {4}, {tensor({64, 128}, "P(sum)"), tensor({128, 32}, "P(avg)")}),
               8),
      "P(sum)", {"P(sum)", "R"});
}

TEST(DerivedCases, SumAndAvgPartialOnOneTensorAreAllowed) {
  // (P(sum),P(avg)) × (R,R): dim 0 [Ps,Ps,R], dim 1 [Pa,Pa,R] keeps everything: free.
  const auto p =
      problem(OpKind::mm, {2, 2}, {tensor({16, 12}, "P(sum),P(avg)"), tensor({12, 20}, "R,R")});
  const Plan plan = plan_for(p, 8);
  expect_choice(plan, "P(sum),P(avg)", {"P(sum),P(avg)", "R,R"});
  EXPECT_EQ(plan.chosen_candidate().cost_us, 0.0);
}

TEST(DerivedCases, ReduceTheSmallerShardedInput) {
  // 1-D 3, one device per host (inter): a (7,5) S(0) = 140 B, b (5,4) S(1) = 80 B; no free
  // candidate. [S0,S0,R] gathers b: AG(80 B) = 6.6 + 2·2.7 + ε = 12.0026; [S1,R,S1] gathers
  // a: AG(140 B) = 12.0045; [R,R,R] both; [P,S1,S0] two all-to-alls + 2.
  const auto p = problem(OpKind::mm, {3}, {tensor({7, 5}, "S(0)"), tensor({5, 4}, "S(1)")});
  const Plan plan = plan_for(p, 1);
  expect_choice(plan, "S(0)", {"S(0)", "R"});
  EXPECT_NEAR(plan.chosen_candidate().cost_us,
              ref_allgather_us(gib(80), 3, kInterGbPerS, kInterHopUs), 1e-9);
}

TEST(DerivedCases, InterHostDimChangesTheChoice) {
  // 2x2, a (64,64) (S1,R), b (64,64) (R,S0): k is sharded on different mesh dims.
  //  index 1 (R | [P,S1,S0]): a (S1,R)→(R,S1) = AG on mesh dim 0 of 16384 B;
  //  index 8 ([P,S1,S0] | R): b (R,S0)→(S0,R) = AG on mesh dim 1 of 16384 B.
  // 8 per host: both intra: 6.6 + 0.6 + 1e6·(16384/2^30)/(2·87.7) = 7.28699 each → tie →
  // index 1. 2 per host: dim 0 is inter: 9.3 + 1e6·(16384/2^30)/(2·19.294) = 9.69543 →
  // index 8 wins. 1 per host: both inter again → tie → index 1.
  const auto p =
      problem(OpKind::mm, {2, 2}, {tensor({64, 64}, "S(1),R"), tensor({64, 64}, "R,S(0)")});
  const Plan intra = plan_for(p, 8);
  expect_choice(intra, "R,P(sum)", {"R,S(1)", "R,S(0)"});
  EXPECT_EQ(intra.chosen_candidate().index, 1);
  EXPECT_NEAR(intra.chosen_candidate().cost_us, 7.2 + 1e6 * gib(16384) / (2 * 87.7), 1e-9);

  const Plan split = plan_for(p, 2);
  expect_choice(split, "P(sum),R", {"S(1),R", "S(0),R"});
  EXPECT_EQ(split.chosen_candidate().index, 8);
  EXPECT_NEAR(split.candidates[1].cost_us, 9.3 + 1e6 * gib(16384) / (2 * 19.294), 1e-9);

  EXPECT_EQ(plan_for(p, 1).chosen_candidate().index, 1);
}

TEST(DerivedCases, ThreeDimMeshPrefersChunkingBeforeGathering) {
  // 2x2x2, a (64,128) (R,S1,R) [32768 B, local 16384], b (128,256) (S0,R,R).
  // Index 64 ([P,S1,S0] | R | R): a → (S1,R,R): dim 1 S1→R gathers 32768 B: 7.37399.
  // Index 66 (... | R | [S0,S0,R]): a → (S1,R,S0): dim 2 R→S0 first halves B to 8192,
  // then dim 1 S1→R gathers 16384 B: 7.28699 — cheaper, and first among its ties.
  const auto p = problem(OpKind::mm, {2, 2, 2},
                         {tensor({64, 128}, "R,S(1),R"), tensor({128, 256}, "S(0),R,R")});
  const Plan plan = plan_for(p, 8);
  expect_choice(plan, "P(sum),R,S(0)", {"S(1),R,S(0)", "S(0),R,R"});
  EXPECT_EQ(plan.chosen_candidate().index, 66);
  EXPECT_NEAR(plan.candidates[64].cost_us, 7.2 + 1e6 * gib(32768) / (2 * 87.7), 1e-9);
}

TEST(DerivedCases, FourDimMeshKeepsTheInputs) {
  const auto p = problem(OpKind::mm, {2, 2, 2, 2},
                         {tensor({64, 32}, "S(0),S(0),R,R"), tensor({32, 64}, "R,R,R,S(1)")});
  const Plan plan = plan_for(p, 8);
  EXPECT_EQ(plan.candidates.size(), 4096u);
  expect_choice(plan, "S(0),S(0),R,S(1)", {"S(0),S(0),R,R", "R,R,R,S(1)"});
  // Rules 2,2,0,3 → index 2·512 + 2·64 + 0·8 + 3.
  EXPECT_EQ(plan.chosen_candidate().index, 1155);
}

TEST(DerivedCases, AddmmBiasCases) {
  // Bias (m,n) sharded like the output.
  expect_choice(
      plan_for(problem(OpKind::addmm, {4},
                       {tensor({12, 4}, "S(0)"), tensor({12, 8}, "S(0)"), tensor({8, 4}, "R")}),
               8),
      "S(0)", {"S(0)", "S(0)", "R"});
  // Bias (n,) broadcast over the rows: stays R under a row-sharded output.
  expect_choice(plan_for(problem(OpKind::addmm, {4},
                                 {tensor({4}, "R"), tensor({12, 8}, "S(0)"), tensor({8, 4}, "R")}),
                         8),
                "S(0)", {"R", "S(0)", "R"});
  // Everything replicated: no placeholders, [R,R,R,R] is unchanged.
  expect_choice(plan_for(problem(OpKind::addmm, {4},
                                 {tensor({4}, "R"), tensor({12, 8}, "R"), tensor({8, 4}, "R")}),
                         8),
                "R", {"R", "R", "R"});
  // 2x2 with a partial bias: dim 0 [Ps|Ps|Ps|R] keeps bias and a; dim 1 [S1|S1|R|S1]
  // keeps b and chunks the bias for free (not unchanged) → first free: index 4·8+3 = 35.
  const Plan p2 = plan_for(
      problem(OpKind::addmm, {2, 2},
              {tensor({12, 4}, "P(sum),R"), tensor({12, 8}, "P(sum),R"), tensor({8, 4}, "R,S(1)")}),
      8);
  expect_choice(p2, "P(sum),S(1)", {"P(sum),S(1)", "P(sum),R", "R,S(1)"});
  EXPECT_EQ(p2.chosen_candidate().index, 35);
}

TEST(DerivedCases, BaddbmmBatchShardedBias) {
  const auto p =
      problem(OpKind::baddbmm, {2},
              {tensor({4, 1, 10}, "S(0)"), tensor({4, 6, 8}, "S(0)"), tensor({4, 8, 10}, "S(0)")});
  expect_choice(plan_for(p, 8), "S(0)", {"S(0)", "S(0)", "S(0)"});
}

TEST(DerivedCases, SizeOneBiasDimStaysReplicate) {
  // Mesh of one rank, addmm (4,3)@(3,1) + bias (1,): the rule sharding the output's width
  // gives the bias R (its only dim has size 1), so [S1 | R | R | S1] is the unchanged
  // candidate. Had the bias been given S(0), no candidate would be unchanged.
  const auto p =
      problem(OpKind::addmm, {1}, {tensor({1}, "R"), tensor({4, 3}, "R"), tensor({3, 1}, "S(1)")});
  const Plan plan = plan_for(p, 8);
  expect_choice(plan, "S(1)", {"R", "R", "S(1)"});
  EXPECT_TRUE(plan.redistributions.empty());
}

// ---- zero-size dims and a 0-d bias, which PyTorch accepts ----

TEST(DerivedCases, ZeroRowsCannotBeSplitButStillPayTheLatency) {
  // a 0x64 S(0) on 4 ranks of one host (intra). is_tensor_shardable drops [S0,S0,R]: a
  // target S(0) needs 0 >= 4 rows. a S0→R gathers 0 B: AG = 6.6 + 3·0.6 = 8.4 µs, the same
  // for [R,R,R] (0), [S1,R,S1] (3), [P,R,P] (5), [Pavg,R,Pavg] (7): b is R, free to chunk
  // or split. [P,S1,S0] moves a S0→S1: AG(0 B) + 1 = 9.4. First minimum: index 0.
  const auto p = problem(OpKind::mm, {4}, {tensor({0, 64}, "S(0)"), tensor({64, 32}, "R")});
  const Plan plan = plan_for(p, 8);
  expect_choice(plan, "R", {"R", "R"});
  EXPECT_EQ(plan.chosen_candidate().index, 0);
  EXPECT_EQ(plan.kept_count(), 7);
  EXPECT_NEAR(plan.candidates[0].cost_us, 8.4, 1e-12);
  EXPECT_NEAR(plan.candidates[1].cost_us, 9.4, 1e-12);
}

TEST(DerivedCases, ZeroContractionDimCannotBeSplit) {
  // a 8x0 S(1) by b 0x16 R on 4 ranks: [P,S1,S0] splits the zero-size k dim of both → out.
  // [S0,S0,R] moves a S1→S0: AG(0 B) + 1 = 9.4; [R,R,R] gathers a: 8.4 (index 0).
  const auto p = problem(OpKind::mm, {4}, {tensor({8, 0}, "S(1)"), tensor({0, 16}, "R")});
  const Plan plan = plan_for(p, 8);
  expect_choice(plan, "R", {"R", "R"});
  EXPECT_EQ(plan.kept_count(), 7);
  EXPECT_NEAR(plan.candidates[2].cost_us, 9.4, 1e-12);
}

TEST(DerivedCases, ZeroDimBiasIsReplicatedUnderAnyShardedOutput) {
  // torch.addmm(torch.tensor(1.0), a, b): a 0-d bias broadcasts over every output dim, so
  // each rule gives it R (or the output's Partial). a 8x64 S(0), b R: [S0 | R | S0 | R]
  // (index 2) keeps every input: cost 0. Nothing is filtered.
  const auto p = problem(OpKind::addmm, {4},
                         {tensor({}, "R"), tensor({8, 64}, "S(0)"), tensor({64, 32}, "R")});
  const Plan plan = plan_for(p, 8);
  expect_choice(plan, "S(0)", {"R", "S(0)", "R"});
  EXPECT_EQ(plan.chosen_candidate().index, 2);
  EXPECT_EQ(plan.kept_count(), 8);
  EXPECT_TRUE(plan.redistributions.empty());
  // The partial-sum rule [P | P | S1 | S0] gives the bias P(sum), as DTensor copies it.
  EXPECT_EQ(to_string(plan.candidates[1].input_placements[0]), "P(sum)");
}

}  // namespace
}  // namespace symmesh::strategies
