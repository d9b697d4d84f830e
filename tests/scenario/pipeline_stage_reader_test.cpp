// Pipeline stages in version-2 files (core/scenario.hpp kPipelineDim, the loader and
// scenario/workload_reader.cpp): a first mesh dim named pp holds the stages, placements name
// the other dims, ops say `stage: N`, and every mistake is an error at the YAML node
// (line:column counted by hand in the texts below, 1-based).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/scenario/scenario_test_files.hpp"

using namespace symmesh;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

class PipelineStageReader : public symmesh::testing::ScenarioFileTest {};

// Lines 1-7; the ops follow from line 8 on. Two stages of 4 GPUs (dp 2, tp 2): placements have one
// entry per dim of a stage (dp, tp).
const std::string kHead = R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 2, 2], names: [pp, dp, tp]}
tensors:
  x:  {shape: [64, 32], placements: ["S(0)", "R"]}
  w0: {shape: [32, 32], parameter: true}
workload:
)yaml";

TEST_F(PipelineStageReader, StagesAndTheStageMesh) {
  const Scenario s = load(kHead + R"yaml(  - {name: a, op: mm, a: x, b: w0, output: y, stage: 0}
  - {name: b, op: gelu, a: y, output: z, stage: 1}
)yaml");
  EXPECT_EQ(s.pipeline_stages(), 2);
  EXPECT_THAT(s.stage_mesh_shape(), ElementsAre(2, 2));
  EXPECT_THAT(s.stage_mesh_names(), ElementsAre("dp", "tp"));
  EXPECT_EQ(s.workload.at(0).stage, 0);
  EXPECT_EQ(s.workload.at(1).stage, 1);
}

TEST_F(PipelineStageReader, WithoutStageAnOpRunsOnTheFirst) {
  const Scenario s = load(kHead + "  - {name: a, op: mm, a: x, b: w0, output: y}\n");
  EXPECT_EQ(s.workload.at(0).stage, 0);
}

TEST_F(PipelineStageReader, AStageOutsideTheMeshIsRefusedAtTheValue) {
  // "  - {name: a, op: mm, a: x, b: w0, output: y, stage: 2}": the 2 at column 54.
  const auto e = load_error(kHead + "  - {name: a, op: mm, a: x, b: w0, output: y, stage: 2}\n");
  EXPECT_EQ(e.where(), at(8, 54));
  EXPECT_THAT(e.message(), HasSubstr("stage 2 is outside the mesh's 2 pipeline stages (0..1)"));
}

TEST_F(PipelineStageReader, AStageWithoutAPipelineDimIsRefused) {
  const auto e = load_error(R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [8], names: [tp]}
tensors:
  x:  {shape: [64, 32], placements: ["S(0)"]}
  w0: {shape: [32, 32], parameter: true}
workload:
  - {name: a, op: mm, a: x, b: w0, output: y, stage: 1}
)yaml");
  EXPECT_EQ(e.where(), at(8, 54));
  EXPECT_THAT(e.message(), HasSubstr("a stage needs pipeline stages: a first mesh dim named pp"));
}

TEST_F(PipelineStageReader, PlacementsNameTheDimsOfAStage) {
  // Three placements (one for pp too) on a mesh whose stages have two dims: at the list,
  // line 5 column 37.
  const auto e = load_error(R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 2, 2], names: [pp, dp, tp]}
tensors:
  x:  {shape: [64, 32], placements: ["R", "S(0)", "R"]}
  w0: {shape: [32, 32], parameter: true}
workload:
  - {name: a, op: mm, a: x, b: w0, output: y}
)yaml");
  EXPECT_EQ(e.where(), at(5, 37));
  EXPECT_THAT(e.message(), HasSubstr("3 placements"));
  EXPECT_THAT(e.message(), HasSubstr("2-D mesh"));
}

