// The bounds on a sweep's size (scenario/scenario_loader.cpp, read_sweep): at most 64 node
// counts, and at most kMaxSweepPoints points (node counts × mesh shapes × micro-batch sizes
// × ZeRO stages), refused at load at the key, before any point runs. A list of 20,000 node
// counts with mesh: auto once ran unbounded.
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
model: {layers: 2, hidden: 64, heads: 4, kv_heads: 2, ffn: 128, vocab: 256, seq: 24, global_batch: 4096}
)yaml";

std::string counts(int from, int to) {
  std::string out;
  for (int i = from; i <= to; ++i) out += (i > from ? ", " : "") + std::to_string(i);
  return out;
}

class SweepBounds : public symmesh::testing::ScenarioFileTest {};

TEST_F(SweepBounds, AtMost64NodeCounts) {
  EXPECT_EQ(load(kModelScenario + "sweep: {nodes: [" + counts(1, 64) + "]}\n").sweep->nodes.size(),
            64u);
  // 20,000 counts: refused at the 65th ("sweep: {nodes: [" is 16 characters; the values
  // 1..9 take 3 columns each, 10..64 take 4: the 65th starts at 17 + 27 + 55 × 4 = 264).
  const auto e = load_error(kModelScenario + "sweep: {nodes: [" + counts(1, 20000) + "]}\n");
  EXPECT_EQ(e.where(), at(5, 264));
  EXPECT_THAT(e.message(), HasSubstr("sweep.nodes: at most 64 values, got 20000"));
}

TEST_F(SweepBounds, ThePointsOfMeshesMicroBatchesAndZeroStagesAreBounded) {
  // 64 node counts of 8 to 512 GPUs over 2 dims (every divisor: 763 shapes), each with 64
  // micro-batch sizes and 3 ZeRO stages: 146,496 points.
  const auto e = load_error(kModelScenario + "sweep: {nodes: [" + counts(1, 64) +
                            "], mesh: auto, micro_batch: [" + counts(1, 64) +
                            "], zero: [0, 1, 2]}\n");
  EXPECT_EQ(e.where(), at(5, 9));  // the nodes key
  EXPECT_THAT(e.message(), HasSubstr("sweep: 146496 points (64 node counts × their mesh shapes × "
                                     "64 micro-batch sizes × 3 ZeRO stages), more than the "
                                     "10000 a sweep simulates"));
  // The same meshes with fewer values fit: 763 × 3 × 3.
  const Scenario s = load(kModelScenario + "sweep: {nodes: [" + counts(1, 64) +
                          "], micro_batch: [1, 2, 4], zero: [0, 1, 2]}\n");
  EXPECT_TRUE(s.sweep->mesh_auto);
}

TEST_F(SweepBounds, AListOfShapesCountsOnlyTheShapesThatFit) {
  // Two listed shapes, 2 counts: 2 points × 64 × 3 = 384, well under the bound.
  const Scenario s = load(kModelScenario + "sweep: {nodes: [1, 2], mesh: [[2, 4], [4, 4]], "
                                           "micro_batch: [" + counts(1, 64) +
                          "], zero: [0, 1, 2]}\n");
  EXPECT_EQ(s.sweep->mesh_shapes.size(), 2u);
}

TEST_F(SweepBounds, CountsMeshShapesWithoutListingThem) {
  EXPECT_EQ(count_mesh_shapes(16, 2, 1000), 5);  // 1x16, 2x8, 4x4, 8x2, 16x1
  EXPECT_EQ(count_mesh_shapes(65536, 1, 1000), 1);
  EXPECT_EQ(count_mesh_shapes(8192, 20, 1000), 1001);  // C(32, 19), capped at cap + 1
}

}  // namespace
