#pragma once
// The fixture both quickstart sweep tests share (version 2: scenarios/quickstart.yaml;
// version 1: scenarios/version1-by-hand/quickstart.yaml): the sweep runs once per suite,
// without gnuplot on PATH so that the files (and summary.md's list of them) do not depend
// on the machine; each test reads its results.json.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "tests/tools/sweep_test_support.hpp"

namespace symmesh::testing {

// Scenario::kPath (under scenarios/), Scenario::kName, Scenario::kArgs (more sweep options)
template <typename Scenario>
class QuickstartSweep : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fresh_dir(Scenario::kName);
    run_ = run_sweep_shell(
        "PATH=" + path_without_gnuplot(),
        kScenarioDir + Scenario::kPath + Scenario::kArgs + " --out " + dir_.string() + " --jobs 2");
    if (fs::exists(dir_ / "results.json"))
      json_ = nlohmann::json::parse(read_file((dir_ / "results.json").string()));
  }
  void SetUp() override {
    ASSERT_EQ(run_.exit_code, 0) << run_.err;
    ASSERT_TRUE(json_.is_object());
  }

  static const nlohmann::json& point(int nodes, const std::vector<int>& mesh) {
    for (const auto& p : json_["points"])
      if (p["nodes"] == nodes && p["mesh"] == nlohmann::json(mesh)) return p;
    throw std::runtime_error("no point");
  }
  static const nlohmann::json& op(const nlohmann::json& p, const std::string& name) {
    for (const auto& o : p["ops"])
      if (o["name"] == name) return o;
    throw std::runtime_error("no op " + name);
  }
  static double op_time(const nlohmann::json& p, const std::string& name) {
    return op(p, name)["time_s"].get<double>();
  }

  // Both sweep 1, 2 and 4 nodes of 8 GPUs over every 2-D mesh: 8 GPUs into 2 dims are
  // 1x8 2x4 4x2 8x1; 16: 1x16 2x8 4x4 8x2 16x1; 32: six. 15 points, in this order.
  static void expect_every_factorisation() {
    const std::vector<std::pair<int, std::vector<int>>> expected{
        {1, {1, 8}},  {1, {2, 4}}, {1, {4, 2}}, {1, {8, 1}},  {2, {1, 16}},
        {2, {2, 8}},  {2, {4, 4}}, {2, {8, 2}}, {2, {16, 1}}, {4, {1, 32}},
        {4, {2, 16}}, {4, {4, 8}}, {4, {8, 4}}, {4, {16, 2}}, {4, {32, 1}}};
    const auto& points = json_["points"];
    ASSERT_EQ(points.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(points[i]["nodes"], expected[i].first) << i;
      EXPECT_EQ(points[i]["gpus"], expected[i].first * 8) << i;
      EXPECT_EQ(points[i]["mesh"], nlohmann::json(expected[i].second)) << i;
      EXPECT_EQ(points[i]["status"], "ok") << i;
    }
  }

  static inline fs::path dir_;
  static inline RunResult run_;
  static inline nlohmann::json json_;
};

}  // namespace symmesh::testing
