// Scenario's mesh helpers and where(): what messages and layouts read of a scenario.
#include <gtest/gtest.h>

#include "core/scenario.hpp"

namespace symmesh {
namespace {

// Llama 3 405B's training mesh (Meta's Table 4): pp 16 × dp 128 × tp 8 = 16,384 GPUs.
TEST(ScenarioMesh, DimSizesByNameAndTheWholeMeshsGpus) {
  Scenario s;
  s.mesh_shape = {16, 128, 8};
  s.mesh_names = {"pp", "dp", "tp"};
  EXPECT_EQ(s.mesh_dim_size("tp"), 8);
  EXPECT_EQ(s.mesh_dim_size("pp"), 16);
  EXPECT_EQ(s.mesh_dim_size("cp"), 1);  // a dim the mesh lacks is of size 1
  EXPECT_EQ(s.mesh_gpus(), 16384);
}

TEST(ScenarioMesh, WhereIsTheFileOrScenarioForOneBuiltInMemory) {
  Scenario s;
  EXPECT_EQ(s.where(), "scenario");
  s.path = "scenarios/llama3-8b-train.yaml";
  EXPECT_EQ(s.where(), "scenarios/llama3-8b-train.yaml");
}

}  // namespace
}  // namespace symmesh
