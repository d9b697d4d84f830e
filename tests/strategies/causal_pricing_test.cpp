// A causal op (WorkloadOp::causal, OpProblem::work_fraction 0.5) is priced by the analytic
// model at half its local work, candidate by candidate (the roofline's compute and memory
// terms both halve: core/roofline.hpp), with the same communication.
#include <gtest/gtest.h>

#include <cmath>

#include "analytic_test_support.hpp"
#include "core/roofline.hpp"
#include "strategies/analytic_cost_model.hpp"
#include "strategies/candidate.hpp"
#include "strategies/op_rules.hpp"
#include "strategy_test_support.hpp"

namespace symmesh::strategies {
namespace {

using testing::dgx_cluster;
using testing::problem;
using testing::tensor;

TEST(CausalPricing, HalfTheLocalWorkOfEveryCandidateAndTheSameCommunication) {
  // Attention scores of 64 heads over 8192 tokens, head_dim 128, on one DGX H100.
  const OpProblem full = problem(OpKind::bmm, {8},
                                 {tensor({64, 8192, 128}, "S(0)", DType::bf16),
                                  tensor({64, 128, 8192}, "S(0)", DType::bf16)});
  OpProblem causal = full;
  causal.work_fraction = 0.5;
  const ClusterSpec cluster = dgx_cluster(1);
  auto a = expand_candidates(full, op_single_dim_rules(full));
  auto b = expand_candidates(causal, op_single_dim_rules(causal));
  AnalyticCostModel(cluster).price(full, a);
  AnalyticCostModel(cluster).price(causal, b);
  ASSERT_EQ(a.size(), b.size());
  const double launch_us = roofline::kLaunchOverhead_s * 1e6;
  int compared = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!a[i].kept() || !std::isfinite(a[i].cost_us)) continue;
    EXPECT_EQ(a[i].input_cost_us, b[i].input_cost_us) << i;
    EXPECT_NEAR(b[i].compute_us - launch_us, 0.5 * (a[i].compute_us - launch_us),
                1e-9 * a[i].compute_us)
        << i;
    ++compared;
  }
  EXPECT_GT(compared, 0);
}

}  // namespace
}  // namespace symmesh::strategies
