// The analytic cost model: hand-computed costs on one node, a rail and a fat-tree network,
// memory feasibility, the factory, and the choices it makes differently from DTensor.
#include "strategies/analytic_cost_model.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "analytic_test_support.hpp"
#include "core/errors.hpp"
#include "strategies/plan.hpp"
#include "strategy_test_support.hpp"

namespace symmesh::strategies {
namespace {

using testing::dgx_cluster;
using testing::pl;
using testing::problem;
using testing::tensor;

const Candidate& candidate_with(const Plan& plan, const std::string& out, const std::string& a,
                                const std::string& b) {
  for (const Candidate& c : plan.candidates)
    if (c.output_placements == pl(out) && c.input_placements[0] == pl(a) &&
        c.input_placements[1] == pl(b))
      return c;
  throw std::runtime_error("no candidate " + out + " " + a + " " + b);
}

TEST(AnalyticCostModel, IntraNodeAllGatherPlusRooflineByHand) {
  // mm a [8192, 8192] S(0) x b [8192, 8192] S(0), bf16, mesh [8] on one DGX H100.
  // Candidate [S(0) | S(0), R]: b S(0) → R is a ring all-gather of 1024 x 8192 x 2 B =
  // 16,777,216 B chunks:
  //   ring   7 x (1 us + 16,777,216 B / 450e9 B/s) = 7 x 38.282702 us = 267.978916 us
  //   pad    one copy into the slot: 5 us + 2 x 16,777,216 / 3.35e12 s = 15.016248 us
  //   comm   282.995164 us
  // Local mm m = 1024, n = 8192, k = 8192: 1.374390e11 FLOP;
  //   efficiency 0.85 x (1024/1088) x (8192/8256)^2 = 0.787645
  //   compute 1.374390e11 / (989.4e12 x 0.787645) = 176.362980 us (memory 50.08 us: less)
  //   + 5 us launch = 181.362980 us;   total 464.358144 us.
  // Memory on rank 0: a 16 MiB + b 16 MiB held, b gathered 128 MiB, the all-gather's
  // 8 x 16 MiB buffer, output 1024 x 8192 x 2 B = 16 MiB: 304 MiB.
  const AnalyticCostModel model(dgx_cluster(1));
  const auto p = problem(
      OpKind::mm, {8},
      {tensor({8192, 8192}, "S(0)", DType::bf16), tensor({8192, 8192}, "S(0)", DType::bf16)});
  const Plan plan = build_plan(p, model);
  const Candidate& c = candidate_with(plan, "S(0)", "S(0)", "R");
  EXPECT_DOUBLE_EQ(c.input_cost_us[0], 0.0);
  EXPECT_NEAR(c.input_cost_us[1], 282.995164, 1e-5);
  EXPECT_NEAR(c.compute_us, 181.362980, 1e-5);
  EXPECT_NEAR(c.cost_us, 464.358144, 1e-5);
  const auto details = model.details(p, plan.candidates);
  EXPECT_DOUBLE_EQ(details[c.index].memory_bytes_per_rank, 304.0 * (1 << 20));
  EXPECT_TRUE(details[c.index].feasible);
}

TEST(AnalyticCostModel, RailAllReduceAcrossNodesByHand) {
  // [4096, 4096] bf16 (P(sum), R) → (R, R) on mesh [2, 8] over 2 rail nodes: an all-reduce
  // on dp (dim 0, p = 2, one GPU per node per group, each with its own NIC):
  //   buffer 33,554,432 B, chunk 16,777,216 B;
  //   ring 2 x (2-1) x (3 us + 16,777,216 / 50e9 s) = 2 x 338.544320 = 677.088640 us
  //   stage copy 5 us + 2 x 33,554,432 / 3.35e12 s = 25.032497 us;   702.121137 us.
  const AnalyticCostModel model(dgx_cluster(2));
  const auto t = tensor({4096, 4096}, "P(sum),R", DType::bf16);
  const auto steps = plan_transitions(t.placements, pl("R,R"), DeviceMesh({2, 8}));
  const auto costs = model.step_costs_us(t, steps, DeviceMesh({2, 8}));
  ASSERT_EQ(costs.size(), 1u);
  EXPECT_NEAR(costs[0], 702.121137, 1e-5);
}

TEST(AnalyticCostModel, FatTreeAllReduceSharesTheNic) {
  // The same on a fat-tree with 2 NICs per node (3 us): the 8 GPUs of a node all send at
  // once, 4 through each NIC, so each flow gets 50 / 4 = 12.5 GB/s:
  //   2 x (3 us + 16,777,216 x 4 / 50e9 s) = 2 x 1345.177280 = 2690.354560 us
  //   + stage copy 25.032497 us = 2715.387057 us.
  const AnalyticCostModel model(dgx_cluster(2, "fat-tree", 2));
  const auto t = tensor({4096, 4096}, "P(sum),R", DType::bf16);
  const auto costs = model.step_costs_us(
      t, plan_transitions(t.placements, pl("R,R"), DeviceMesh({2, 8})), DeviceMesh({2, 8}));
  ASSERT_EQ(costs.size(), 1u);
  EXPECT_NEAR(costs[0], 2715.387057, 1e-5);
}

TEST(AnalyticCostModel, IntraNodeAllToAllByHand) {
  // [8192, 8192] bf16 S(0) → S(1) on mesh [8], one node: the block each peer gets is
  // 1024 x 1024 x 2 B = 2,097,152 B: 7 x (1 us + 2,097,152 / 450e9 s) = 39.622364 us.
  // Re-layout on rank 0: 8 split copies (1024 x 1024 each) and 8 concat copies: 16 launches
  // = 80 us, 2 x (16 + 16) MiB / 3.35e12 = 20.032497 us;   139.652860 us.
  const AnalyticCostModel model(dgx_cluster(1));
  const auto t = tensor({8192, 8192}, "S(0)", DType::bf16);
  const auto costs = model.step_costs_us(
      t, plan_transitions(t.placements, pl("S(1)"), DeviceMesh({8})), DeviceMesh({8}));
  ASSERT_EQ(costs.size(), 1u);
  EXPECT_NEAR(costs[0], 39.622364 + 80 + 20.032497, 1e-5);
}

TEST(AnalyticCostModel, ImpossibleRedistributionIsInfiniteWithAReason) {
  const AnalyticCostModel model(dgx_cluster(1));
  const auto p = problem(
      OpKind::mm, {8}, {tensor({64, 64}, "S(0)", DType::bf16), tensor({64, 64}, "R", DType::bf16)});
  const Plan plan = build_plan(p, model);
  const Candidate& c = candidate_with(plan, "P(sum)", "P(sum)", "R");
  EXPECT_TRUE(std::isinf(c.cost_us));
  const auto d = model.details(p, plan.candidates)[c.index];
  EXPECT_FALSE(d.feasible);
  EXPECT_NE(d.note.find("cannot redistribute S(0) to P(sum)"), std::string::npos) << d.note;
}

TEST(AnalyticCostModel, FactoryNeedsTheCluster) {
  CostModelOptions options;
  EXPECT_THROW(make_cost_model("analytic", options), InvalidArgument);
  try {
    make_cost_model("analytic", options);
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "--cluster");
  }
  options.cluster = dgx_cluster(1);
  EXPECT_EQ(make_cost_model("analytic", options)->name(), "analytic");
  EXPECT_EQ(make_cost_model("dtensor", options)->name(), "dtensor");
  EXPECT_THROW(make_cost_model("simulated", options), Unsupported);  // sim::make_any_cost_model
  EXPECT_NE(explainer_of(*make_cost_model("analytic", options)), nullptr);
  EXPECT_EQ(explainer_of(*make_cost_model("dtensor", options)), nullptr);
  options.cluster->gpu.memory_bandwidth_bytes_per_s = 0;
  EXPECT_THROW(make_cost_model("analytic", options), InvalidArgument);
}

// ---- Where analytic and DTensor part ways -------------------------------------------------

TEST(AnalyticVersusDTensor, ComputeMattersDTensorKeepsRedundantWork) {
  // a [8192, 8192] (S(0), R) x b [8192, 8192] (R, R), bf16, mesh [2, 4] on one DGX: the rows
  // are split over dim 0 only, so the 4 GPUs of each dim-1 group hold the same rows.
  // DTensor prices only redistribution; two candidates cost 0 — #16 keeps the inputs, #18
  // also cuts a's rows over dim 1 (a local chunk: S(0) pieces are contiguous, nothing
  // moves) — and its rule takes the one that keeps the inputs: #16, where every GPU of a
  // group repeats the same 4096 x 8192 x 8192 GEMM:
  //   2 x 4096 x 8192^2 / (989.4e12 x 0.85 x 4096/4160 x (8192/8256)^2) + 5 us = 679.329 us.
  // Analytic counts the compute and takes #18: 1024 x 8192 x 8192 per GPU, 181.363 us.
  const auto p = problem(
      OpKind::mm, {2, 4},
      {tensor({8192, 8192}, "S(0),R", DType::bf16), tensor({8192, 8192}, "R,R", DType::bf16)});
  const Plan dtensor = build_plan(p, *make_cost_model("dtensor", {8}));
  EXPECT_EQ(dtensor.chosen_candidate().index, 16);
  EXPECT_EQ(dtensor.chosen_candidate().cost_us, 0.0);
  const AnalyticCostModel model(dgx_cluster(1));
  const Plan analytic = build_plan(p, model);
  EXPECT_EQ(analytic.chosen_candidate().index, 18);
  EXPECT_EQ(analytic.chosen_candidate().input_placements[0], pl("S(0),S(0)"));
  EXPECT_NEAR(analytic.chosen_candidate().cost_us, 181.362980, 1e-5);
  EXPECT_NEAR(analytic.candidates[16].cost_us, 679.329040, 1e-5);
}

TEST(AnalyticVersusDTensor, MemoryRulesOutDTensorsChoice) {
  // The same shape of problem with a [262144, 8192] (S(0), R) and b [8192, 327680] (R, R),
  // bf16. DTensor again keeps the inputs (#16): each GPU holds a's 131072 rows (2 GiB), all
  // of b (5 GiB) and a 131072 x 327680 output (80 GiB): 87 GiB, more than an H100's 80 GiB.
  // Analytic marks #16 infeasible and takes #18: a 2 GiB + its 32768-row chunk 0.5 GiB +
  // b 5 GiB + output 32768 x 327680 x 2 B = 20 GiB, 27.5 GiB in all.
  const auto p = problem(
      OpKind::mm, {2, 4},
      {tensor({262144, 8192}, "S(0),R", DType::bf16), tensor({8192, 327680}, "R,R", DType::bf16)});
  const Plan dtensor = build_plan(p, *make_cost_model("dtensor", {8}));
  ASSERT_EQ(dtensor.chosen_candidate().index, 16);
  const AnalyticCostModel model(dgx_cluster(1));
  const Plan analytic = build_plan(p, model);
  const auto details = model.details(p, analytic.candidates);
  EXPECT_FALSE(details[16].feasible);
  EXPECT_DOUBLE_EQ(details[16].memory_bytes_per_rank, 87.0 * (1ull << 30));
  EXPECT_NE(details[16].note.find("87.00 GiB"), std::string::npos) << details[16].note;
  EXPECT_TRUE(std::isinf(analytic.candidates[16].cost_us));
  EXPECT_EQ(analytic.chosen_candidate().index, 18);
  EXPECT_DOUBLE_EQ(details[18].memory_bytes_per_rank, 27.5 * (1ull << 30));
}

TEST(AnalyticCostModel, NothingFitsIsAClearError) {
  // Both replicated: every candidate holds the whole 262144 x 262144 output (128 GiB).
  const auto p =
      problem(OpKind::mm, {8},
              {tensor({262144, 8192}, "R", DType::bf16), tensor({8192, 262144}, "R", DType::bf16)});
  try {
    build_plan(p, AnalyticCostModel(dgx_cluster(1)));
    FAIL() << "expected Unsupported";
  } catch (const Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("no strategy fits in memory"), std::string::npos)
        << e.what();
  }
}

