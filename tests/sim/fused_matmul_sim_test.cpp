// The overlapped all-gather + mm in the simulator: its simulated time agrees with the
// analytic model's pipeline replay (strategies/fusion_pricing.hpp) when nothing else
// shares the links, it is faster than the unfused plan where the model says so, and with
// data carried its result equals the unfused one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "sim/forked_run.hpp"
#include "strategies/analytic_cost_model.hpp"
#include "strategies/plan.hpp"
#include "strategies/plan_lowering.hpp"
#include "tests/sim/sim_test_support.hpp"

namespace symmesh::sim {
namespace {

using strategies::Implementation;
using strategies::OpProblem;
using strategies::Plan;

OpProblem tp_linear(std::vector<int> mesh, int64_t m, int64_t k, int64_t n, DType dtype) {
  OpProblem p;
  p.op = OpKind::mm;
  p.mesh = DeviceMesh(mesh);
  p.inputs = {{{m, k}, dtype, parse_placements("S(0)")}, {{k, n}, dtype, parse_placements("S(1)")}};
  return p;
}

// The chosen candidate of `plan` run as `implementation` with `chunks`, alone.
RunResult simulate(Plan plan, Implementation implementation, int chunks, const ClusterSpec& cluster,
                   strategies::LoweringOptions lowering = {}) {
  plan.candidates[plan.chosen].implementation = implementation;
  plan.candidates[plan.chosen].chunks = chunks;
  Program program(plan.problem.mesh.size());
  strategies::lower_plan(plan, program, lowering);
  SimOptions options;
  options.record_timeline = false;
  options.carry_data = !lowering.global_inputs.empty();
  return run_simulation(program, cluster, options);
}

// Seeded fp32 values in [-1, 1] for every input of `p`, as the lowering takes them.
std::vector<std::vector<unsigned char>> random_fp32_inputs(const OpProblem& p, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<std::vector<unsigned char>> out;
  for (const auto& t : p.inputs) {
    std::vector<float> v(numel(t.shape));
    for (float& x : v) x = dist(rng);
    std::vector<unsigned char> bytes(v.size() * 4);
    if (!bytes.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
    out.push_back(bytes);
  }
  return out;
}

// The largest difference between two emulated runs' fp32 outputs (same requests).
double max_abs_difference_fp32(const RunResult& x, const RunResult& y) {
  EXPECT_EQ(x.outputs.size(), y.outputs.size());
  double max_abs = 0;
  for (size_t o = 0; o < std::min(x.outputs.size(), y.outputs.size()); ++o) {
    EXPECT_EQ(x.outputs[o].bytes.size(), y.outputs[o].bytes.size()) << "output " << o;
    std::vector<float> a(std::min(x.outputs[o].bytes.size(), y.outputs[o].bytes.size()) / 4);
    std::vector<float> b(a.size());
    if (a.empty()) continue;  // a rank's empty block: no storage (memcpy needs non-null)
    std::memcpy(a.data(), x.outputs[o].bytes.data(), a.size() * 4);
    std::memcpy(b.data(), y.outputs[o].bytes.data(), b.size() * 4);
    for (size_t i = 0; i < a.size(); ++i)
      max_abs = std::max(max_abs, double(std::abs(a[i] - b[i])));
  }
  return max_abs;
}

// Emulates `plan` unfused and as `kind` with 1 and 2 chunks on `seed`'s inputs; the fused
// outputs must equal the unfused ones within fp32 rounding. Prints the figures.
void expect_fused_equals_unfused(const Plan& plan, Implementation kind, const ClusterSpec& cluster,
                                 unsigned seed, const std::string& what) {
  strategies::LoweringOptions lowering;
  lowering.name = "mm";
  lowering.global_inputs = random_fp32_inputs(plan.problem, seed);
  const RunResult unfused = simulate(plan, Implementation::unfused, 1, cluster, lowering);
  for (int chunks : {1, 2}) {
    const RunResult fused = simulate(plan, kind, chunks, cluster, lowering);
    const double max_abs = max_abs_difference_fp32(fused, unfused);
    std::printf("[ figures  ] %s, %s, %d chunks: max |fused - unfused| = %.3g\n",
                to_string(kind).c_str(), what.c_str(), chunks, max_abs);
    // fp32 sums of at most 16 products of |x| <= 1: within a few ulps of 16.
    EXPECT_LE(max_abs, 1e-5) << what << ", " << chunks << " chunks";
  }
}

// The chosen candidate of `plan` simulated as `kind` (at the model's chunk count) and
// unfused; both times must agree with the analytic model's prices within 2 %.
std::pair<double, double> simulate_both(const Plan& plan, Implementation kind,
                                        const ClusterSpec& cluster, int64_t n) {
  const auto& c = plan.chosen_candidate();
  const double fused_us = simulate(plan, kind, c.fused_chunks, cluster).makespan_s * 1e6;
  const double unfused_us = simulate(plan, Implementation::unfused, 1, cluster).makespan_s * 1e6;
  std::printf(
      "[ figures  ] n %lld: fused simulated %.1f us, analytic %.1f us; unfused "
      "simulated %.1f us, analytic %.1f us\n",
      static_cast<long long>(n), fused_us, c.fused_cost_us, unfused_us, c.unfused_cost_us);
  EXPECT_NEAR(fused_us, c.fused_cost_us, 0.02 * c.fused_cost_us) << "n " << n;
  EXPECT_NEAR(unfused_us, c.unfused_cost_us, 0.02 * c.unfused_cost_us) << "n " << n;
  return {fused_us, unfused_us};
}

TEST(FusedMatmulSimulation, AgreesWithTheAnalyticPipelineOnOneNode) {
  const ClusterSpec cluster = testing::test_cluster(1);
  const strategies::AnalyticCostModel model(cluster);
  // Compute-bound (k = n = 8192) and comm-heavy (n = 1024: the matmul shrinks 8x, the
  // gather does not) on 8 GPUs over NVSwitch.
  for (int64_t n : {8192, 1024}) {
    const OpProblem p = tp_linear({8}, 8192, 8192, n, DType::bf16);
    // The candidate that all-gathers a (whether or not the model prefers it).
    int gather = -1;
    for (const auto& c : strategies::build_plan(p, model).candidates)
      if (c.kept() && to_string(c.input_placements[0]) == "R" &&
          to_string(c.input_placements[1]) == "S(1)")
        gather = c.index;
    ASSERT_GE(gather, 0);
    const Plan plan = strategies::build_plan_for(p, model, gather);
    const auto& c = plan.chosen_candidate();
    ASSERT_TRUE(std::isfinite(c.fused_cost_us));
    const auto [fused_us, unfused_us] =
        simulate_both(plan, Implementation::fused_allgather_mm, cluster, n);
    EXPECT_LT(fused_us, unfused_us) << "n " << n;
  }
}

TEST(FusedMatmulSimulation, EmulatedResultEqualsTheUnfusedOne) {
  // fp32, 2-D mesh 2x2 and an uneven 1-D mesh of 3: a 10x6 gathered along rows.
  for (const std::vector<int>& mesh : {std::vector<int>{3}, std::vector<int>{2, 2}}) {
    OpProblem p = tp_linear(mesh, 10, 6, 8, DType::fp32);
    if (mesh.size() == 2) {
      p.inputs[0].placements = parse_placements("S(0),S(1)");
      p.inputs[1].placements = parse_placements("R,S(0)");
    }
    const ClusterSpec cluster = testing::test_cluster(1);
    Plan plan = strategies::build_plan(p, strategies::AnalyticCostModel(cluster));
    // Run the first candidate that can be fused, whichever the model chose.
    bool found = false;
    for (const auto& c : plan.candidates)
      if (c.kept() && std::isfinite(c.fused_cost_us)) {
        plan = strategies::build_plan_for(p, strategies::AnalyticCostModel(cluster), c.index);
        found = true;
        break;
      }
    ASSERT_TRUE(found);
    expect_fused_equals_unfused(plan, Implementation::fused_allgather_mm, cluster, 7,
                                std::to_string(mesh.size()) + "-D mesh");
  }
}

// Row-parallel linear into sequence parallelism: a [m, k] and b [k, n] both sharded along
// k, the output wanted as rows (S(0)): the candidate with a Partial(sum) output then
// reduce-scatters it.
OpProblem row_parallel(int64_t m, int64_t k, int64_t n, DType dtype) {
  OpProblem p;
  p.op = OpKind::mm;
  p.mesh = DeviceMesh({8});
  p.inputs = {{{m, k}, dtype, parse_placements("S(1)")}, {{k, n}, dtype, parse_placements("S(0)")}};
  p.output_target = parse_placements("S(0)");
  return p;
}

TEST(FusedMatmulSimulation, ReduceScatterAgreesWithTheAnalyticPipeline) {
  const ClusterSpec cluster = testing::test_cluster(1);
  const strategies::AnalyticCostModel model(cluster);
  for (int64_t n : {8192, 2048}) {
    const OpProblem p = row_parallel(8192, 8192, n, DType::bf16);
    int partial = -1;
    for (const auto& c : strategies::build_plan(p, model).candidates)
      if (c.kept() && std::isfinite(c.cost_us) && to_string(c.output_placements) == "P(sum)")
        partial = c.index;
    ASSERT_GE(partial, 0);
    const Plan plan = strategies::build_plan_for(p, model, partial);
    const auto& c = plan.chosen_candidate();
    ASSERT_EQ(c.fused_implementation, Implementation::fused_mm_reducescatter) << "n " << n;
    const auto [fused_us, unfused_us] =
        simulate_both(plan, Implementation::fused_mm_reducescatter, cluster, n);
    // n = 8192 fuses well; n = 2048 is near the crossover (the 7 adds and launches eat
    // what is hidden): the simulator must order the two as the analytic model does.
    EXPECT_EQ(fused_us < unfused_us, c.fused_cost_us < c.unfused_cost_us) << "n " << n;
    if (n == 8192) {
      EXPECT_LT(fused_us, unfused_us);
    }
  }
}

TEST(FusedMatmulSimulation, EmulatedReduceScatterEqualsTheUnfusedOne) {
  // 10 rows over 8 ranks (blocks of 2, 2, 2, 2, 2, 0, 0, 0), fp32, carried through SimGrid.
  const OpProblem p = row_parallel(10, 16, 6, DType::fp32);
  const ClusterSpec cluster = testing::test_cluster(1);
  const strategies::AnalyticCostModel model(cluster);
  int partial = -1;
  for (const auto& c : strategies::build_plan(p, model).candidates)
    if (c.kept() && std::isfinite(c.cost_us) && to_string(c.output_placements) == "P(sum)")
      partial = c.index;
  ASSERT_GE(partial, 0);
  const Plan plan = strategies::build_plan_for(p, model, partial);
  expect_fused_equals_unfused(plan, Implementation::fused_mm_reducescatter, cluster, 11,
                              "8 ranks, 10 rows");
}

}  // namespace
}  // namespace symmesh::sim
