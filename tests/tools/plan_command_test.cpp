// symmesh plan end to end: the binary's output and exit codes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/tools/run_symmesh.hpp"

using symmesh::testing::run_symmesh;
using ::testing::HasSubstr;

TEST(PlanCommand, WorkedCaseContractingShardGivesPartialSum) {
  // Reference §5 row 3: 1-D mesh of 4, mm (6,8)@(8,12), S(1) x S(0) -> P(sum), inputs kept.
  const auto r = run_symmesh("plan --op mm --a 6x8 --b 8x12 --mesh 4 --in 'S(1)' 'S(0)' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["op"], "mm");
  EXPECT_EQ(j["mesh"], nlohmann::json::array({4}));
  EXPECT_EQ(j["cost_model"], "dtensor");
  EXPECT_EQ(j["chosen"]["output_placements"], nlohmann::json::array({"P(sum)"}));
  EXPECT_EQ(j["chosen"]["input_placements"], nlohmann::json::parse(R"j([["S(1)"],["S(0)"]])j"));
  EXPECT_EQ(j["chosen"]["cost_us"], 0.0);
  EXPECT_TRUE(j["chosen"]["redistributions"].empty());
  EXPECT_EQ(j["candidates"].size(), 8u);  // R, [P,S1,S0], [S0,S0,R], [S1,R,S1], 4 linearity
  EXPECT_EQ(j["inputs"][0]["shape"], nlohmann::json::array({6, 8}));
  EXPECT_EQ(j["inputs"][1]["placements"], nlohmann::json::array({"S(0)"}));
}

TEST(PlanCommand, JsonStepCarriesCollectiveBytesAndCost) {
  // a S(0) x b S(0) on 4 ranks: the cheapest strategy is [S0,S0,R], all-gathering b.
  // b = 8x12 fp32 = 384 B; each rank holds 96 B and sends 3 x 96 = 288 B in a ring.
  // DTensor cost: 6.6 + 3*0.6 + 1e6 * (384/2^30) * 3/4 / 87.7 = 8.4031 us.
  const auto r = run_symmesh("plan --op mm --a 6x8 --b 8x12 --mesh 4 --in 'S(0)' 'S(0)' --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["chosen"]["redistributions"].size(), 1u);
  const auto& redist = j["chosen"]["redistributions"][0];
  EXPECT_EQ(redist["input"], 1);
  EXPECT_EQ(redist["from"], nlohmann::json::array({"S(0)"}));
  EXPECT_EQ(redist["to"], nlohmann::json::array({"R"}));
  const auto& step = redist["steps"][0];
  EXPECT_EQ(step["mesh_dim"], 0);
  EXPECT_EQ(step["collective"], "all_gather");
  EXPECT_EQ(step["bytes"], 288);
  EXPECT_NEAR(step["cost_us"].get<double>(), 8.4031, 1e-3);
}

TEST(PlanCommand, HumanOutputNamesTheChoiceAndExplainListsCandidates) {
  const auto r = run_symmesh(
      "plan --op mm --a 64x32 --b 32x64 --mesh 2x2x2 --in 'S(0),R,R' 'R,R,R' --explain");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("a S(0),R,R  b R,R,R  ->  out S(0),R,R"));
  EXPECT_THAT(r.out, HasSubstr("512 of 512 kept"));
  EXPECT_THAT(r.out, HasSubstr("<- chosen"));
}

TEST(PlanCommand, LinearTakesTheWeightAsNByK) {
  // linear(a [6, 8], b [12, 8]) = a @ bᵀ: out 6x12. a S(0) with b R is already a strategy
  // ([S(0), S(0), R], cost 0: DTensor keeps the inputs where they are); 6 rows over 4 ranks
  // are 2, 2, 2 and 0.
  const auto r = run_symmesh("plan --op linear --a 6x8 --b 12x8 --mesh 4 --in 'S(0)' R");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("-> out 6x12"));
  EXPECT_THAT(r.out, HasSubstr("a S(0)  b R  ->  out S(0)   cost 0.000 us"));
  EXPECT_THAT(r.out, HasSubstr("ranks 0-2: m=2 n=12 k=8"));
  EXPECT_THAT(r.out, HasSubstr("rank 3: m=0 n=12 k=8"));
  // With a bias [12] (the last input, as in torch.nn.functional.linear).
  const auto j = run_symmesh(
      "plan --op linear --a 6x8 --b 12x8 --bias 12 --bias-in R --mesh 4 --in R 'S(0)' --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto plan = nlohmann::json::parse(j.out);
  EXPECT_EQ(plan["inputs"][2]["name"], "bias");
  EXPECT_EQ(plan["output_shape"], nlohmann::json::array({6, 12}));
  // b's rows are the output's columns: b S(0) gives out S(1) and a bias S(0), no traffic.
  EXPECT_EQ(plan["chosen"]["output_placements"], nlohmann::json::array({"S(1)"}));
  EXPECT_EQ(plan["chosen"]["input_placements"],
            nlohmann::json::parse(R"j([["R"],["S(0)"],["S(0)"]])j"));
}

TEST(PlanCommand, VersionAndHelp) {
  const auto v = run_symmesh("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_THAT(v.out, HasSubstr("symmesh 0.1.0"));
  const auto h = run_symmesh("--help");
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_THAT(h.out, HasSubstr("plan"));
}

struct BadPlanCase {
  const char* args;
  const char* needle;  // what the message must name
};

class PlanCommandBadInput : public ::testing::TestWithParam<BadPlanCase> {};

TEST_P(PlanCommandBadInput, ExitsTwoNamingTheArgument) {
  const auto r = run_symmesh(GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(GetParam().needle));
  EXPECT_TRUE(r.out.empty()) << "nothing half-written on stdout: " << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PlanCommandBadInput,
    ::testing::Values(
        BadPlanCase{"plan --op conv --a 6x8 --b 8x12 --mesh 4 --in R R", "--op"},
        BadPlanCase{"plan --op mm --a 6x8x2 --b 8x12 --mesh 4 --in R R", "--a"},
        BadPlanCase{"plan --op bmm --a 6x8 --b 8x12 --mesh 4 --in R R", "3-D"},
        BadPlanCase{"plan --op mm --a 6x8 --b 9x12 --mesh 4 --in R R", "inner dims"},
        BadPlanCase{"plan --op mm --a 6x8 --b 8x12 --mesh 2x2 --in R R", "placements"},
        BadPlanCase{"plan --op mm --a 6x8 --b 8x12 --mesh 4 --in 'S(2)' R", "beyond the rank"},
        BadPlanCase{"plan --op mm --a 6x8 --b 8x12 --mesh 4 --in R R --dtype fp12", "--dtype"},
        BadPlanCase{"plan --op mm --a 6x8 --b 8x12 --mesh 4 --in 'P(max)' R", "max"},
        BadPlanCase{"plan --op mm --a 6x8 --b 8x12 --mesh 0x2 --in R,R R,R", "--mesh"},
        BadPlanCase{"plan --op mm --a 6x-8 --b 8x12 --mesh 4 --in R R", "--a"},
        BadPlanCase{"plan --op addmm --a 6x8 --b 8x12 --mesh 4 --in R R", "--bias"},
        BadPlanCase{"plan --op mm --a 6x8 --b 8x12 --mesh 4 --in R R --bias 12", "--bias"},
        BadPlanCase{"plan --op addmm --a 6x8 --b 8x12 --bias 7 --bias-in R --mesh 4 --in R R",
                    "broadcast"},
        BadPlanCase{"plan --op mm --a 6x8 --b 8x12 --mesh 4 --in R", "--in"},
        BadPlanCase{"plan --op mm --a 6x8 --b 8x12 --mesh 4 --in R R --cost-model magic",
                    "--cost-model"},
        BadPlanCase{"plan --op mm --a 6x8 --b 8x12 --mesh 4 --in R R --gpus-per-host 0",
                    "--gpus-per-host"},
        BadPlanCase{"plan --op mm --b 8x12 --mesh 4 --in R R", "--a"},
        BadPlanCase{"frobnicate", "frobnicate"}),
    [](const ::testing::TestParamInfo<BadPlanCase>& info) {
      return "case" + std::to_string(info.index);
    });

TEST(PlanCommand, AutoInputsAreShardedByThePlannerAndTheFullCostIsPrinted) {
  // Llama-3-8B's gate projection, 8192 tokens: [8192, 4096] x [4096, 14336] bf16 on the 8
  // GPUs of a DGX H100 as its datasheet gives it (989.4 TFLOP/s, dgx-h100-datasheet.yaml:
  // no fitted efficiency, no waves). The roofline (core/roofline.hpp) is
  //   2mnk / (989.4e12 x 0.85 s(m) s(n) s(k)) + 5 us,   s(x) = x / (x + 64).
  // Given R, R (DTensor's rules drop every Shard strategy: nothing is sharded) all eight
  // GPUs compute the whole product: 9.620e11 FLOP, efficiency 0.85 x (8192/8256) x
  // (14336/14400) x (4096/4160) = 0.82675, so 1,176.1 + 5 = 1,181.1 us.
  // With b auto, the planner splits its columns (S(1), n = 1792): 1.2025e11 FLOP per GPU at
  // 0.85 x 0.99225 x 0.96552 x 0.98462 = 0.80178: 151.6 + 5 = 156.6 us (rows instead,
  // m = 1024, would take 160.0 us).
  const std::string common =
      "plan --op mm --a 8192x4096 --b 4096x14336 --mesh 8 --dtype bf16 --cost-model analytic "
      "--cluster dgx-h100-datasheet.yaml --json --in ";
  const auto given = run_symmesh(common + "R R");
  ASSERT_EQ(given.exit_code, 0) << given.err;
  const auto g = nlohmann::json::parse(given.out);
  EXPECT_NEAR(g["full_cost"]["cost_us"].get<double>(), 1181.1, 0.5);
  EXPECT_NEAR(g["full_cost"]["compute_us"].get<double>(), 1181.1, 0.5);
  EXPECT_EQ(g["full_cost"]["comm_us"].get<double>(), 0.0);

  const auto chosen = run_symmesh(common + "R auto");
  ASSERT_EQ(chosen.exit_code, 0) << chosen.err;
  const auto c = nlohmann::json::parse(chosen.out);
  EXPECT_EQ(c["auto_inputs"], nlohmann::json::array({"b"}));
  EXPECT_EQ(c["chosen"]["input_placements"], nlohmann::json::parse(R"j([["R"],["S(1)"]])j"));
  EXPECT_NEAR(c["full_cost"]["cost_us"].get<double>(), 156.6, 0.2);
  EXPECT_TRUE(c["chosen"]["redistributions"].empty());

  const auto text = run_symmesh(
      "plan --op mm --a 8192x4096 --b 4096x14336 --mesh 8 --dtype bf16 --cost-model analytic "
      "--cluster dgx-h100-datasheet.yaml --in R auto");
  EXPECT_THAT(text.out, HasSubstr("placed by the planner: b S(1)"));
  EXPECT_THAT(text.out, HasSubstr("full cost: 156.59"));
}

namespace {

// Bug: the layout search priced a free weight's placements group by group and stopped at
// the first group the model refused outright for memory. Llama 3.1 8B's output projection
// over 524,288 tokens (64 sequences of 8192) on 32 DGX H100 nodes: b stored Partial makes
// every output whole (524288 x 128256 bf16 = 125 GiB per GPU) and was refused, so every
// 8B step past ~300 k tokens was refused whatever the GPU count. Worked by hand: a is
// already S(0),S(0) (2,048 rows on each of 256 GPUs); b replicated needs no communication
// and the local mm's output is 2048 x 128256 x 2 B = 0.49 GiB: the cheapest placement.
TEST(PlanCommand, AFreeWeightIsPlacedWhereItFitsWhenOtherPlacementsCannot) {
  const std::string cluster = (std::filesystem::temp_directory_path() /
                               ("symmesh_plan_32_nodes_" + std::to_string(getpid()) + ".yaml"))
                                  .string();
  std::ofstream(cluster) << "base: " << SYMMESH_SOURCE_DIR
                         << "/scenarios/clusters/dgx-h100.yaml\nnodes: 32\n";
  const auto r = run_symmesh(
      "plan --op mm --a 524288x4096 --b 4096x128256 --mesh 32x8 --in 'S(0),S(0)' auto "
      "--dtype bf16 --cost-model analytic --cluster " +
      cluster + " --json");
  std::filesystem::remove(cluster);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& chosen = j["chosen"];
  EXPECT_EQ(chosen["input_placements"][1], nlohmann::json({"R", "R"})) << chosen.dump();
  EXPECT_EQ(chosen["output_placements"], nlohmann::json({"S(0)", "S(0)"})) << chosen.dump();
}

}  // namespace
