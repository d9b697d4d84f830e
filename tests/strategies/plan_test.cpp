// The Plan built for the chosen candidate: which inputs move and how (steps, bytes, per-step
// cost summing to the candidate's cost), the local matmul of every rank (torch.chunk
// pieces, uneven and empty ones included) and the errors for malformed problems.
#include "strategies/plan.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/strategies/strategy_test_support.hpp"

namespace symmesh::strategies {
namespace {

using namespace testing;

Plan plan_for(const OpProblem& p, int devices_per_host = 8) {
  return build_plan(p, *make_cost_model("dtensor", {devices_per_host}));
}

void expect_steps_sum_to_input_cost(const Plan& plan) {
  for (const auto& r : plan.redistributions) {
    ASSERT_EQ(r.step_cost_us.size(), r.redistribution.steps.size());
    double sum = 0;
    for (double c : r.step_cost_us) sum += c;
    EXPECT_NEAR(sum, plan.chosen_candidate().input_cost_us[r.input], 1e-12) << "input " << r.input;
  }
}

TEST(Plan, GatherOfARowShardedInput) {
  // Reference §5 row 6: a (3,4) S(0) over 4 ranks, one device per host → all R.
  const Plan plan =
      plan_for(problem(OpKind::mm, {4}, {tensor({3, 4}, "S(0)"), tensor({4, 4}, "R")}), 1);
  EXPECT_EQ(plan.cost_model, "dtensor");
  EXPECT_EQ(plan.candidates.size(), 8u);
  ASSERT_EQ(plan.redistributions.size(), 1u);  // b is already R
  const auto& r = plan.redistributions[0];
  EXPECT_EQ(r.input, 0);
  ASSERT_EQ(r.redistribution.steps.size(), 1u);
  const auto& step = r.redistribution.steps[0];
  EXPECT_EQ(step.mesh_dim, 0);
  EXPECT_EQ(step.collective, CollectiveKind::all_gather);
  // Padded ring all-gather: chunk ceil(3/4) = 1 row of 4 fp32 = 16 B; 3 peers → 48 B sent;
  // gathered buffer 4·16 = 64 B.
  EXPECT_EQ(step.bytes, 48);
  EXPECT_EQ(step.buffer_bytes, 64);
  // DTensor's price: 48 B total / 4 shards, gathered back to 48 B, inter-host, n = 4.
  ASSERT_EQ(r.step_cost_us.size(), 1u);
  EXPECT_NEAR(r.step_cost_us[0], ref_allgather_us(gib(48), 4, kInterGbPerS, kInterHopUs), 1e-12);
  expect_steps_sum_to_input_cost(plan);
}

TEST(Plan, MultiStepRedistributionOnThreeDims) {
  // a (64,128) (R,S1,R) → (S1,R,S0): dim 2 R→S0 (chunk), dim 1 S1→R (gather), dim 0 R→S1.
  const Plan plan = plan_for(problem(
      OpKind::mm, {2, 2, 2}, {tensor({64, 128}, "R,S(1),R"), tensor({128, 256}, "S(0),R,R")}));
  ASSERT_EQ(plan.redistributions.size(), 1u);
  const auto& r = plan.redistributions[0];
  ASSERT_EQ(r.redistribution.steps.size(), 3u);
  const auto& s = r.redistribution.steps;
  EXPECT_EQ(s[0].mesh_dim, 2);
  EXPECT_EQ(s[0].collective, CollectiveKind::local_chunk);
  EXPECT_EQ(s[1].mesh_dim, 1);
  EXPECT_EQ(s[1].collective, CollectiveKind::all_gather);
  EXPECT_EQ(s[2].mesh_dim, 0);
  EXPECT_EQ(s[2].collective, CollectiveKind::local_chunk);
  // Before the gather each rank holds (R,S1,S0): 32 rows x 64 cols x 4 B = 8192 B; one peer.
  EXPECT_EQ(s[1].bytes, 8192);
  EXPECT_EQ(r.redistribution.total_bytes(), 8192);
  EXPECT_EQ(r.step_cost_us[0], 0.0);
  EXPECT_NEAR(r.step_cost_us[1], ref_allgather_us(gib(16384), 2, kIntraGbPerS, kIntraHopUs), 1e-12);
  EXPECT_EQ(r.step_cost_us[2], 0.0);
  expect_steps_sum_to_input_cost(plan);
}

TEST(Plan, AllReduceOfAPartialInput) {
  // a (64,32) P(sum) is all-reduced (the smaller one): ring all-reduce of 8192 B over 4:
  // 2·3·ceil(8192/4) = 12288 B.
  const Plan plan =
      plan_for(problem(OpKind::mm, {4}, {tensor({64, 32}, "P(sum)"), tensor({32, 128}, "P(sum)")}));
  ASSERT_EQ(plan.redistributions.size(), 1u);
  const auto& step = plan.redistributions[0].redistribution.steps.at(0);
  EXPECT_EQ(step.collective, CollectiveKind::all_reduce);
  EXPECT_EQ(step.bytes, 12288);
  EXPECT_EQ(step.buffer_bytes, 8192);
  expect_steps_sum_to_input_cost(plan);
}

TEST(Plan, FreeChangesAreListedWithZeroCost) {
  // Worked case 9: the bias goes R → P(sum) (local), a and b stay.
  const Plan plan = plan_for(problem(
      OpKind::addmm, {4}, {tensor({4}, "R"), tensor({12, 8}, "S(1)"), tensor({8, 4}, "S(0)")}));
  ASSERT_EQ(plan.redistributions.size(), 1u);
  EXPECT_EQ(plan.redistributions[0].input, 0);
  const auto& step = plan.redistributions[0].redistribution.steps.at(0);
  EXPECT_EQ(step.collective, CollectiveKind::local_partial);
  EXPECT_EQ(step.bytes, 0);
  EXPECT_EQ(plan.redistributions[0].step_cost_us, (std::vector<double>{0.0}));
}

TEST(Plan, StepCostsSumToTheCandidateCostEverywhere) {
  for (int dph : {1, 2, 8}) {
    expect_steps_sum_to_input_cost(plan_for(
        problem(OpKind::mm, {2, 2}, {tensor({64, 64}, "S(1),R"), tensor({64, 64}, "R,S(0)")}),
        dph));
    expect_steps_sum_to_input_cost(
        plan_for(problem(OpKind::mm, {3}, {tensor({7, 5}, "S(0)"), tensor({5, 4}, "S(1)")}), dph));
  }
}

TEST(Plan, LocalComputeFollowsTorchChunk) {
  // mm (10,8)@(8,12), a S(0) on 4: rows ceil(10/4)=3 → 3,3,3,1.
  const Plan plan =
      plan_for(problem(OpKind::mm, {4}, {tensor({10, 8}, "S(0)"), tensor({8, 12}, "R")}));
  ASSERT_EQ(plan.local_compute.size(), 4u);
  const int64_t rows[] = {3, 3, 3, 1};
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(plan.local_compute[r], (LocalGemm{1, rows[r], 12, 8})) << "rank " << r;
  EXPECT_DOUBLE_EQ(plan.local_compute[3].flops(), 2.0 * 1 * 12 * 8);
}

TEST(Plan, LocalComputeCanBeEmpty) {
  // 5 rows over 4: 2,2,1,0 — rank 3 multiplies nothing.
  const Plan plan =
      plan_for(problem(OpKind::mm, {4}, {tensor({5, 8}, "S(0)"), tensor({8, 12}, "R")}));
  EXPECT_EQ(plan.local_compute[2], (LocalGemm{1, 1, 12, 8}));
  EXPECT_EQ(plan.local_compute[3], (LocalGemm{1, 0, 12, 8}));
  EXPECT_EQ(plan.local_compute[3].flops(), 0.0);
}

TEST(Plan, LocalComputeOfBmmShardedOnK) {
  // Worked case 5: k = 8 over 4 → 2 each; batch and m, n whole.
  const Plan plan =
      plan_for(problem(OpKind::bmm, {4}, {tensor({8, 6, 8}, "S(2)"), tensor({8, 8, 12}, "S(1)")}));
  for (const auto& lc : plan.local_compute) EXPECT_EQ(lc, (LocalGemm{8, 6, 12, 2}));
}

TEST(Plan, LocalComputeOfNestedShards) {
  // m = 7 sharded over both dims of a 2x3 mesh: outer chunk(7,2) = 4,3; inner chunk(4,3) =
  // 2,2,0 and chunk(3,3) = 1,1,1. n = 6 sharded on mesh dim 1: 2,2,2. k = 9 whole.
  const auto p =
      problem(OpKind::mm, {2, 3}, {tensor({7, 9}, "S(0),S(0)"), tensor({9, 6}, "R,S(1)")});
  const std::vector<Placements> in = {pl("S(0),S(0)"), pl("R,S(1)")};
  const int64_t rows[] = {2, 2, 0, 1, 1, 1};
  for (int r = 0; r < 6; ++r)
    EXPECT_EQ(local_compute_of(p, in, r), (LocalGemm{1, rows[r], 2, 9})) << "rank " << r;
  // The same for bmm with the batch split 4 → 2,2 on mesh dim 0 and k = 9 on mesh dim 1:
  // chunk(9,3) = 3,3,3.
  const auto pb = problem(OpKind::bmm, {2, 3},
                          {tensor({4, 5, 9}, "S(0),S(2)"), tensor({4, 9, 6}, "S(0),S(1)")});
  const std::vector<Placements> inb = {pl("S(0),S(2)"), pl("S(0),S(1)")};
  for (int r = 0; r < 6; ++r) EXPECT_EQ(local_compute_of(pb, inb, r), (LocalGemm{2, 5, 6, 3}));
}

TEST(Plan, LocalComputeOfAddmmIgnoresTheBias) {
  const auto p = problem(OpKind::addmm, {2},
                         {tensor({6}, "S(0)"), tensor({5, 7}, "R"), tensor({7, 6}, "S(1)")});
  const std::vector<Placements> in = {pl("S(0)"), pl("R"), pl("S(1)")};
  EXPECT_EQ(local_compute_of(p, in, 1), (LocalGemm{1, 5, 3, 7}));
}

// ---- errors ----

void expect_invalid(OpKind op, std::vector<int> mesh, std::vector<TensorSpec> inputs,
                    const char* why) {
  EXPECT_THROW(plan_for(problem(op, std::move(mesh), std::move(inputs))), InvalidArgument) << why;
}

TEST(Plan, MalformedProblemsAreInvalidArguments) {
  expect_invalid(OpKind::mm, {4}, {tensor({2, 6, 8}, "R"), tensor({8, 12}, "R")}, "3-D a for mm");
  expect_invalid(OpKind::mm, {4}, {tensor({6, 8}, "R"), tensor({9, 12}, "R")}, "inner dims");
  expect_invalid(OpKind::bmm, {4}, {tensor({6, 8}, "R"), tensor({8, 12}, "R")}, "2-D for bmm");
  expect_invalid(OpKind::bmm, {4}, {tensor({2, 6, 8}, "R"), tensor({3, 8, 12}, "R")}, "batch");
  expect_invalid(OpKind::mm, {4}, {tensor({6, 8}, "R")}, "one input");
  expect_invalid(OpKind::mm, {4}, {tensor({6}, "R"), tensor({6, 8}, "R"), tensor({8, 12}, "R")},
                 "three inputs for mm");
  expect_invalid(OpKind::addmm, {4}, {tensor({6, 8}, "R"), tensor({8, 12}, "R")},
                 "addmm without bias");
  expect_invalid(OpKind::addmm, {4}, {tensor({5}, "R"), tensor({6, 8}, "R"), tensor({8, 12}, "R")},
                 "bias does not broadcast");
  expect_invalid(OpKind::addmm, {4},
                 {tensor({2, 6, 12}, "R"), tensor({6, 8}, "R"), tensor({8, 12}, "R")},
                 "bias has more dims");
  expect_invalid(OpKind::baddbmm, {4},
                 {tensor({3, 1, 12}, "R"), tensor({2, 6, 8}, "R"), tensor({2, 8, 12}, "R")},
                 "bias batch");
  expect_invalid(OpKind::mm, {2, 2}, {tensor({6, 8}, "S(0)"), tensor({8, 12}, "R,R")},
                 "placement count");
  expect_invalid(OpKind::mm, {4}, {tensor({6, 8}, "S(2)"), tensor({8, 12}, "R")},
                 "shard dim beyond rank");
  expect_invalid(OpKind::mm, {4},
                 {tensor({6, 8}, "R", DType::bf16), tensor({8, 12}, "R", DType::fp32)}, "dtypes");
}

}  // namespace
}  // namespace symmesh::strategies
