// The overlapped all-gather + mm through the commands: plan, simulate and sweep say which
// implementation runs and with how many chunks, and --no-fuse turns it off everywhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/tools/run_symmesh.hpp"

using symmesh::testing::run_symmesh;
using ::testing::HasSubstr;

namespace {

const std::string kScenarios = std::string(SYMMESH_SOURCE_DIR) + "/scenarios/";
// Sequence-parallel a into a column-parallel b on 8 GPUs: the all-gather of a (128 MiB)
// is worth hiding under the 0.6 ms matmul (tests/strategies/fusion_choice_test.cpp).
const std::string kAsyncTp =
    "plan --op mm --a 8192x8192 --b 8192x28672 --mesh 8 --in 'S(0)' 'S(1)' --dtype bf16 "
    "--cost-model analytic --cluster dgx-h100.yaml ";

TEST(FusedMatmulCommands, PlanSaysFusedAndNoFuseTurnsItOff) {
  const auto fused = run_symmesh(kAsyncTp + "--json");
  ASSERT_EQ(fused.exit_code, 0) << fused.err;
  const auto j = nlohmann::json::parse(fused.out);
  EXPECT_EQ(j["chosen"]["implementation"], "fused-allgather-mm");
  EXPECT_GE(j["chosen"]["chunks"].get<int>(), 1);
  const auto plain = run_symmesh(kAsyncTp + "--json --no-fuse");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto k = nlohmann::json::parse(plain.out);
  EXPECT_EQ(k["chosen"]["implementation"], "unfused");
  EXPECT_EQ(k["chosen"]["chunks"], 1);
  // Same strategy, priced both ways: the fused one is cheaper.
  EXPECT_EQ(j["chosen"]["index"], k["chosen"]["index"]);
  EXPECT_LT(j["chosen"]["cost_us"].get<double>(), k["chosen"]["cost_us"].get<double>());

  const auto text = run_symmesh(kAsyncTp + "--explain");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("implementation: fused-allgather-mm"));
  EXPECT_THAT(text.out, HasSubstr("all_gather (fused into the mm)"));
  // The replicated candidate's 6.2 ms is the table's largest time: the table is in ms
  // (reports/text_table.hpp's one rule).
  EXPECT_THAT(text.out, HasSubstr("unfused (ms)  fused (ms)"));
}

TEST(FusedMatmulCommands, SimulateRunsThemFusedAndFasterThanNoFuse) {
  const std::string scenario = kScenarios + "async-tp-linear.yaml";
  const auto fused = run_symmesh("simulate " + scenario + " --json");
  ASSERT_EQ(fused.exit_code, 0) << fused.err;
  const auto plain = run_symmesh("simulate " + scenario + " --json --no-fuse");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto fj = nlohmann::json::parse(fused.out), pj = nlohmann::json::parse(plain.out);
  // fc1 all-gathers its activations, fc2 reduce-scatters its output back to rows.
  const char* kinds[] = {"fused-allgather-mm", "fused-mm-reducescatter"};
  for (int i : {0, 1}) {
    const auto& f = fj["ops"][i];
    const auto& p = pj["ops"][i];
    EXPECT_EQ(f["strategy"]["implementation"], kinds[i]) << i;
    EXPECT_GE(f["strategy"]["chunks"].get<int>(), 1);
    EXPECT_EQ(p["strategy"]["implementation"], "unfused");
    EXPECT_EQ(f["strategy"]["input_placements"], p["strategy"]["input_placements"]);
    // The collective (~0.27 ms) is hidden under the matmul (~0.7 ms): fused takes the
    // matmul and a little more, unfused the sum.
    EXPECT_LT(f["time_s"].get<double>(), p["time_s"].get<double>()) << i;
    EXPECT_GT(f["time_s"].get<double>(), p["compute_time_s"].get<double>()) << i;
  }
  EXPECT_EQ(fj["ops"][1]["strategy"]["out_placements"], nlohmann::json::parse(R"j(["S(0)"])j"));
  EXPECT_EQ(fj["ops"][1]["strategy"]["output_placements"],
            nlohmann::json::parse(R"j(["P(sum)"])j"));

  const auto emulated = run_symmesh("simulate " + scenario + " --emulate");
  EXPECT_EQ(emulated.exit_code, 2);  // 8192x32768 is far too large to emulate
}

