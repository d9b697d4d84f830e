// `causal:` on matrix ops (version 1 and 2): read as a boolean, at its place when it is not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_test_files.hpp"

namespace symmesh {
namespace {

using symmesh::testing::error_of;
using ::testing::HasSubstr;

TEST(CausalKey, VersionOneAndTwoMatrixOpsTakeIt) {
  const Scenario v1 = load_scenario_text(R"yaml(cluster: clusters/dgx-h100.yaml
mesh: [8]
workload:
  - {name: s, op: bmm, a: [8, 64, 16], b: [8, 16, 64], a_placements: ["S(0)"], b_placements: ["S(0)"], causal: true}
  - {name: t, op: bmm, a: [8, 64, 16], b: [8, 16, 64], a_placements: ["S(0)"], b_placements: ["S(0)"]}
)yaml",
                                         shipped_scenarios_dir() + "/v1.yaml");
  EXPECT_TRUE(v1.workload[0].causal);
  EXPECT_DOUBLE_EQ(v1.workload[0].work_fraction(), 0.5);
  EXPECT_FALSE(v1.workload[1].causal);
  EXPECT_DOUBLE_EQ(v1.workload[1].work_fraction(), 1.0);
  const Scenario v2 = load_scenario_text(R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: [8]
tensors:
  q: {shape: [8, 64, 16], placements: ["S(0)"]}
  k: {shape: [8, 16, 64], placements: ["S(0)"]}
workload:
  - {name: s, op: bmm, a: q, b: k, output: p, causal: true}
)yaml",
                                         shipped_scenarios_dir() + "/v2.yaml");
  EXPECT_TRUE(v2.workload[0].causal);
}

TEST(CausalKey, NotABooleanIsRefusedAtTheValue) {
  const auto e = error_of([] {
    load_scenario_text(R"yaml(cluster: clusters/dgx-h100.yaml
mesh: [8]
workload:
  - {name: s, op: mm, a: [64, 16], b: [16, 64], a_placements: [R], b_placements: [R], causal: yes}
)yaml",
                       "bad.yaml");
  });
  EXPECT_EQ(e.where(), "bad.yaml:4:95");  // the value "yes", column 95
  EXPECT_THAT(e.message(), HasSubstr("causal"));
}

}  // namespace
}  // namespace symmesh
