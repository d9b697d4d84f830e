// symmesh layouts: the best layout at each GPU count and the fewest GPUs meeting the
// objective, as text and JSON; the scenarios it refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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