TEST(FusedMatmulCommands, PlanTakesTheOutputTarget) {
  const std::string row_parallel =
      "plan --op mm --a 8192x8192 --b 8192x8192 --mesh 8 --in 'S(1)' 'S(0)' --out-in 'S(0)' "
      "--dtype bf16 --cost-model analytic --cluster dgx-h100.yaml ";
  const auto r = run_symmesh(row_parallel + "--json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["output_target"], nlohmann::json::parse(R"j(["S(0)"])j"));
  EXPECT_EQ(j["chosen"]["implementation"], "fused-mm-reducescatter");
  const auto& out = j["chosen"]["output_redistribution"];
  EXPECT_EQ(out["input"], -1);
  EXPECT_EQ(out["steps"][0]["collective"], "reduce_scatter");
  for (const auto& c : j["candidates"])
    if (c.contains("output_cost_us") && !c["output_cost_us"].is_null() &&
        c["output_placements"] == nlohmann::json::parse(R"j(["S(0)"])j")) {
      EXPECT_EQ(c["output_cost_us"], 0.0);  // already there
    }
  const auto text = run_symmesh(row_parallel + "--explain");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("-> out 8192x8192 [to S(0)]"));
  EXPECT_THAT(text.out, HasSubstr("reduce_scatter (fused into the mm)"));
  EXPECT_THAT(text.out, HasSubstr("(mm+rs x"));
}

TEST(FusedMatmulCommands, EmulatedOutputTargetMatchesTheUnshardedProduct) {
  // A small row-parallel op whose output must end up as rows, emulated: the result after
  // the output's redistribution is checked against the unsharded product.
  const auto dir = std::filesystem::temp_directory_path() / "symmesh-out-placements";
  std::filesystem::create_directories(dir);
  const auto path = (dir / "rows.yaml").string();
  std::ofstream(path) << "name: rows\ncluster: dgx-h100.yaml\nmesh: {shape: [2, 4]}\n"
                         "dtype: fp32\ncost_model: analytic\nworkload:\n"
                         "  - {name: fc2, op: mm, a: [10, 12], b: [12, 6], a_placements: [R, S(1)],"
                         " b_placements: [R, S(0)], out_placements: [R, S(0)]}\n";
  for (const char* flags : {"", " --no-fuse"}) {
    const auto r = run_symmesh("simulate " + path + " --emulate --json" + flags);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto op = nlohmann::json::parse(r.out)["ops"][0];
    EXPECT_EQ(op["strategy"]["out_placements"], nlohmann::json::parse(R"j(["R", "S(0)"])j"));
    EXPECT_LT(op["max_abs_error"].get<double>(), 1e-4) << flags;
  }
  std::filesystem::remove_all(dir);
}

TEST(FusedMatmulCommands, SweepAndRunAcceptNoFuse) {
  const auto dir = std::filesystem::temp_directory_path() / "symmesh-fused-sweep";
  std::filesystem::remove_all(dir);
  const auto sweep = run_symmesh("sweep " + kScenarios +
                                 "quickstart.yaml --no-fuse --jobs 2 --out " + dir.string());
  EXPECT_EQ(sweep.exit_code, 0) << sweep.err;
  std::filesystem::remove_all(dir);

  // The hardware plan (no GPU needed): the fused ring's puts on the second stream, or none.
  const std::string scenario = kScenarios + "async-tp-linear.yaml";
  const auto fused = run_symmesh("run " + scenario + " --dry-run");
  const auto plain = run_symmesh("run " + scenario + " --dry-run --no-fuse");
#ifndef SYMMESH_HAVE_HW
  EXPECT_EQ(fused.exit_code, 1);
  EXPECT_EQ(plain.exit_code, 1);
#else
  ASSERT_EQ(fused.exit_code, 0) << fused.err;
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  // Rank 0 puts its own 1024-row shard (1024 x 8192 bf16 = 16 MiB) straight from its
  // buffer, then forwards 6 more; each lands as an event the matmul stream waits for.
  EXPECT_THAT(fused.out, HasSubstr("[main-comm] put 16.00 MiB local+0 -> rank 1"));
  EXPECT_THAT(fused.out, HasSubstr("# fc1: fused all_gather+mm step 7/7"));
  EXPECT_THAT(fused.out, HasSubstr("[main] wait event 1   # fc1: chunk landed"));
  EXPECT_THAT(plain.out, ::testing::Not(HasSubstr("main-comm")));
  EXPECT_THAT(plain.out, HasSubstr("ring all_gather step 7/7"));
#endif
}

}  // namespace
