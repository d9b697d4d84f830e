// `sweep: {layouts: …}` (core/scenario.hpp SweepSpec::layouts): a model scenario's sweep that
// searches training layouts instead of meshes, and the files it refuses, at file:line:col
// (1-based, counted by hand in the text below).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_test_files.hpp"

using namespace symmesh;
using ::testing::HasSubstr;

namespace {

// Lines 1-4; the sweep follows on line 5.
const std::string kModelScenario = R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 4], names: [dp, tp]}
model: {layers: 2, hidden: 64, heads: 4, kv_heads: 2, ffn: 128, vocab: 256, seq: 24, global_batch: 8}
)yaml";

class SweepLayouts : public symmesh::testing::ScenarioFileTest {};

TEST_F(SweepLayouts, ReadsTheSimulateCount) {
  Scenario s = load(kModelScenario + "sweep: {nodes: [1, 2], layouts: {simulate: 3}}\n");
  ASSERT_TRUE(s.sweep.has_value());
  EXPECT_TRUE(s.sweep->layouts);
  EXPECT_EQ(s.sweep->layouts_simulate, 3);
  EXPECT_EQ(s.sweep->nodes, (std::vector<int>{1, 2}));
  EXPECT_FALSE(s.sweep->mesh_auto);
  EXPECT_TRUE(s.sweep->mesh_shapes.empty());
  // Without a count: the fastest one of each node count is simulated.
  s = load(kModelScenario + "sweep: {nodes: [1], layouts: {}}\n");
  EXPECT_TRUE(s.sweep->layouts);
  EXPECT_EQ(s.sweep->layouts_simulate, 1);
  // A plain sweep is not a layouts sweep.
  s = load(kModelScenario + "sweep: {nodes: [1], mesh: auto}\n");
  EXPECT_FALSE(s.sweep->layouts);
}

TEST_F(SweepLayouts, RefusesWhatItCannotSearch) {
  // No model: nothing to search.
  auto e = load_error(R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [8], names: [dp]}
tensors: {x: {shape: [8, 8], placements: ["S(0)"]}, w: {shape: [8, 8], parameter: true}}
workload: [{name: y, op: mm, a: x, b: w, output: h}]
sweep: {nodes: [1], layouts: {}}
)yaml");
  EXPECT_EQ(e.where(), at(6, 21));
  EXPECT_THAT(e.message(), HasSubstr("the scenario has no model: block"));
  // Meshes and layouts together.
  e = load_error(kModelScenario + "sweep: {nodes: [1], mesh: auto, layouts: {}}\n");
  EXPECT_EQ(e.where(), at(5, 21));
  EXPECT_THAT(e.message(), HasSubstr("sweep.mesh and sweep.layouts: give one"));
  // A count out of range, and a key it does not know.
  e = load_error(kModelScenario + "sweep: {nodes: [1], layouts: {simulate: 101}}\n");
  EXPECT_EQ(e.where(), at(5, 41));
  EXPECT_THAT(e.message(), HasSubstr("at most 100 layouts per node count, got 101"));
  e = load_error(kModelScenario + "sweep: {nodes: [1], layouts: {simulate: -1}}\n");
  EXPECT_EQ(e.where(), at(5, 41));
  e = load_error(kModelScenario + "sweep: {nodes: [1], layouts: {top: 2}}\n");
  EXPECT_THAT(e.message(), HasSubstr("unknown key 'top'"));
}

TEST_F(SweepLayouts, ReadsItsSearchListsAndBoundsThem) {
  Scenario s = load(kModelScenario +
                    "sweep: {nodes: [1], micro_batch: [1, 2], zero: [1, 3], layouts: {tp: [2, 4], "
                    "pp: [1], virtual_stages: [1, 5]}}\n");
  EXPECT_THAT(s.sweep->micro_batches, ::testing::ElementsAre(1, 2));
  EXPECT_THAT(s.sweep->zero_stages, ::testing::ElementsAre(1, 3));
  EXPECT_THAT(s.sweep->layouts_tps, ::testing::ElementsAre(2, 4));
  EXPECT_THAT(s.sweep->layouts_pps, ::testing::ElementsAre(1));
  EXPECT_THAT(s.sweep->layouts_virtual_stages, ::testing::ElementsAre(1, 5));
  // At most 64 values a list (the search multiplies them): refused at the 65th, here at
  // column 36 + 3 x 64 = 228 of line 5 ("sweep: {nodes: [1], layouts: {tp: [" is 35
  // characters; each "1, " takes 3).
  std::string many;
  for (int i = 0; i < 65; ++i) many += (i ? ", " : "") + std::string("1");
  auto e = load_error(kModelScenario + "sweep: {nodes: [1], layouts: {tp: [" + many + "]}}\n");
  EXPECT_EQ(e.where(), at(5, 228));
  EXPECT_THAT(e.message(), HasSubstr("sweep.layouts.tp: at most 64 values, got 65"));
  // A ZeRO stage past 3 is none (the planned step shards the weights at 3 too); a value
  // twice is refused.
  e = load_error(kModelScenario + "sweep: {nodes: [1], zero: [3, 4]}\n");
  EXPECT_THAT(e.message(), HasSubstr("sweep.zero: a ZeRO stage is 0, 1, 2 or 3"));
  e = load_error(kModelScenario + "sweep: {nodes: [1], micro_batch: [2, 2], layouts: {}}\n");
  EXPECT_THAT(e.message(), HasSubstr("sweep.micro_batch: 2 twice"));
}

TEST_F(SweepLayouts, NeedsTheGlobalBatch) {
  const std::string no_batch = R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 4], names: [dp, tp]}
model: {layers: 2, hidden: 64, heads: 4, kv_heads: 2, ffn: 128, vocab: 256, seq: 24}
sweep: {nodes: [1], layouts: {}}
)yaml";
  const auto e = load_error(no_batch);
  EXPECT_EQ(e.where(), at(5, 30));
  EXPECT_THAT(e.message(), HasSubstr("needs model.global_batch"));
}

}  // namespace
