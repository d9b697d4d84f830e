// symmesh sweep on a model scenario whose sweep searches training layouts (`sweep.layouts`):
// the layouts report on stdout and in the output folder (summary, CSV, JSON), the answer on
// the simulated steps, and nothing left behind when the input is refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "tests/tools/sweep_test_support.hpp"

namespace symmesh::testing {
namespace {

using ::testing::HasSubstr;

// Llama 3.1 8B (the shipped config), 8 sequences a step, on 1 and 2 DGX H100 nodes.
std::string llama8b_layouts_scenario(const std::string& name) {
  return write_temp_scenario(
      name, "version: 2\nname: " + name + "\ncluster: {base: " + kScenarioDir +
                "clusters/dgx-h100.yaml, nodes: 1}\nmesh: {shape: [8, 1], names: [dp, tp]}\n"
                "model: {hf_config: " +
                kScenarioDir +
                "models/llama3.1-8b.json, seq: 8192, global_batch: 8}\n"
                "sweep: {nodes: [1, 2], layouts: {simulate: 2}}\nobjective: {max_time: 1 s}\n");
}

TEST(SweepLayoutsCommand, ReportsAndWritesTheLayoutsOfEachNodeCount) {
  const std::string scenario = llama8b_layouts_scenario("layouts_sweep");
  const fs::path out = fresh_dir("layouts_sweep_out");
  const auto r = run_sweep_shell("", scenario + " --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("symmesh sweep: layouts_sweep"));
  EXPECT_THAT(r.out, HasSubstr("identical copies, not simulated"));
  EXPECT_THAT(r.out, HasSubstr("Outputs in " + out.string() +
                               "/: summary.md, results.csv, "
                               "results.json, best-trace.json, step-time."));
  // The JSON: both node counts (8 and 16 GPUs), the fastest 2 of each simulated.
  const auto j = nlohmann::json::parse(read_file((out / "results.json").string()));
  ASSERT_EQ(j["sizes"].size(), 2u);
  EXPECT_EQ(j["sizes"][0]["gpus"], 8);
  EXPECT_EQ(j["sizes"][1]["gpus"], 16);
  std::optional<int> fewest;
  for (const auto& size : j["sizes"]) {
    ASSERT_EQ(size["best"].size(), 2u);
    double fastest = 1e30;
    for (const auto& e : size["best"]) {
      ASSERT_TRUE(e.contains("simulated"));
      fastest = std::min(fastest, e["simulated"]["step_s"].get<double>());
    }
    EXPECT_EQ(size["meets_objective"].get<bool>(), fastest <= 1.0);
    if (fastest <= 1.0 && !fewest) fewest = size["gpus"].get<int>();
  }
  if (fewest)
    EXPECT_EQ(j["answer_gpus"], *fewest);
  else
    EXPECT_TRUE(j["answer_gpus"].is_null());
  // The CSV: a header and one row per layout kept (2 node counts x 2), each with its
  // simulated step.
  std::istringstream csv(read_file((out / "results.csv").string()));
  std::string line;
  std::getline(csv, line);
  EXPECT_THAT(line, HasSubstr("gpus,rank,tp,pp,dp"));
  int rows = 0;
  while (std::getline(csv, line)) {
    ++rows;
    EXPECT_NE(line.back(), ',') << line;  // simulated step and MFU filled
  }
  EXPECT_EQ(rows, 4);
  // The summary: the same report, as an indented code block.
  const std::string summary = read_file((out / "summary.md").string());
  EXPECT_THAT(summary, HasSubstr("# symmesh sweep: layouts_sweep\n"));
  EXPECT_THAT(summary, HasSubstr("\n    symmesh sweep: layouts_sweep"));
  // The plots any sweep writes. The breakdown's parts of each count's fastest layout
  // (compute, TP comm, stage sends, bubble, DP exposed, optimizer) add up to its priced step:
  // the closed form's step = (m + (p-1)/v) x stage time + DP exposed + optimizer, and the
  // bubble is the (p-1)/v stage times.
  for (const char* name : {"step-time.dat", "step-time.gp", "breakdown.dat", "breakdown.gp"})
    EXPECT_TRUE(fs::is_regular_file(out / name)) << name;
  std::istringstream bars(read_file((out / "breakdown.dat").string()));
  size_t row = 0;
  for (std::string bar; std::getline(bars, bar);) {
    if (bar.empty() || bar[0] == '#') continue;
    ASSERT_LT(row, j["sizes"].size());
    std::istringstream fields(bar);
    std::string gpus;
    double part = 0, sum = 0;
    fields >> gpus;
    while (fields >> part) sum += part;
    const auto& best = j["sizes"][row]["best"][0];
    EXPECT_EQ(gpus, "\"" + std::to_string(j["sizes"][row]["gpus"].get<int>()) + "\"");
    // The .dat is in the plot's unit (s or ms here): compare in the same unit.
    const double step_s = best["step_s"].get<double>();
    const std::string header = read_file((out / "breakdown.dat").string());
    const double unit = header.find("compute_ms") != std::string::npos   ? 1e3
                        : header.find("compute_us") != std::string::npos ? 1e6
                                                                         : 1.0;
    EXPECT_NEAR(sum, step_s * unit, 1e-6 * step_s * unit) << bar;
    ++row;
  }
  EXPECT_EQ(row, j["sizes"].size());
  // The best point's trace: the answer's layout (else the largest count's fastest), one
  // replica's simulated pipeline, its slices named by micro-batch and pass. 8 sequences on
  // dp replicas of mb sequences: every micro-batch 0 … 8 / (dp · mb) - 1 appears.
  const auto trace = nlohmann::json::parse(read_file((out / "best-trace.json").string()));
  std::set<std::string> ops;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X") ops.insert(e["args"]["op"].get<std::string>());
  EXPECT_TRUE(ops.contains("stage 0 first forward"));
  EXPECT_TRUE(ops.contains("stage 0 last backward"));
  const auto& best_size = j["sizes"][j["answer_gpus"].is_null() ? j["sizes"].size() - 1 : 0];
  int at = 0;
  for (size_t k = 0; k < j["sizes"].size(); ++k)
    if (j["sizes"][k]["gpus"] == j["answer_gpus"]) at = static_cast<int>(k);
  const auto& layout = (j["answer_gpus"].is_null() ? best_size : j["sizes"][at])["best"][0];
  const int micro_batches = layout["micro_batches"].get<int>();
  for (int mb = 1; mb + 1 < micro_batches; ++mb)
    EXPECT_TRUE(ops.contains("mb " + std::to_string(mb) + " backward")) << mb;
}

TEST(SweepLayoutsCommand, RefusedScenarioLeavesNoFolder) {
  // layouts without a model's global batch: refused at load, before any output.
  const std::string scenario = write_temp_scenario(
      "layouts_no_batch", "version: 2\ncluster: {base: " + kScenarioDir +
                              "clusters/dgx-h100.yaml, nodes: 1}\nmesh: {shape: [8, 1], names: "
                              "[dp, tp]}\nmodel: {hf_config: " +
                              kScenarioDir +
                              "models/llama3.1-8b.json, seq: 8192}\nsweep: {nodes: [1], layouts: "
                              "{}}\n");
  const fs::path out =
      fs::temp_directory_path() / ("symmesh_layouts_refused_" + std::to_string(getpid()));
  fs::remove_all(out);
  const auto r = run_sweep_shell("", scenario + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("needs model.global_batch"));
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace symmesh::testing
