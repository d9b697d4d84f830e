// symmesh sweep's behaviour beyond the quickstart: the closed form on an all-reduce-only
// sweep, objectives nobody meets, no objective, points skipped at sizes where the
// workload does not fit, no `sweep:`, bad input and unwritable output folders (exit 2,
// nothing written), reruns and interrupted runs, --jobs, the default folder, gnuplot.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <tuple>

#include "tests/llama70b_sized_step.hpp"
#include "tests/tools/sweep_test_support.hpp"

namespace {

using namespace symmesh::testing;
using ::testing::HasSubstr;

nlohmann::json results_json(const fs::path& dir) {
  return nlohmann::json::parse(read_file((dir / "results.json").string()));
}

TEST(SweepCommand, AllReduceOnlySweepMatchesTheRingClosedForm) {
  // 64 MiB all-reduced over the 8 GPUs of one DGX H100 (1-D mesh) by the core's one-sided
  // ring (--collectives one-sided sets dgx-h100.yaml's NCCL figures aside): one point,
  // 2 x 7 x (1 us + 8 MiB / 450 GB/s) = 274.6 us.
  const auto scenario = write_temp_scenario("allreduce", R"y(
name: allreduce-only
cluster: )y" + kScenarioDir + R"y(clusters/dgx-h100.yaml
mesh: {shape: [8], names: [dp]}
workload:
  - {name: grads, op: all_reduce, bytes: 64 MiB, mesh_dim: dp}
sweep: {nodes: [1, 2], mesh: auto}
)y");
  const auto dir = fresh_dir("allreduce");
  const auto r = run_sweep_shell("", scenario + " --collectives one-sided --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = results_json(dir);
  ASSERT_EQ(j["points"].size(), 2u);  // 1-D: one shape per node count
  const double expected = 2 * 7 * (1e-6 + 8.0 * 1024 * 1024 / 450e9);
  EXPECT_NEAR(j["points"][0]["total_time_s"].get<double>(), expected, expected * 0.01);
  // 16 ranks over 2 nodes: every step waits for the hop between nodes (3 us, 50 GB/s).
  const double across = 2 * 15 * (3e-6 + 4.0 * 1024 * 1024 / 50e9);
  EXPECT_NEAR(j["points"][1]["total_time_s"].get<double>(), across, across * 0.01);
  // No objective: the fastest point per GPU count, and the fastest overall.
  EXPECT_TRUE(j["answer"]["met"].is_null());
  EXPECT_EQ(j["answer"]["point"], 0);
  ASSERT_EQ(j["answer"]["fastest_per_gpu_count"].size(), 2u);
  EXPECT_EQ(j["answer"]["fastest_per_gpu_count"][1]["gpus"], 16);
  EXPECT_THAT(r.out, HasSubstr("Answer (no objective): fastest 1 node (8 GPUs), mesh 8 (dp)"));
  EXPECT_TRUE(j["points"][0]["meets_objective"].is_null());
}

TEST(SweepCommand, AnObjectiveNobodyMeetsIsAnAnswerWithTheMiss) {
  const auto scenario = quickstart_with(
      "unmeetable", "sweep: {nodes: [1], mesh: auto}\nobjective: {max_time: 1 us}\n");
  const auto dir = fresh_dir("unmeetable");
  const auto r = run_sweep_shell("", scenario + " --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("no point meets the 1 us objective"));
  const auto j = results_json(dir);
  const auto& answer = j["answer"];
  EXPECT_EQ(answer["met"], false);
  // The closest is the fastest point, recomputed here.
  size_t fastest = 0;
  for (size_t i = 0; i < j["points"].size(); ++i) {
    EXPECT_EQ(j["points"][i]["meets_objective"], false);
    if (j["points"][i]["total_time_s"] < j["points"][fastest]["total_time_s"]) fastest = i;
  }
  EXPECT_EQ(answer["point"], fastest);
  const double t = j["points"][fastest]["total_time_s"].get<double>();
  EXPECT_NEAR(answer["miss_s"].get<double>(), t - 1e-6, 1e-15);
  EXPECT_NEAR(answer["miss_percent"].get<double>(), 100 * (t - 1e-6) / 1e-6, 1e-9);
  char line[128];
  std::snprintf(line, sizeof line, "(%.1f%%) over", 100 * (t - 1e-6) / 1e-6);
  EXPECT_THAT(r.out, HasSubstr(line));
}

// A point whose simulation runs past --time-limit is skipped with that reason (1 µs: every
// point is past it by the time it is looked at), and with every point skipped the sweep
// answers nothing: exit 2 with the reason. The quickstart on one node: its 4 meshes of 8.
TEST(SweepCommand, PointsPastTheTimeLimitAreSkipped) {
  const auto dir = fresh_dir("time-limit");
  const auto r = run_sweep_shell("", quickstart_on_one_node("time_limit") +
                                         " --jobs 1 --time-limit 0.000001 --out " + dir.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("no point of the sweep can be simulated (4 skipped)"));
  EXPECT_THAT(r.err, HasSubstr("simulation exceeded its wall-clock limit of 1e-06 s"));
  const auto bad = run_sweep_shell("", kScenarioDir + "quickstart.yaml --time-limit -1");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--time-limit"));
}

TEST(SweepCommand, PointsInvalidAtTheirSizeAreSkippedWithTheReason) {
  // The put goes to rank 12: fine on 2 and 4 nodes, outside the cluster on 1.
  const auto scenario = write_temp_scenario("skips", R"y(
name: skips
cluster: {base: )y" + kScenarioDir + R"y(clusters/dgx-h100.yaml, nodes: 2}
mesh: {shape: [16]}
dtype: fp32
workload:
  - {name: tiny, op: mm, a: [4, 6], b: [6, 3], a_placements: ["S(0)"], b_placements: ["R"]}
  - {name: far, op: put_signal, bytes: 1 KiB, src: 0, dst: 12}
sweep: {nodes: [1, 2, 4]}
objective: {max_time: 1 s}
)y");
  const auto dir = fresh_dir("skips");
  const auto r = run_sweep_shell("", scenario + " --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = results_json(dir);
  ASSERT_EQ(j["points"].size(), 3u);
  EXPECT_EQ(j["points"][0]["status"], "skipped");
  EXPECT_THAT(j["points"][0]["reason"].get<std::string>(), HasSubstr("rank 12"));
  EXPECT_FALSE(j["points"][0].contains("ops"));
  EXPECT_EQ(j["points"][1]["status"], "ok");
  EXPECT_EQ(j["answer"]["gpus"], 16);  // the smallest cluster that can run it at all
  EXPECT_THAT(r.out, HasSubstr("skipped: 1 node, mesh 8: op 'far' puts from rank 0 to rank 12"));
  const auto csv = parse_csv(read_file((dir / "results.csv").string()));
  EXPECT_EQ(csv[1][3], "skipped");
  EXPECT_THAT(csv[1].back(), HasSubstr("rank 12"));
  EXPECT_THAT(read_file((dir / "summary.md").string()), HasSubstr("## Skipped points"));
}

TEST(SweepCommand, EveryPointSkippedIsBadInput) {
  const auto scenario = write_temp_scenario("all_skipped", R"y(
name: all-skipped
cluster: {base: )y" + kScenarioDir + R"y(clusters/dgx-h100.yaml, nodes: 2}
mesh: {shape: [16]}
workload:
  - {name: far, op: put_signal, bytes: 1 KiB, src: 0, dst: 12}
sweep: {nodes: [1]}
)y");
  const auto dir = fresh_dir("all_skipped");
  const auto r = run_sweep_shell("", scenario + " --out " + dir.string() + "/out");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("rank 12"));
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(fs::exists(fs::path(dir) / "out" / "results.json"));
}

TEST(SweepCommand, WithoutSweepItEvaluatesTheScenariosOwnSizeAndSaysSo) {
  const auto dir = fresh_dir("nosweep");
  const auto r = run_sweep_shell("", kScenarioDir + "pingpong.yaml --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("no `sweep:`, so only its own size is evaluated"));
  const auto j = results_json(dir);
  ASSERT_EQ(j["points"].size(), 1u);
  EXPECT_EQ(j["sweep"]["from_scenario"], false);
  const auto simulate = nlohmann::json::parse(read_file(kGoldenDir + "simulate-pingpong.json"));
  expect_same_json(j["points"][0]["ops"], simulate["ops"], "ops");
}

TEST(SweepCommand, BadInputIsReportedAsSimulateDoes) {
  const auto missing = run_sweep_shell("", "/nonexistent/scenario.yaml");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/scenario.yaml"));

  const auto dir = fresh_dir("typo");
  const auto typo = write_temp_scenario(
      "typo", "name: t\ncluster: clusters/dgx-h100.yaml\nmeshh: {shape: [8]}\nworkload: []\n");
  const auto r = run_sweep_shell("", typo + " --out " + dir.string() + "/out");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("typo.yaml:3:1"));
  EXPECT_THAT(r.err, HasSubstr("did you mean 'mesh'"));
  EXPECT_FALSE(fs::exists(dir / "out"));

  const auto jobs = run_sweep_shell("", kScenarioDir + "pingpong.yaml --jobs 0");
  EXPECT_EQ(jobs.exit_code, 2);
}

TEST(SweepCommand, UnwritableOutExitsTwoNamingItAndWritesNothing) {
  const auto dir = fresh_dir("unwritable");
  const fs::path file = dir / "a-file";
  std::ofstream(file) << "not a folder";
  const std::string out = (file / "sweep").string();  // under a regular file
  const auto r = run_sweep_shell("", kScenarioDir + "quickstart.yaml --out " + out);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--out"));
  EXPECT_THAT(r.err, HasSubstr(out));
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(read_file(file.string()), "not a folder");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
}

TEST(SweepCommand, RerunOverwritesCleanlyAndAnInterruptedRunLeavesNoTruncatedFile) {
  const auto dir = fresh_dir("rerun");
  const std::string args = quickstart_on_one_node("rerun") + " --out " + dir.string();
  const std::string no_gnuplot = "PATH=" + path_without_gnuplot();
  ASSERT_EQ(run_sweep_shell(no_gnuplot, args).exit_code, 0);
  const std::string summary = read_file((dir / "summary.md").string());
  const std::string csv = read_file((dir / "results.csv").string());
  const std::string json = read_file((dir / "results.json").string());

  // As if a crash had cut the files short, with a stray temporary file next to them.
  std::ofstream(dir / "results.json") << "{\"points\": [";
  std::ofstream(dir / "summary.md") << "# sym";
  std::ofstream(dir / "results.csv.tmp") << "nodes,gp";
  ASSERT_EQ(run_sweep_shell(no_gnuplot, args).exit_code, 0);
  EXPECT_EQ(read_file((dir / "summary.md").string()), summary);
  EXPECT_EQ(read_file((dir / "results.csv").string()), csv);
  EXPECT_EQ(read_file((dir / "results.json").string()), json);

  // Killed at some moment of a run (whenever that falls): each file is the old or the new
  // one, whole — never a prefix.
  for (const char* delay : {"0.05", "0.3", "0.6"}) {
    // timeout is looked up on the usual PATH; env then hides gnuplot from the sweep.
    const auto killed = run_sweep_shell(
        "timeout -s KILL " + std::string(delay) + " env PATH=" + path_without_gnuplot(), args);
    EXPECT_TRUE(killed.exit_code == 137 || killed.exit_code == 0) << killed.exit_code << killed.err;
    EXPECT_EQ(read_file((dir / "summary.md").string()), summary) << delay;
    EXPECT_EQ(read_file((dir / "results.json").string()), json) << delay;
    EXPECT_EQ(read_file((dir / "results.csv").string()), csv) << delay;
  }
}

TEST(SweepCommand, JobsChangeNothingButTheWallTime) {
  const auto one = fresh_dir("jobs1");
  const auto four = fresh_dir("jobs4");
  const std::string no_gnuplot = "PATH=" + path_without_gnuplot();
  const std::string scenario = quickstart_on_one_node("jobs");  // 4 points
  ASSERT_EQ(run_sweep_shell(no_gnuplot, scenario + " --jobs 1 --out " + one.string()).exit_code, 0);
  ASSERT_EQ(run_sweep_shell(no_gnuplot, scenario + " --jobs 4 --out " + four.string()).exit_code,
            0);
  for (const char* f : {"summary.md", "results.csv", "results.json", "step-time.dat"})
    EXPECT_EQ(read_file((one / f).string()), read_file((four / f).string())) << f;
}

TEST(SweepCommand, DefaultFolderIsSweepDashScenarioNameInTheCurrentFolder) {
  const auto cwd = fresh_dir("cwd");
  const auto r =
      run_sweep_shell("cd " + cwd.string() + " &&", kScenarioDir + "pingpong.yaml --jobs 1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_regular_file(cwd / "sweep-pingpong" / "summary.md"));
  EXPECT_THAT(r.out, HasSubstr("Outputs in sweep-pingpong/"));
}

TEST(SweepCommand, RendersSvgAndPngWhenGnuplotIsOnPath) {
  if (system("command -v gnuplot >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "gnuplot is not installed (tools/setup installs gnuplot-nox)";
  const auto dir = fresh_dir("gnuplot");
  const std::string scenario = quickstart_on_one_node("gnuplot");
  const auto r = run_sweep_shell("", scenario + " --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("gnuplot")));
  for (const char* plot : {"step-time", "breakdown"}) {
    const std::string svg = read_file((dir / (std::string(plot) + ".svg")).string());
    EXPECT_THAT(svg, HasSubstr("<svg")) << plot;
    EXPECT_THAT(svg, HasSubstr("</svg>")) << plot;
    const std::string png = read_file((dir / (std::string(plot) + ".png")).string());
    ASSERT_GT(png.size(), 8u) << plot;
    EXPECT_EQ(png.substr(1, 3), "PNG") << plot;
  }
  EXPECT_THAT(read_file((dir / "summary.md").string()),
              HasSubstr("[step-time.svg](step-time.svg)"));
  // The way the no-gnuplot note says to render them by hand works too.
  for (const char* image : {"step-time.svg", "breakdown.png"}) fs::remove(dir / image);
  EXPECT_EQ(
      std::system(
          ("cd " + dir.string() + " && gnuplot step-time.gp breakdown.gp >/dev/null 2>&1").c_str()),
      0);
  EXPECT_TRUE(fs::is_regular_file(dir / "step-time.svg"));
  EXPECT_TRUE(fs::is_regular_file(dir / "breakdown.png"));
  // A later run without gnuplot removes the now stale images.
  ASSERT_EQ(run_sweep_shell("PATH=" + path_without_gnuplot(), scenario + " --out " + dir.string())
                .exit_code,
            0);
  EXPECT_FALSE(fs::exists(dir / "step-time.svg"));
  EXPECT_FALSE(fs::exists(dir / "breakdown.png"));
}

// Lines of breakdown.dat that are bars (not the header comment).
int breakdown_bars(const fs::path& dir) {
  std::istringstream in(read_file((dir / "breakdown.dat").string()));
  int bars = 0;
  for (std::string line; std::getline(in, line);) bars += !line.empty() && line[0] != '#';
  return bars;
}

TEST(SweepCommand, BreakdownOfManyOpsSumsThemIntoFewBars) {
  // 120 puts named p0..p119: no shared prefixes, so they are summed in runs of
  // ceil(120 / 40) = 3, giving 40 bars. 60 ops named l0.a, l0.b, … l29.b: 30 prefixes,
  // one bar each.
  std::string flat, layered;
  for (int i = 0; i < 120; ++i)
    flat +=
        "  - {name: p" + std::to_string(i) + ", op: put_signal, bytes: 1 KiB, src: 0, dst: 1}\n";
  for (int l = 0; l < 30; ++l)
    for (const char* part : {"a", "b"})
      layered += "  - {name: l" + std::to_string(l) + "." + part +
                 ", op: put_signal, bytes: 1 KiB, src: 0, dst: 1}\n";
  for (const auto& [name, ops, want] :
       {std::tuple{"flat", flat, 40}, std::tuple{"layered", layered, 30}}) {
    SCOPED_TRACE(name);
    const auto scenario = write_temp_scenario(
        std::string("many-") + name, "name: many\ncluster: " + kScenarioDir +
                                         "clusters/dgx-h100.yaml\nmesh: {shape: [8]}\nworkload:\n" +
                                         ops + "sweep: {nodes: [1]}\n");
    const auto dir = fresh_dir(std::string("many-") + name);
    const auto r =
        run_sweep_shell("PATH=" + path_without_gnuplot(), scenario + " --out " + dir.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(breakdown_bars(dir), want);
    EXPECT_THAT(read_file((dir / "breakdown.gp").string()), HasSubstr("ops summed"));
    // Tables too wide for a line sum the ops; the answer's own table lists every op.
    const std::string summary = read_file((dir / "summary.md").string());
    EXPECT_THAT(summary, HasSubstr("| sum forward (us) |"));
    EXPECT_THAT(summary, HasSubstr(name == std::string("flat") ? "| p119 |" : "| l29.b |"));
    EXPECT_THAT(r.out, HasSubstr("sum forward (us)"));
  }
}

TEST(SweepCommand, BreakdownOfAModelStepSumsEachOpOverTheLayersThenByKind) {
  // A model step names its layers' ops l<N>_: 50 layers of l<N>_a and l<N>_b (100 ops,
  // 100 name prefixes) give one bar per op name summed over the layers: "l*_a", "l*_b".
  // 45 ops per layer over 2 layers (90 ops, 45 names) are still too many: summed by kind,
  // here every op a put_signal, one bar.
  std::string two_names, many_names;
  for (int l = 0; l < 50; ++l)
    for (const char* part : {"a", "b"})
      two_names += "  - {name: l" + std::to_string(l) + "_" + part +
                   ", op: put_signal, bytes: 1 KiB, src: 0, dst: 1}\n";
  for (int l = 0; l < 2; ++l)
    for (int j = 0; j < 45; ++j)
      many_names += "  - {name: l" + std::to_string(l) + "_x" + std::to_string(j) +
                    ", op: put_signal, bytes: 1 KiB, src: 0, dst: 1}\n";
  for (const auto& [name, ops, want, label] :
       {std::tuple{"two-names", two_names, 2, "\"l*_a\""},
        std::tuple{"many-names", many_names, 1, "\"put_signal\""}}) {
    SCOPED_TRACE(name);
    const auto scenario = write_temp_scenario(
        std::string("layers-") + name,
        "name: layers\ncluster: " + kScenarioDir +
            "clusters/dgx-h100.yaml\nmesh: {shape: [8]}\nworkload:\n" + ops +
            "sweep: {nodes: [1]}\n");
    const auto dir = fresh_dir(std::string("layers-") + name);
    const auto r =
        run_sweep_shell("PATH=" + path_without_gnuplot(), scenario + " --out " + dir.string());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(breakdown_bars(dir), want);
    EXPECT_THAT(read_file((dir / "breakdown.dat").string()), HasSubstr(label));
    EXPECT_THAT(read_file((dir / "breakdown.gp").string()),
                HasSubstr(want == 2 ? "each op summed over the layers"
                                    : "ops summed by kind over the layers"));
  }
}

TEST(SweepCommand, AStepTooLargeForTheGpusIsSkippedWithItsNeedNeverTheAnswer) {
  // 70,464,307,200 parameters (the size of Llama 3 70B: 8 x (8192x537600 + 537600x8192))
  // trained with Adam need 16 B each: on 8 GPUs, even sharded 8 ways, 131.25 GiB per GPU
  // before any activation, over an H100's 80 GiB. The 1-node point is skipped with that
  // reason; the answer is a larger point.
  std::string body = symmesh::testing::llama70b_sized_step(
      "version: 2\nname: dp-70b\ncluster: " + kScenarioDir +
          "clusters/dgx-h100.yaml\nmesh: {shape: [8], names: [dp]}\ncost_model: analytic\n",
      "");
  body += "sweep: {nodes: [1, 2]}\n";
  const auto scenario = write_temp_scenario("dp70b", body);
  const auto dir = fresh_dir("dp70b");
  const auto r =
      run_sweep_shell("PATH=" + path_without_gnuplot(), scenario + " --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = results_json(dir);
  ASSERT_EQ(j["points"].size(), 2u);
  EXPECT_EQ(j["points"][0]["status"], "skipped");
  const std::string reason = j["points"][0]["reason"];
  EXPECT_THAT(reason,
              HasSubstr("parameters 16.41 GiB, gradients 16.41 GiB, optimizer state 98.44 GiB"));
  EXPECT_THAT(reason, HasSubstr("H100-SXM has 80.00 GiB"));
  EXPECT_EQ(j["answer"]["point"], 1);
}

TEST(SweepCommand, ModelScenarioPointsGiveTokensPerGpuAndMfu) {
  // The tiny model of tests/evaluation/model_throughput_test.cpp: 579,456 model FLOPs per
  // token, one 24-token sequence per data-parallel replica. At mesh 2x4 a step holds
  // 2 x 24 = 48 tokens, at 4x4 96; per GPU per second that is tokens / (step x GPUs), and
  // MFU that times 579,456 over the H100's 989.4 TFLOP/s.
  const auto scenario = write_temp_scenario("tiny-model", R"y(version: 2
name: tiny-model
cluster: )y" + kScenarioDir + R"y(clusters/dgx-h100.yaml
mesh: {shape: [2, 4], names: [dp, tp]}
cost_model: analytic
model: {layers: 2, hidden: 64, heads: 4, kv_heads: 2, ffn: 128, vocab: 256, seq: 24}
sweep: {nodes: [1, 2], mesh: [[2, 4], [4, 4]]}
)y");
  const auto dir = fresh_dir("tiny-model");
  const auto r =
      run_sweep_shell("PATH=" + path_without_gnuplot(), scenario + " --out " + dir.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("tokens/s/GPU"));
  EXPECT_THAT(r.out, HasSubstr("MFU"));
  const auto j = results_json(dir);
  const auto rows = parse_csv(read_file((dir / "results.csv").string()));
  ASSERT_EQ(rows[0][7], "tokens_per_s_per_gpu");
  ASSERT_EQ(rows[0][8], "mfu");
  ASSERT_EQ(j["points"].size(), 2u);
  const double tokens[] = {48, 96};
  for (size_t i = 0; i < 2; ++i) {
    const auto& p = j["points"][i];
    ASSERT_EQ(p["status"], "ok") << i;
    const double step = p["total_time_s"].get<double>();
    const double per_gpu = tokens[i] / (step * p["gpus"].get<double>());
    EXPECT_NEAR(p["model"]["tokens_per_s_per_gpu"].get<double>(), per_gpu, 1e-9 * per_gpu);
    EXPECT_NEAR(p["model"]["mfu"].get<double>(), per_gpu * 579'456 / 989.4e12, 1e-12);
    // Every CSV row of the point carries the same figures.
    for (const auto& row : rows)
      if (row[0] == p["nodes"].dump() && row[3] == "ok") {
        EXPECT_NEAR(std::stod(row[7]), per_gpu, 1e-9 * per_gpu);
        EXPECT_NEAR(std::stod(row[8]), per_gpu * 579'456 / 989.4e12, 1e-12);
      }
  }
  EXPECT_THAT(read_file((dir / "summary.md").string()), HasSubstr("| tokens/s/GPU | MFU |"));
}

}  // namespace