TEST_F(PipelineStageReader, ThePipelineDimComesFirst) {
  // mesh: {shape: [4, 2], names: [tp, pp]}: 'pp' at column 35.
  const auto e = load_error(R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [4, 2], names: [tp, pp]}
tensors:
  x:  {shape: [64, 32], placements: ["S(0)"]}
workload:
  - {name: a, op: gelu, a: x, output: y}
)yaml");
  EXPECT_EQ(e.where(), at(3, 35));
  EXPECT_THAT(e.message(), HasSubstr("comes first (outermost)"));
}

TEST_F(PipelineStageReader, APipelineNeedsADimForEachStagesRanks) {
  // mesh: {shape: [8], names: [pp]}: 'pp' at column 28.
  const auto e = load_error(R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [8], names: [pp]}
tensors:
  x:  {shape: [64, 32], placements: ["S(0)"]}
workload:
  - {name: a, op: gelu, a: x, output: y}
)yaml");
  EXPECT_EQ(e.where(), at(3, 28));
  EXPECT_THAT(e.message(), HasSubstr("a pipeline needs a mesh dim beside pp"));
}

TEST_F(PipelineStageReader, ACollectiveInAPipelinedStepIsRefusedAtTheOp) {
  // The op's map starts at column 5 of line 9.
  const auto e = load_error(kHead + "  - {name: a, op: mm, a: x, b: w0, output: y}\n" +
                            "  - {name: c, op: all_reduce, bytes: 1 MiB, mesh_dim: tp}\n");
  EXPECT_EQ(e.where(), at(9, 5));
  EXPECT_THAT(e.message(), HasSubstr("all_reduce in a pipelined step"));
}

TEST_F(PipelineStageReader, VirtualStagesNumberTheModelChunks) {
  // pp 2 × virtual_stages 2: stages 0..3, stage N on the ranks of N % 2.
  const Scenario s = load(kHead + R"yaml(  - {name: a, op: mm, a: x, b: w0, output: y, stage: 0}
  - {name: b, op: gelu, a: y, output: z, stage: 3}
training: {virtual_stages: 2}
)yaml");
  EXPECT_EQ(s.virtual_stages(), 2);
  EXPECT_EQ(s.workload.at(1).stage, 3);
  // "  - {name: b, op: gelu, a: y, output: z, stage: 4}": the 4 at column 49 of line 9.
  const auto e = load_error(kHead + "  - {name: a, op: mm, a: x, b: w0, output: y, stage: 0}\n" +
                            "  - {name: b, op: gelu, a: y, output: z, stage: 4}\n" +
                            "training: {virtual_stages: 2}\n");
  EXPECT_EQ(e.where(), at(9, 49));
  EXPECT_THAT(e.message(),
              HasSubstr("stage 4 is outside the 4 virtual stages (pp 2 x training.virtual_stages "
                        "2) (0..3)"));
}

TEST_F(PipelineStageReader, VirtualStagesNeedAPipeline) {
  // training: {virtual_stages: 2} on line 8: the value at column 28.
  const auto e = load_error(R"yaml(version: 2
cluster: clusters/dgx-h100.yaml
mesh: {shape: [8], names: [tp]}
tensors:
  x:  {shape: [64, 32], placements: ["S(0)"]}
workload:
  - {name: a, op: gelu, a: x, output: y}
training: {virtual_stages: 2}
)yaml");
  EXPECT_EQ(e.where(), at(8, 28));
  EXPECT_THAT(e.message(), HasSubstr("training.virtual_stages 2 needs pipeline stages"));
}

TEST_F(PipelineStageReader, AVersion1MeshDimNamedPpIsJustAName) {
  // Version 1 has no stages: pp is an ordinary dim a collective can name.
  const Scenario s = load(R"yaml(cluster: clusters/dgx-h100.yaml
mesh: {shape: [2, 4], names: [tp, pp]}
workload:
  - {name: c, op: all_reduce, bytes: 1 MiB, mesh_dim: pp}
)yaml");
  EXPECT_EQ(s.pipeline_stages(), 1);
  EXPECT_EQ(s.workload.at(0).mesh_dim, 1);
}

}  // namespace
