// symmesh sweep on the version-1 quickstart (scenarios/version1-by-hand/quickstart.yaml,
// the quickstart before it became a version-2 training step; 1, 2 and 4 DGX H100 nodes,
// every 2-D mesh), which keeps the version-1 sweep machinery under test:
// golden summary.md / results.csv / results.json, and expectations worked out
// independently of them — the points are the hand-counted factorisations, a point's total
// is the sum of its ops, the all-reduce follows the ring closed form, and the answer is
// the smallest cluster meeting the objective, recomputed here from results.json. The sweep
// runs the collectives as the core's one-sided rings (--collectives one-sided), whose
// closed forms these tests work, and which its 9.5 us objective was set for.
//
// Regenerate the goldens (only after checking a change is intended):
//   PATH=/nonexistent build/symmesh sweep scenarios/version1-by-hand/quickstart.yaml \
//     --collectives one-sided --out /tmp/q
//   cp /tmp/q/summary.md tests/tools/golden/sweep-quickstart-v1-summary.md   (and .csv, .json)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include <set>

#include "tests/tools/quickstart_sweep_fixture.hpp"

namespace {

using namespace symmesh::testing;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// dgx-h100.yaml (its datasheet figures, dgx-h100-datasheet.yaml): NVSwitch 450 GB/s per
// GPU per direction, 1 us; between nodes one 400 Gb/s (50 GB/s) NIC per GPU, 3 us.
constexpr double kAlpha = 1e-6, kBeta = 450e9;
constexpr double kAlphaInter = 3e-6, kBetaInter = 50e9;
constexpr double kGradsBytes = 8.0 * 1024 * 1024;  // quickstart's all_reduce, 8 MiB
constexpr double kMaxTime = 9.5e-6;                // quickstart's objective

struct SweepQuickstartV1File {
  static constexpr const char* kPath = "version1-by-hand/quickstart.yaml";
  static constexpr const char* kName = "quickstart-v1";
  static constexpr const char* kArgs = " --collectives one-sided";
};
using SweepQuickstartV1 = QuickstartSweep<SweepQuickstartV1File>;

TEST_F(SweepQuickstartV1, PointsAreEveryFactorisationOfEachGpuCount) {
  expect_every_factorisation();
}

TEST_F(SweepQuickstartV1, TotalIsTheSumOfTheOpsRunInOrder) {
  for (const auto& p : json_["points"]) {
    double sum = 0;
    for (const auto& op : p["ops"]) sum += op["time_s"].get<double>();
    EXPECT_NEAR(p["total_time_s"].get<double>(), sum, 1e-9 * sum) << p["mesh"];
    ASSERT_EQ(p["ops"].size(), 3u);
  }
}

TEST_F(SweepQuickstartV1, AllReduceFollowsTheRingClosedForm) {
  // Ring all-reduce over p ranks of a node: 2(p-1) steps of alpha + (bytes/p)/beta.
  auto ring = [](int p, double alpha, double beta) {
    return 2 * (p - 1) * (alpha + kGradsBytes / p / beta);
  };
  EXPECT_NEAR(op_time(point(1, {8, 1}), "grads"), ring(8, kAlpha, kBeta),
              0.01 * ring(8, kAlpha, kBeta));
  EXPECT_NEAR(op_time(point(1, {4, 2}), "grads"), ring(4, kAlpha, kBeta),
              0.01 * ring(4, kAlpha, kBeta));
  EXPECT_NEAR(op_time(point(1, {2, 4}), "grads"), ring(2, kAlpha, kBeta),
              0.01 * ring(2, kAlpha, kBeta));
  EXPECT_EQ(op_time(point(1, {1, 8}), "grads"), 0.0);  // dp of size 1: nothing to reduce
  // 16 ranks over 2 nodes: every step waits for its slowest hop, the one between nodes:
  // GPU 7 → GPU 8 (and 15 → 0) crosses rails (GPU index 7 to 0), so it also pays the
  // default 0.5 us spine_latency (docs/scenario-format.md).
  const double alpha_cross_rail = kAlphaInter + 0.5e-6;
  EXPECT_NEAR(op_time(point(2, {16, 1}), "grads"), ring(16, alpha_cross_rail, kBetaInter),
              0.01 * ring(16, alpha_cross_rail, kBetaInter));
  // The put_signal from GPU 0 to GPU 4 stays in node 0 at every size: alpha + 1 MiB/beta.
  for (const auto& p : json_["points"])
    EXPECT_NEAR(op_time(p, "handoff"), kAlpha + 1048576.0 / kBeta, 0.005 * 3.33e-6) << p["mesh"];
}

TEST_F(SweepQuickstartV1, AnswerIsTheSmallestClusterMeetingTheObjective) {
  // Recomputed from the points: fewest GPUs among those within 9.5 us, then the fastest.
  const auto& points = json_["points"];
  int best = -1;
  for (int i = 0; i < static_cast<int>(points.size()); ++i) {
    const double t = points[i]["total_time_s"].get<double>();
    EXPECT_EQ(points[i]["meets_objective"].get<bool>(), t <= kMaxTime) << i;
    if (t > kMaxTime) continue;
    if (best < 0 || points[i]["gpus"] < points[best]["gpus"] ||
        (points[i]["gpus"] == points[best]["gpus"] &&
         t < points[best]["total_time_s"].get<double>()))
      best = i;
  }
  ASSERT_GE(best, 0);
  const auto& answer = json_["answer"];
  EXPECT_EQ(answer["met"], true);
  EXPECT_EQ(answer["point"], best);
  EXPECT_EQ(answer["nodes"], points[best]["nodes"]);
  EXPECT_EQ(answer["gpus"], points[best]["gpus"]);
  EXPECT_EQ(answer["mesh"], points[best]["mesh"]);
  EXPECT_NEAR(answer["objective_max_time_s"].get<double>(), kMaxTime, 1e-18);
  // Every 8-GPU point misses it, so the answer is bigger than one node.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(points[i]["meets_objective"], false) << i;
  ASSERT_EQ(answer["strategies"].size(), 1u);
  EXPECT_EQ(answer["strategies"][0]["name"], "proj");
  EXPECT_EQ(answer["strategies"][0]["strategy"], points[best]["ops"][0]["strategy"]);
}

TEST_F(SweepQuickstartV1, PointsCarryTheKeysOfSimulateJson) {
  const auto& p = point(1, {2, 4});
  for (const char* key : {"nodes", "gpus", "mesh", "total_time_s", "meets_objective", "ops"})
    EXPECT_TRUE(p.contains(key)) << key;
  // At the scenario's own size the ops are exactly what `symmesh simulate --json` reports.
  const auto run = run_symmesh("simulate " + kScenarioDir +
                               "version1-by-hand/quickstart.yaml --collectives one-sided --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto simulate = nlohmann::json::parse(run.out);
  expect_same_json(p["ops"], simulate["ops"], "ops");
  EXPECT_NEAR(p["total_time_s"].get<double>(), simulate["total_time_s"].get<double>(), 1e-15);
}

TEST_F(SweepQuickstartV1, CsvHasTheDocumentedColumnsAndOneRowPerPointAndOp) {
  const auto rows = parse_csv(read_file((dir_ / "results.csv").string()));
  const std::vector<std::string> columns{"nodes",
                                         "gpus",
                                         "mesh",
                                         "status",
                                         "total_time_s",
                                         "priced_time_s",
                                         "meets_objective",
                                         "tokens_per_s_per_gpu",
                                         "mfu",
                                         "recompute",
                                         "op",
                                         "kind",
                                         "time_s",
                                         "comm_time_s",
                                         "compute_time_s",
                                         "peak_memory_bytes_per_rank",
                                         "bytes",
                                         "input_placements",
                                         "output_placements",
                                         "reason"};
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0], columns);
  ASSERT_EQ(rows.size(), 1 + 15 * 3u);
  size_t r = 1;
  // A cell by its documented column name.
  const auto at = [&](const std::vector<std::string>& row, const char* column) {
    const auto it = std::find(columns.begin(), columns.end(), column);
    return row.at(static_cast<size_t>(it - columns.begin()));
  };
  for (const auto& p : json_["points"])
    for (const auto& op : p["ops"]) {
      const auto& row = rows[r++];
      ASSERT_EQ(row.size(), columns.size());
      EXPECT_EQ(at(row, "mesh"), std::to_string(p["mesh"][0].get<int>()) + "x" +
                                     std::to_string(p["mesh"][1].get<int>()));
      EXPECT_EQ(at(row, "op"), op["name"]);
      // shortest round trip
      EXPECT_EQ(std::stod(at(row, "time_s")), op["time_s"].get<double>());
      // version 1 (no planned dataflow to price) and not a model scenario: no price,
      // tokens/s, MFU or recomputation
      EXPECT_EQ(at(row, "priced_time_s"), "");
      EXPECT_EQ(at(row, "tokens_per_s_per_gpu"), "");
      EXPECT_EQ(at(row, "mfu"), "");
      EXPECT_EQ(at(row, "recompute"), "");
      EXPECT_EQ(at(row, "meets_objective"), p["meets_objective"].get<bool>() ? "true" : "false");
    }
  EXPECT_EQ(at(rows[1], "input_placements"), "S(0),R x R,S(1)");  // quoted: it holds commas
}

