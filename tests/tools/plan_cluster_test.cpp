// symmesh plan with a cluster: the analytic and simulated cost models end to end.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "tests/tools/run_symmesh.hpp"

using symmesh::testing::run_symmesh;
using ::testing::HasSubstr;

namespace {

const std::string kSquare =
    "plan --op mm --a 8192x8192 --b 8192x8192 --mesh 8 --in 'S(0)' 'S(0)' --dtype bf16 ";

TEST(PlanCluster, AnalyticNeedsACluster) {
  for (const char* model : {"analytic", "simulated"}) {
    const auto r = run_symmesh(kSquare + "--cost-model " + model);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("--cluster"));
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  const auto missing = run_symmesh(kSquare + "--cost-model analytic --cluster no-such.yaml");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("no-such.yaml"));
  const auto conflict =
      run_symmesh(kSquare + "--cost-model analytic --cluster dgx-h100.yaml --gpus-per-host 4");
  EXPECT_EQ(conflict.exit_code, 2);
  EXPECT_THAT(conflict.err, HasSubstr("--gpus-per-host"));
}

TEST(PlanCluster, ExplainShowsCommunicationComputeAndMemory) {
  // The shipped name resolves under scenarios/. Candidate [S(0) | S(0), R] costs
  // 282.995 us of all-gather and 181.363 us of compute and needs 304 MiB per GPU (by hand
  // in tests/strategies/analytic_cost_model_test.cpp, on the datasheet figures).
  const auto r = run_symmesh(kSquare +
                             "--cost-model analytic --cluster clusters/dgx-h100-datasheet.yaml "
                             "--explain");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("cost model analytic, cluster dgx-h100-datasheet (1 node x 8 GPUs)"));
  // The fully replicated candidate, over 1 ms, is the table's largest time: the table is in
  // ms (reports/text_table.hpp's rule), three decimals.
  EXPECT_THAT(r.out, HasSubstr("comm (ms)  compute (ms)  memory/GPU"));
  // Unfused 282.995 + 181.363 = 464.358 us; it cannot be fused (b is gathered, not a). In
  // ms: 0.283, 0.181, 0.464. (JSON keeps every digit: JsonCarriesTheBreakdown.)
  EXPECT_THAT(r.out, HasSubstr("unfused (ms)  fused (ms)"));
  EXPECT_THAT(r.out, HasSubstr("0.283         0.181  304.00 MiB         0.464"));
  EXPECT_THAT(r.out, HasSubstr("infeasible: a: cannot redistribute S(0) to P(sum)"));
}

TEST(PlanCluster, JsonCarriesTheBreakdown) {
  const auto r = run_symmesh(kSquare + "--cost-model analytic --cluster dgx-h100.yaml --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cost_model"], "analytic");
  EXPECT_EQ(j["cluster"], "dgx-h100 (1 node x 8 GPUs)");
  for (const auto& c : j["candidates"]) {
    ASSERT_TRUE(c.contains("comm_us"));
    if (c["feasible"].get<bool>()) {
      EXPECT_NEAR(c["unfused_cost_us"].get<double>(),
                  c["comm_us"].get<double>() + c["compute_us"].get<double>(), 1e-9);
      // The cost is the price of the implementation it runs as.
      const bool fused = c["implementation"] == "fused-allgather-mm";
      EXPECT_EQ(c["cost_us"], fused ? c["fused_cost_us"] : c["unfused_cost_us"]);
      if (fused) EXPECT_LT(c["fused_cost_us"].get<double>(), c["unfused_cost_us"].get<double>());
    } else
      EXPECT_TRUE(c["cost_us"].is_null());
  }
}

TEST(PlanCluster, MemoryInfeasibilityIsExplained) {
  // a [262144, 8192] (S(0), R) x b [8192, 327680] (R, R): keeping the inputs needs 87 GiB.
  const auto r = run_symmesh(
      "plan --op mm --a 262144x8192 --b 8192x327680 --mesh 2x4 --in 'S(0),R' 'R,R' --dtype bf16 "
      "--cost-model analytic --cluster dgx-h100.yaml --explain");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("infeasible: needs 87.00 GiB per GPU, more than the 80.00 GiB"));
  EXPECT_THAT(r.out, HasSubstr("a S(0),S(0)  b R,R"));  // the chosen one
}

TEST(PlanCluster, SimulatedReranksTheCheapest) {
  const auto r =
      run_symmesh(kSquare + "--cost-model simulated --cluster dgx-h100.yaml --rerank 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["cost_model"], "simulated");
  int simulated = 0;
  for (const auto& c : j["candidates"])
    if (c["cost_us"].is_number()) ++simulated;
  EXPECT_EQ(simulated, 2);
}

}  // namespace

namespace {

// The chosen plan's redistribution step implementations, from plan --json.
std::vector<std::string> step_implementations(const std::string& json_text) {
  std::vector<std::string> out;
  const auto j = nlohmann::json::parse(json_text);
  for (const auto& r : j.at("chosen").at("redistributions"))
    for (const auto& s : r.at("steps")) out.push_back(s.at("implementation"));
  return out;
}

TEST(PlanCluster, ACalibratedClusterRunsPlainCollectivesAsNccl) {
  // docs/scenario-format.md, "Collectives as NCCL runs them": on a cluster with a
  // collectives: section the plain collectives are NCCL's; --collectives one-sided sets the
  // section aside, and the same step is the core's pairwise exchange again.
  const std::string cmd = kSquare + "--cost-model analytic --json --cluster ";
  const auto nccl = run_symmesh(cmd + "clusters/dgx-h100.yaml");
  ASSERT_EQ(nccl.exit_code, 0) << nccl.err;
  const auto one_sided = run_symmesh(cmd + "clusters/dgx-h100.yaml --collectives one-sided");
  ASSERT_EQ(one_sided.exit_code, 0) << one_sided.err;
  const auto datasheet = run_symmesh(cmd + "clusters/dgx-h100-datasheet.yaml");
  ASSERT_EQ(datasheet.exit_code, 0) << datasheet.err;
  const auto with = step_implementations(nccl.out);
  ASSERT_FALSE(with.empty()) << nccl.out;
  for (const std::string& s : with) EXPECT_EQ(s, "nccl");
  for (const std::string& s : step_implementations(one_sided.out)) EXPECT_NE(s, "nccl");
  for (const std::string& s : step_implementations(datasheet.out)) EXPECT_NE(s, "nccl");
  const auto bad = run_symmesh(cmd + "clusters/dgx-h100.yaml --collectives mpi");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--collectives"));
}

}  // namespace
