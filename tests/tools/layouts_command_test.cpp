// symmesh layouts: the best layout at each GPU count and the fewest GPUs meeting the
// objective, as text and JSON; the scenarios it refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>

#include "tests/tools/run_symmesh.hpp"

namespace {

using symmesh::testing::run_symmesh;
using ::testing::HasSubstr;

const std::string kTraining = std::string(SYMMESH_SOURCE_DIR) + "/scenarios/training/";

TEST(LayoutsCommand, JsonAnswersTheFewestGpusWithinTheObjective) {
  const auto r = run_symmesh("layouts " + kTraining + "llama3-70b-train.yaml --top 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["global_batch"], 1024);
  EXPECT_EQ(j["parameters"], 70'553'706'496);  // the model card's 70.6 B
  // The sweep's node counts x 8 GPUs, in its order.
  std::vector<int> gpus;
  for (const auto& size : j["sizes"]) gpus.push_back(size["gpus"]);
  EXPECT_THAT(gpus, ::testing::ElementsAre(64, 128, 256, 512, 1024));
  // The answer is the fewest GPUs whose best layout takes at most the 10 s objective.
  std::optional<int> fewest;
  for (const auto& size : j["sizes"]) {
    ASSERT_FALSE(size["best"].empty());
    ASSERT_LE(size["best"].size(), 3u);
    double previous = 0;
    for (const auto& e : size["best"]) {
      const int product = e["tp"].get<int>() * e["pp"].get<int>() * e["dp"].get<int>();
      EXPECT_EQ(product, size["gpus"].get<int>());
      EXPECT_GE(e["step_s"].get<double>(), previous);  // fastest first
      previous = e["step_s"];
      EXPECT_LE(e["memory_bytes"]["total"].get<double>(), 80.0 * (1 << 30));
      // tokens/s is the step's 1024 x 8192 tokens over its time.
      EXPECT_NEAR(e["tokens_per_s"].get<double>(), 1024.0 * 8192 / e["step_s"].get<double>(),
                  1e-6 * e["tokens_per_s"].get<double>());
    }
    const bool meets = size["best"][0]["step_s"].get<double>() <= 10.0;
    EXPECT_EQ(size["meets_objective"].get<bool>(), meets) << size["gpus"];
    if (meets && !fewest) fewest = size["gpus"].get<int>();
  }
  ASSERT_TRUE(fewest.has_value());
  EXPECT_EQ(j["answer_gpus"], *fewest);
}

TEST(LayoutsCommand, TextNamesTheAnswerAndGpusOverrideTheSweep) {
  const auto r = run_symmesh("layouts " + kTraining + "llama3-70b-train.yaml --gpus 2048");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("1024 sequences of 8192 tokens per step"));
  EXPECT_THAT(r.out, HasSubstr("  2048  tp "));
  EXPECT_THAT(r.out, HasSubstr("Answer: 2048 GPUs"));
}

TEST(LayoutsCommand, SimulateRunsTheBestLayoutsAndAnswersOnTheirSteps) {
  // Llama 3.1 8B on 8 and 16 GPUs, only tp 2 and 4: the best 2 layouts of each simulated.
  const std::string scenario = std::string(SYMMESH_SOURCE_DIR) + "/scenarios/llama3-8b-train.yaml";
  const auto r =
      run_symmesh("layouts " + scenario + " --gpus 8 16 --tp 2 4 --top 3 --simulate 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::optional<int> fewest;
  for (const auto& size : j["sizes"]) {
    ASSERT_EQ(size["best"].size(), 3u);
    double fastest = 1e30;
    for (size_t i = 0; i < 3; ++i) {
      const auto& e = size["best"][i];
      EXPECT_TRUE(e["tp"] == 2 || e["tp"] == 4) << e["tp"];
      // The first two carry their simulation, the third not.
      ASSERT_EQ(e.contains("simulated"), i < 2) << i;
      if (i == 2) continue;
      const auto& sim = e["simulated"];
      // One replica of tp·pp ranks simulated for the dp of them.
      EXPECT_EQ(sim["represented_ranks"], size["gpus"]);
      EXPECT_NEAR(sim["step_s"].get<double>(),
                  sim["pipeline_s"].get<double>() + sim["dp_exposed_s"].get<double>(), 1e-12);
      EXPECT_NEAR(sim["tokens_per_s"].get<double>(), 4.0 * 8192 / sim["step_s"].get<double>(),
                  1e-6 * sim["tokens_per_s"].get<double>());
      // The simulation and the closed form price the same work (within 10 %).
      EXPECT_NEAR(sim["step_s"].get<double>() / e["step_s"].get<double>(), 1.0, 0.1);
      fastest = std::min(fastest, sim["step_s"].get<double>());
    }
    // The objective (250 ms) is judged on the fastest simulated step.
    EXPECT_EQ(size["meets_objective"].get<bool>(), fastest <= 0.25) << size["gpus"];
    if (fastest <= 0.25 && !fewest) fewest = size["gpus"].get<int>();
  }
  if (fewest)
    EXPECT_EQ(j["answer_gpus"], *fewest);
  else
    EXPECT_TRUE(j["answer_gpus"].is_null());
  // The text report has the simulated table and says what was replicated.
  const auto text = run_symmesh("layouts " + scenario + " --gpus 16 --simulate 1");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("identical copies, not simulated"));
  // An 8B step on 16 GPUs takes a fifth of a second: the table is in ms (text_table.hpp).
  EXPECT_THAT(text.out, HasSubstr("simulated (ms)"));
  EXPECT_THAT(text.out, HasSubstr("(simulated)"));
}

TEST(LayoutsCommand, TheQuickStartAnswersTheFewestGpusForALlama8BStep) {
  // tools/run's main job (README's quick start) as its JSON: 1 to 64 nodes, the fastest
  // layout of each count simulated, the answer the fewest GPUs whose simulated step is
  // within 3 s.
  const auto r = run_symmesh("layouts " + kTraining + "llama3-8b-capacity.yaml --simulate 1 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["sizes"].size(), 7u);
  std::optional<int> fewest;
  for (const auto& size : j["sizes"]) {
    ASSERT_FALSE(size["best"].empty()) << size["gpus"];
    const auto& best = size["best"][0];
    // Nothing is declared beyond the batch: nothing held fixed.
    EXPECT_TRUE(size["fixed_by_scenario"].empty());
    ASSERT_TRUE(best.contains("simulated"));
    const double simulated_s = best["simulated"]["step_s"].get<double>();
    if (simulated_s <= 3.0 && !fewest) fewest = size["gpus"].get<int>();
    // 512 sequences of 8192 tokens per step.
    EXPECT_NEAR(best["tokens_per_s"].get<double>() * best["step_s"].get<double>(), 512.0 * 8192,
                1e-6 * 512 * 8192);
  }
  ASSERT_TRUE(fewest);
  EXPECT_EQ(j["answer_gpus"], *fewest);
  // Doubling pure data parallelism halves the work per GPU: where the best layouts of two
  // successive counts are both tp 1 pp 1 with the same micro-batch, the step halves within
  // the data-parallel communication the backward does not hide (under 2 %).
  for (size_t i = 1; i < j["sizes"].size(); ++i) {
    const auto& a = j["sizes"][i - 1]["best"][0];
    const auto& b = j["sizes"][i]["best"][0];
    if (a["tp"] != 1 || a["pp"] != 1 || b["tp"] != 1 || b["pp"] != 1 ||
        a["micro_batch"] != b["micro_batch"])
      continue;
    EXPECT_NEAR(b["step_s"].get<double>() / a["step_s"].get<double>(), 0.5, 0.01)
        << j["sizes"][i]["gpus"];
  }
}

TEST(LayoutsCommand, RefusesAScenarioWithoutAModelOrAGlobalBatch) {
  auto r = run_symmesh("layouts " + std::string(SYMMESH_SOURCE_DIR) + "/scenarios/quickstart.yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("the scenario has no model: block"));
  const auto path = (std::filesystem::temp_directory_path() / "symmesh_layouts_nogb.yaml").string();
  std::ofstream(path) << "version: 2\ncluster: clusters/dgx-h100.yaml\n"
                         "mesh: {shape: [1, 8], names: [dp, tp]}\n"
                         "model: {hf_config: models/llama3.1-8b.json, layers: 2, seq: 128}\n";
  r = run_symmesh("layouts " + path);
  std::filesystem::remove(path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("needs model.global_batch"));
}

}  // namespace