TEST_F(SweepQuickstartV1, MatchesTheGoldenFiles) {
  EXPECT_EQ(read_file((dir_ / "summary.md").string()),
            read_file(kGoldenDir + "sweep-quickstart-v1-summary.md"));
  expect_same_json(
      json_, nlohmann::json::parse(read_file(kGoldenDir + "sweep-quickstart-v1-results.json")),
      "results");
  expect_same_csv(read_file((dir_ / "results.csv").string()),
                  read_file(kGoldenDir + "sweep-quickstart-v1-results.csv"), "results.csv");
}

TEST_F(SweepQuickstartV1, PrintsTheAnswerThenTheTable) {
  EXPECT_THAT(run_.out,
              StartsWith("Answer: 2 nodes (16 GPUs), mesh 1x16 (dp,tp) meets the 9.5 us"));
  const auto second = run_.out.find('\n') + 1;
  EXPECT_EQ(run_.out.substr(second, 12), "Strategies: ");
  EXPECT_THAT(
      run_.out,
      HasSubstr(
          "nodes  GPUs  mesh  total (us)  meets 9.5 us  proj (us)  handoff (us)  grads (us)"));
  EXPECT_THAT(run_.out, HasSubstr("Outputs in " + dir_.string()));
  // Not a terminal: no progress bar.
  EXPECT_THAT(run_.err, ::testing::Not(HasSubstr("points ")));
}

