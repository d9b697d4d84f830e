// The engine runs a matmul as the overlapped all-gather + mm when that is cheaper: a large,
// bandwidth-heavy gather is hidden under the matmul; a small latency-bound one is not worth
// p-1 extra kernel launches. --no-fuse (fuse = false) turns it off.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "strategies/analytic_cost_model.hpp"
#include "strategies/plan.hpp"
#include "tests/strategies/analytic_test_support.hpp"

namespace symmesh::strategies {
namespace {

// Sequence-parallel activations a [m, k] S(0) into a column-parallel weight b [k, n] S(1)
// on the 8 GPUs of one DGX node (the async-TP case).
OpProblem tp_linear(int64_t m, int64_t k, int64_t n) {
  OpProblem p;
  p.op = OpKind::mm;
  p.mesh = DeviceMesh({8});
  p.inputs = {{{m, k}, DType::bf16, parse_placements("S(0)")},
              {{k, n}, DType::bf16, parse_placements("S(1)")}};
  return p;
}

TEST(FusionChoice, LargeGatherIsHiddenUnderTheMatmul) {
  // a 8192x8192 bf16 = 128 MiB: the all-gather moves 7 shards of 16 MiB over 450 GB/s
  // NVLink, 7 × (1 us + 37.3 us) ≈ 268 us (+ its slot copies); the local mm is 8192 x 3584
  // x 8192 x 2 = 481 GFLOP ≈ 0.59 ms on an H100. Unfused they add up; fused the gather
  // runs under the matmul, so the op costs about the matmul alone.
  const OpProblem p = tp_linear(8192, 8192, 28672);
  const Plan plan = build_plan(p, AnalyticCostModel(testing::dgx_cluster(1)));
  const Candidate& c = plan.chosen_candidate();
  EXPECT_EQ(to_string(c.output_placements), "S(1)");
  EXPECT_EQ(c.implementation, Implementation::fused_allgather_mm);
  EXPECT_EQ(c.cost_us, c.fused_cost_us);
  EXPECT_DOUBLE_EQ(c.unfused_cost_us, c.compute_us + c.input_cost_us[0] + c.input_cost_us[1]);
  // Fused cannot beat its slower stream (the matmul), and must save most of the gather.
  EXPECT_GE(c.fused_cost_us, c.compute_us * 0.99);
  EXPECT_LT(c.fused_cost_us, c.unfused_cost_us - 0.5 * c.input_cost_us[0]);
  EXPECT_GE(c.chunks, 1);

  const Plan unfused = build_plan(p, AnalyticCostModel(testing::dgx_cluster(1), false));
  EXPECT_EQ(unfused.chosen_candidate().implementation, Implementation::unfused);
  EXPECT_EQ(unfused.chosen_candidate().chunks, 1);
  EXPECT_DOUBLE_EQ(unfused.chosen_candidate().cost_us, c.unfused_cost_us);
}

TEST(FusionChoice, SmallLatencyBoundGatherStaysUnfused) {
  // a 64x64: shards of 8 rows (1 KiB). The gather is 7 × ~1 us of latency; the local mm is
  // one 5 us launch. Fused runs 8 matmuls (8 launches, 40 us) to hide ~7 us: it loses.
  const OpProblem p = tp_linear(64, 64, 512);
  const Plan plan = build_plan(p, AnalyticCostModel(testing::dgx_cluster(1)));
  for (const Candidate& c : plan.candidates) {
    if (!c.kept() || !std::isfinite(c.fused_cost_us)) continue;
    EXPECT_GT(c.fused_cost_us, c.unfused_cost_us) << "candidate #" << c.index;
    EXPECT_EQ(c.implementation, Implementation::unfused);
  }
  EXPECT_EQ(plan.chosen_candidate().implementation, Implementation::unfused);
  // The gather candidate was priced fused (it could run so), just not chosen that way.
  const auto gathered =
      std::find_if(plan.candidates.begin(), plan.candidates.end(), [](const Candidate& c) {
        return to_string(c.input_placements[0]) == "R" &&
               to_string(c.input_placements[1]) == "S(1)";
      });
  ASSERT_NE(gathered, plan.candidates.end());
  EXPECT_TRUE(std::isfinite(gathered->fused_cost_us));
}

TEST(FusionChoice, TheDTensorModelNeverFuses) {
  const OpProblem p = tp_linear(8192, 8192, 28672);
  const auto model = make_cost_model("dtensor", {});
  const Plan plan = build_plan(p, *model);
  for (const Candidate& c : plan.candidates) EXPECT_EQ(c.implementation, Implementation::unfused);
}

// Row-parallel linear (k sharded on both inputs) whose output must end up as rows.
OpProblem row_parallel(int64_t m, int64_t k, int64_t n) {
  OpProblem p;
  p.op = OpKind::mm;
  p.mesh = DeviceMesh({8});
  p.inputs = {{{m, k}, DType::bf16, parse_placements("S(1)")},
              {{k, n}, DType::bf16, parse_placements("S(0)")}};
  p.output_target = parse_placements("S(0)");
  return p;
}

TEST(FusionChoice, LargeReduceScatterIsHiddenUnderTheMatmul) {
  // out 8192x8192 bf16 = 128 MiB of partial sums: the reduce-scatter sends 7 blocks of
  // 16 MiB (~270 us + its copies and adds); the local mm (k = 1024) is ~181 us. Fused,
  // each block's product is computed while the previous accumulator travels.
  const Plan plan =
      build_plan(row_parallel(8192, 8192, 8192), AnalyticCostModel(testing::dgx_cluster(1)));
  const Candidate& c = plan.chosen_candidate();
  EXPECT_EQ(to_string(c.output_placements), "P(sum)");
  EXPECT_EQ(c.implementation, Implementation::fused_mm_reducescatter);
  EXPECT_DOUBLE_EQ(c.unfused_cost_us,
                   c.compute_us + c.output_cost_us + c.input_cost_us[0] + c.input_cost_us[1]);
  // Fused cannot beat the slower stream (the ring of puts), and saves most of the matmul.
  EXPECT_LT(c.fused_cost_us, c.unfused_cost_us - 0.5 * c.compute_us);
  ASSERT_TRUE(plan.output_redistribution.has_value());
  EXPECT_EQ(plan.output_redistribution->redistribution.steps.size(), 1u);
}

TEST(FusionChoice, SmallReduceScatterStaysUnfused) {
  // out 64x512: 7 latency-bound steps and 8 launches of tiny products instead of one.
  const Plan plan =
      build_plan(row_parallel(64, 64, 512), AnalyticCostModel(testing::dgx_cluster(1)));
  for (const Candidate& c : plan.candidates)
    if (c.kept() && c.fused_implementation == Implementation::fused_mm_reducescatter) {
      EXPECT_GT(c.fused_cost_us, c.unfused_cost_us) << "candidate #" << c.index;
    }
  EXPECT_EQ(plan.chosen_candidate().implementation, Implementation::unfused);
}

TEST(FusionChoice, TheOutputTargetIsPricedForEveryCandidate) {
  // Every kept candidate pays its output's way to S(0): the one already there nothing, the
  // Partial one a reduce-scatter, the replicated one nothing (a local chunk).
  const Plan plan =
      build_plan(row_parallel(8192, 8192, 8192), AnalyticCostModel(testing::dgx_cluster(1), false));
  for (const Candidate& c : plan.candidates) {
    if (!c.kept() || !std::isfinite(c.cost_us)) continue;
    const std::string out = to_string(c.output_placements);
    if (out == "S(0)" || out == "R")
      EXPECT_EQ(c.output_cost_us, 0.0) << out;
    else
      EXPECT_GT(c.output_cost_us, 0.0) << out;
  }
}

}  // namespace
}  // namespace symmesh::strategies
