// Properties the analytic model must have whatever the figures: a faster cluster (more
// bandwidth, lower latency, more NICs, more FLOP/s) never makes a candidate slower, and a
// larger GEMM never takes less time.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

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

struct Case {
  ClusterSpec cluster;
  OpProblem problem;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"S(0),R", "R,S(1)"}, {"R,S(1)", "S(0),R"}, {"S(1),S(0)", "S(0),S(1)"}, {"R,R", "S(1),S(1)"}};
  for (const auto& [a, b] : inputs) {
    out.push_back({dgx_cluster(1), problem(OpKind::mm, {2, 4},
                                           {tensor({4096, 2048}, a, DType::bf16),
                                            tensor({2048, 6144}, b, DType::bf16)})});
    out.push_back({dgx_cluster(2), problem(OpKind::mm, {2, 8},
                                           {tensor({8192, 4096}, a, DType::bf16),
                                            tensor({4096, 1000}, b, DType::bf16)})});
    out.push_back(
        {dgx_cluster(4, "fat-tree", 2, 3.5e-6),
         problem(OpKind::mm, {8, 4},
                 {tensor({8192, 8192}, a, DType::bf16), tensor({8192, 3000}, b, DType::bf16)})});
  }
  out.push_back({dgx_cluster(2), problem(OpKind::bmm, {4, 4},
                                         {tensor({8, 2048, 4096}, "S(0),S(2)", DType::bf16),
                                          tensor({8, 4096, 1024}, "S(0),S(1)", DType::bf16)})});
  return out;
}

std::vector<Candidate> priced(const Case& c) {
  auto candidates = expand_candidates(c.problem, op_single_dim_rules(c.problem));
  AnalyticCostModel(c.cluster).price(c.problem, candidates);
  return candidates;
}

void expect_never_slower(const std::string& what, const std::function<void(ClusterSpec&)>& faster) {
  for (const Case& base : cases()) {
    Case better = base;
    faster(better.cluster);
    const auto before = priced(base);
    const auto after = priced(better);
    for (size_t i = 0; i < before.size(); ++i) {
      if (!before[i].kept() || !std::isfinite(before[i].cost_us)) continue;
      EXPECT_LE(after[i].cost_us, before[i].cost_us * (1 + 1e-12))
          << what << ": candidate " << i << " on " << to_string(base.problem.mesh);
    }
  }
}

TEST(AnalyticMonotonicity, MoreBandwidthNeverMakesAStrategySlower) {
  expect_never_slower("NVSwitch x2",
                      [](ClusterSpec& c) { c.intra_node.bandwidth_bytes_per_s *= 2; });
  expect_never_slower("NIC x2", [](ClusterSpec& c) { c.inter_node.bandwidth_bytes_per_s *= 2; });
  expect_never_slower("HBM x2", [](ClusterSpec& c) { c.gpu.memory_bandwidth_bytes_per_s *= 2; });
  expect_never_slower("peak x2", [](ClusterSpec& c) { c.gpu.peak_flops_per_s["bf16"] *= 2; });
  expect_never_slower("latency / 2", [](ClusterSpec& c) {
    c.intra_node.latency_s /= 2;
    c.inter_node.latency_s /= 2;
  });
  expect_never_slower("more NICs", [](ClusterSpec& c) {
    if (c.inter_node.kind == "fat-tree") c.inter_node.nics_per_node *= 2;
  });
}

TEST(AnalyticMonotonicity, EveryNicCountFromOneToEightIsNoSlowerThanFewer) {
  // Fat-tree nodes with 1, 2, 4, 8 NICs: each step up halves the flows per NIC.
  for (const Case& base : cases()) {
    std::vector<double> last;
    for (int nics : {1, 2, 4, 8}) {
      Case c = base;
      c.cluster.inter_node.kind = "fat-tree";
      c.cluster.inter_node.nics_per_node = nics;
      const auto now = priced(c);
      for (size_t i = 0; i < last.size(); ++i) {
        if (!std::isfinite(last[i])) continue;
        EXPECT_LE(now[i].cost_us, last[i] * (1 + 1e-12)) << nics;
      }
      last.clear();
      for (const auto& cand : now) last.push_back(cand.kept() ? cand.cost_us : NAN);
    }
  }
}

TEST(AnalyticMonotonicity, ALargerGemmNeverTakesLessTime) {
  // The roofline alone, over a grid of shapes: growing any dim never lowers the time.
  const GpuSpec gpu = dgx_cluster(1).gpu;
  const std::vector<int64_t> sizes = {1, 7, 64, 100, 512, 1000, 4096, 8192};
  auto time = [&](int64_t m, int64_t n, int64_t k) {
    MatmulWork w;
    w.m = m, w.n = n, w.k = k, w.dtype = DType::bf16;
    return roofline::matmul_duration_s(gpu, w);
  };
  for (size_t i = 0; i + 1 < sizes.size(); ++i)
    for (int64_t x : sizes)
      for (int64_t y : sizes) {
        EXPECT_LE(time(sizes[i], x, y), time(sizes[i + 1], x, y));
        EXPECT_LE(time(x, sizes[i], y), time(x, sizes[i + 1], y));
        EXPECT_LE(time(x, y, sizes[i]), time(x, y, sizes[i + 1]));
      }
  // And through the model: every candidate's compute grows with the GEMM's rows.
  for (const int64_t m : {1024, 2048, 4096}) {
    const auto small = problem(
        OpKind::mm, {2, 4},
        {tensor({m, 4096}, "S(0),R", DType::bf16), tensor({4096, 4096}, "R,S(1)", DType::bf16)});
    auto large = small;
    large.inputs[0].shape[0] = 2 * m;
    const AnalyticCostModel model(dgx_cluster(1));
    auto s = expand_candidates(small, op_single_dim_rules(small));
    auto l = expand_candidates(large, op_single_dim_rules(large));
    model.price(small, s);
    model.price(large, l);
    for (size_t i = 0; i < s.size(); ++i) {
      if (!s[i].kept() || !l[i].kept() || !std::isfinite(s[i].cost_us)) continue;
      EXPECT_LE(s[i].compute_us, l[i].compute_us) << "candidate " << i << " m " << m;
      EXPECT_LE(s[i].cost_us, l[i].cost_us) << "candidate " << i << " m " << m;
    }
  }
}

}  // namespace
}  // namespace symmesh::strategies