TEST(AnalyticVersusDTensor, ASharedNicMakesCrossingNodesDear) {
  // mm a [32768, 8192] (S(0), S(0)) x b [8192, 1024] (S(0), R), bf16, mesh [2, 8] on two
  // DGX nodes. DTensor (8 devices per host: dp inter-host at 19.3 GB/s, tp at 87.7 GB/s)
  // picks #18: gather b over dp, keep a: (S(0),S(0)) x (R,R). So does analytic on rails.
  // On a fat-tree with ONE NIC per node, the 8 GPUs of a node gather over dp at once, each
  // getting 50/8 GB/s, so analytic prefers #19: chunk b first (R → S(1) on tp), gather only
  // that eighth over dp, and gather the bigger a inside the node over NVSwitch instead:
  //   #18  b over dp: (3.5 us + 8,388,608 B x 8 / 50e9) + pad 10.008 us = 1355.685 us;
  //        local mm 2048 x 1024 x 8192: 50.116 us                         total 1405.802 us
  //   #19  a over tp: 7 x (1 us + 33,554,432 / 450e9) + pad 25.032 us =  553.990 us
  //        b chunk on tp (copy of 1 MiB) 5.626 us, then over dp:
  //        (3.5 us + 1,048,576 x 8 / 50e9) + pad 5.626 us               =  176.898 us
  //        local mm 16384 x 128 x 8192 (skinny n: lower efficiency): 87.008 us;  823.523 us
  // On rails (50 GB/s per GPU) #18 costs 230.896 us and #19 676.222 us.
  const auto p = problem(OpKind::mm, {2, 8},
                         {tensor({32768, 8192}, "S(0),S(0)", DType::bf16),
                          tensor({8192, 1024}, "S(0),R", DType::bf16)});
  const Plan dtensor = build_plan(p, *make_cost_model("dtensor", {8}));
  EXPECT_EQ(dtensor.chosen_candidate().index, 18);
  const Plan rail = build_plan(p, AnalyticCostModel(dgx_cluster(2)));
  EXPECT_EQ(rail.chosen_candidate().index, 18);
  EXPECT_NEAR(rail.chosen_candidate().cost_us, 230.896, 1e-3);
  const Plan one_nic = build_plan(p, AnalyticCostModel(dgx_cluster(2, "fat-tree", 1, 3.5e-6)));
  EXPECT_EQ(one_nic.chosen_candidate().index, 19);
  EXPECT_EQ(one_nic.chosen_candidate().input_placements[0], pl("S(0),R"));
  EXPECT_EQ(one_nic.chosen_candidate().input_placements[1], pl("R,S(1)"));
  EXPECT_NEAR(one_nic.chosen_candidate().cost_us, 823.523, 1e-3);
  EXPECT_NEAR(one_nic.candidates[18].cost_us, 1405.802, 1e-3);
}

}  // namespace
}  // namespace symmesh::strategies