TEST_F(SweepQuickstartV1, WithoutGnuplotWritesDataAndScriptsAndSaysHowToRender) {
  EXPECT_THAT(run_.err, HasSubstr("gnuplot not found"));
  EXPECT_THAT(run_.err, HasSubstr("gnuplot step-time.gp breakdown.gp"));
  EXPECT_EQ(std::count(run_.err.begin(), run_.err.end(), '\n'), 1) << run_.err;
  for (const char* f : {"summary.md", "results.csv", "results.json", "best-trace.json",
                        "step-time.dat", "step-time.gp", "breakdown.dat", "breakdown.gp"})
    EXPECT_TRUE(fs::is_regular_file(dir_ / f)) << f;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    const std::string ext = entry.path().extension().string();
    EXPECT_TRUE(ext != ".svg" && ext != ".png" && ext != ".tmp") << entry.path();
  }
  // One data block per mesh kind (*x1 … *x32) and the objective line in the script.
  const std::string dat = read_file((dir_ / "step-time.dat").string());
  EXPECT_EQ(std::count(dat.begin(), dat.end(), '\n') - 2 /* header */ - 6 /* kinds */ - 10, 15)
      << dat;
  EXPECT_THAT(read_file((dir_ / "step-time.gp").string()), HasSubstr("objective 9.5 us"));
}

TEST_F(SweepQuickstartV1, TraceIsTheAnswersTimeline) {
  const auto trace = nlohmann::json::parse(read_file((dir_ / "best-trace.json").string()));
  std::set<int> ranks;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") ranks.insert(e["pid"].get<int>());
  // 16 GPUs; rank 0 and 4 run the put, all of them the matmul.
  EXPECT_EQ(ranks.size(), 16u);
}

}  // namespace
