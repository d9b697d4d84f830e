// The scenario loader on bad input: each error names file:line:col (1-based, counted by
// hand in the YAML below) and says what was expected (scenario-format.md, "Errors").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_test_files.hpp"

using namespace symmesh;
using symmesh::testing::error_of;
using symmesh::testing::ScenarioFiles;
using ::testing::HasSubstr;

namespace {

// Loads `yaml` as dir/scenario.yaml and returns its error; `path` receives the file path.
class ScenarioErrors : public ::testing::Test {
 protected:
  InvalidArgument load_error(const std::string& yaml) {
    path_ = files_.write("scenario.yaml", yaml);
    return error_of([&] { load_scenario(path_); });
  }
  std::string at(int line, int column) const {
    return path_ + ":" + std::to_string(line) + ":" + std::to_string(column);
  }

  ScenarioFiles files_;
  std::string path_;
};

// A one-node cluster of 8 GPUs on lines 2-6 (line 1 is "cluster:").
const char* kCluster = R"yaml(cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: {peak: {bf16: 989.4 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}
  intra_node: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}
  inter_node: {kind: rail, nics_per_node: 8, bandwidth: 400 Gb/s, latency: 3 us}
)yaml";

}  // namespace

TEST_F(ScenarioErrors, UnknownKeySuggestsTheClosest) {
  const auto e = load_error(std::string(kCluster) + R"yaml(meshh: {shape: [8]}
workload: [{op: all_reduce, bytes: 1 MiB}]
)yaml");
  EXPECT_EQ(e.where(), at(7, 1));
  EXPECT_EQ(e.message(), "unknown key 'meshh' \u2014 did you mean 'mesh'?");
  EXPECT_EQ(std::string(e.what()), at(7, 1) + ": unknown key 'meshh' \u2014 did you mean 'mesh'?");
}

TEST_F(ScenarioErrors, UnknownNestedKeyAndTransposition) {
  auto e = load_error(R"yaml(cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: {peak: {bf16: 989.4 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}
  intra_node: {kind: nvswitch, bandwdith: 450 GB/s, latency: 1 us}
)yaml");
  EXPECT_EQ(e.where(), at(5, 32));
  EXPECT_THAT(e.message(), HasSubstr("unknown key 'bandwdith' in cluster.intra_node"));
  EXPECT_THAT(e.message(), HasSubstr("did you mean 'bandwidth'?"));

  e = load_error(std::string(kCluster) + "mesh: [8]\nworklaod: []\n");
  EXPECT_EQ(e.where(), at(8, 1));
  EXPECT_THAT(e.message(), HasSubstr("did you mean 'workload'?"));

  e = load_error(std::string(kCluster) + "mesh: [8]\nzzz: 1\n");
  EXPECT_THAT(e.message(), HasSubstr("unknown key 'zzz' (expected one of: version, name"));
}

TEST_F(ScenarioErrors, QuantityWithoutUnit) {
  const auto e = load_error(R"yaml(cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: {peak: {bf16: 989.4 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}
  intra_node: {kind: nvswitch, bandwidth: 450, latency: 1 us}
)yaml");
  EXPECT_EQ(e.where(), at(5, 43));
  EXPECT_EQ(e.message(), "bandwidth '450' needs a unit, e.g. '450 GB/s'");
}

TEST_F(ScenarioErrors, QuantityOfTheWrongKind) {
  const auto e = load_error(R"yaml(cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: {peak: {bf16: 989.4 TFLOP/s}, memory: {capacity: 3.35 TB/s, bandwidth: 80 GiB}}
)yaml");
  EXPECT_EQ(e.where(), at(4, 57));
  EXPECT_THAT(e.message(), HasSubstr("'3.35 TB/s' is a bandwidth, but a size is expected"));
}

TEST_F(ScenarioErrors, WrongTypes) {
  auto e = load_error("cluster:\n  nodes: two\n");
  EXPECT_EQ(e.where(), at(2, 10));
  EXPECT_THAT(e.message(), HasSubstr("cluster.nodes: expected an integer >= 1, got 'two'"));

  e = load_error(std::string(kCluster) + "mesh: {shape: 8}\n");
  EXPECT_EQ(e.where(), at(7, 15));
  EXPECT_THAT(e.message(), HasSubstr("expected a list of integers >= 1, e.g. [4, 8]"));

  e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {op: mm, a: [8192], b: [8192, 8192], a_placements: [R], b_placements: [R]}
)yaml");
  EXPECT_EQ(e.where(), at(9, 17));
  EXPECT_THAT(e.message(), HasSubstr("mm needs a 2-D tensor"));
  EXPECT_THAT(e.message(), HasSubstr("expected a list of 2 integers"));

  e = load_error(std::string(kCluster) + "mesh: [8]\nworkload: {op: mm}\n");
  EXPECT_EQ(e.where(), at(8, 11));
  EXPECT_THAT(e.message(), HasSubstr("workload: expected a list, got a map"));
}

TEST_F(ScenarioErrors, MissingRequiredKeys) {
  auto e = load_error(std::string(kCluster) + "mesh: [8]\n");
  EXPECT_EQ(e.where(), at(1, 1));
  EXPECT_EQ(e.message(), "missing key 'workload'");

  e = load_error(R"yaml(cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: {peak: {bf16: 989.4 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}
  intra_node: {kind: nvswitch, bandwidth: 450 GB/s}
mesh: [8]
workload: [{op: all_reduce, bytes: 1 MiB}]
)yaml");
  EXPECT_EQ(e.where(), at(2, 3));  // the cluster map
  EXPECT_EQ(e.message(), "missing key 'latency' in cluster.intra_node");

  // Two nodes need an inter-node network.
  e = load_error(R"yaml(cluster:
  nodes: 2
  gpus_per_node: 8
  gpu: {peak: {bf16: 989.4 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}
  intra_node: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}
mesh: [16]
workload: [{op: all_reduce, bytes: 1 MiB}]
)yaml");
  EXPECT_THAT(e.message(), HasSubstr("missing key 'inter_node' in cluster (needed with 2 nodes)"));
}

TEST_F(ScenarioErrors, InvalidClusterFigurePointsAtIt) {
  // A rail-optimised network has one NIC per GPU: 4 NICs for 8 GPUs is wrong.
  const auto e = load_error(R"yaml(cluster:
  nodes: 2
  gpus_per_node: 8
  gpu: {peak: {bf16: 989.4 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}
  intra_node: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}
  inter_node: {kind: rail, nics_per_node: 4, bandwidth: 400 Gb/s, latency: 3 us}
)yaml");
  EXPECT_EQ(e.where(), at(6, 43));
  EXPECT_THAT(e.message(), HasSubstr("cluster.inter_node.nics_per_node"));
  EXPECT_THAT(e.message(), HasSubstr("one NIC per GPU"));
}

TEST_F(ScenarioErrors, UnknownKindSuggests) {
  const auto e = load_error(R"yaml(cluster:
  intra_node: {kind: nvswich}
)yaml");
  EXPECT_EQ(e.where(), at(2, 22));
  EXPECT_THAT(e.message(), HasSubstr("unknown cluster.intra_node.kind 'nvswich'"));
  EXPECT_THAT(e.message(), HasSubstr("did you mean 'nvswitch'?"));
}

TEST_F(ScenarioErrors, MeshDoesNotCoverTheCluster) {
  const auto e = load_error(R"yaml(cluster:
  base: clusters/dgx-h100.yaml
  nodes: 2
mesh: {shape: [4, 8], names: [dp, tp]}
workload: [{op: all_reduce, bytes: 1 MiB, mesh_dim: dp}]
)yaml");
  EXPECT_EQ(e.where(), at(4, 15));
  EXPECT_EQ(e.message(), "mesh 4x8 has 32 ranks but the cluster has 16 GPUs (2 nodes x 8)");
}

TEST_F(ScenarioErrors, MeshNames) {
  auto e = load_error(std::string(kCluster) + "mesh: {shape: [2, 4], names: [dp]}\n");
  EXPECT_EQ(e.where(), at(7, 30));
  EXPECT_THAT(e.message(), HasSubstr("1 names for the 2-D mesh 2x4"));
  e = load_error(std::string(kCluster) + "mesh: {shape: [2, 4], names: [dp, dp]}\n");
  EXPECT_EQ(e.where(), at(7, 35));
  EXPECT_THAT(e.message(), HasSubstr("duplicate mesh dim name 'dp'"));
}

TEST_F(ScenarioErrors, PlacementCountMustMatchMeshDims) {
  const auto e = load_error(std::string(kCluster) + R"yaml(mesh: {shape: [2, 4], names: [dp, tp]}
workload:
  - {name: up, op: mm, a: [64, 32], b: [32, 16],
     a_placements: ["S(0)"], b_placements: [R, R]}
)yaml");
  EXPECT_EQ(e.where(), at(10, 20));
  EXPECT_THAT(e.message(), HasSubstr("1 placement (S(0)) for the 2-D mesh"));
  EXPECT_THAT(e.message(), HasSubstr("one per mesh dim"));
}

TEST_F(ScenarioErrors, ShardDimBeyondTheTensorsRank) {
  const auto e = load_error(std::string(kCluster) + R"yaml(mesh: {shape: [2, 4], names: [dp, tp]}
workload:
  - {name: up, op: mm, a: [64, 32], b: [32, 16],
     a_placements: ["S(0)", R], b_placements: [R, "S(2)"]}
)yaml");
  EXPECT_EQ(e.where(), at(10, 51));  // the offending item
  EXPECT_THAT(e.message(), HasSubstr("S(2) is beyond the rank of the 2-D tensor b (32x16)"));
}

TEST_F(ScenarioErrors, BadPlacementText) {
  const auto e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {op: mm, a: [64, 32], b: [32, 16], a_placements: ["Shard"], b_placements: [R]}
)yaml");
  EXPECT_EQ(e.where(), at(9, 55));
  EXPECT_THAT(e.message(), HasSubstr("shard needs a tensor dim"));
}

TEST_F(ScenarioErrors, InnerAndBatchDims) {
  auto e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {op: mm, a: [8, 16], b: [32, 8], a_placements: [R], b_placements: [R]}
)yaml");
  EXPECT_EQ(e.where(), at(9, 29));
  EXPECT_THAT(e.message(), HasSubstr("inner dims differ: a is 8x16, b is 32x8"));

  e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {op: bmm, a: [4, 8, 16], b: [2, 16, 8], a_placements: [R], b_placements: [R]}
)yaml");
  EXPECT_EQ(e.where(), at(9, 33));
  EXPECT_THAT(e.message(), HasSubstr("batch dims differ"));

  e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {op: addmm, bias: [3], a: [8, 16], b: [16, 4], bias_placements: [R],
     a_placements: [R], b_placements: [R]}
)yaml");
  EXPECT_EQ(e.where(), at(9, 23));
  EXPECT_THAT(e.message(), HasSubstr("bias 3 does not broadcast to the output 8x4"));
}

TEST_F(ScenarioErrors, LinearShapesAndBias) {
  // The weight is [n, k]: its second dim meets a's last.
  auto e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {op: linear, a: [8, 16], b: [16, 8], a_placements: [R], b_placements: [R]}
)yaml");
  EXPECT_EQ(e.where(), at(9, 33));
  EXPECT_THAT(e.message(),
              HasSubstr("inner dims differ: a is 8x16, b is 16x8 (a's last dim must equal b's "
                        "second)"));

  e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {op: linear, a: [2, 2, 8, 16], b: [4, 16], a_placements: [R], b_placements: [R]}
)yaml");
  EXPECT_EQ(e.where(), at(9, 21));
  EXPECT_THAT(e.message(), HasSubstr("linear needs a 2-D or 3-D tensor, got 2x2x8x16 (expected a "
                                     "list of 2 or 3 integers"));

  // bias_placements without a bias, and a bias one GEMM cannot add to a 3-D input's rows.
  e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {op: linear, a: [8, 16], b: [4, 16], a_placements: [R], b_placements: [R],
     bias_placements: [R]}
)yaml");
  EXPECT_EQ(e.where(), at(10, 23));
  EXPECT_THAT(e.message(), HasSubstr("bias_placements without a bias"));

  e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {op: linear, a: [2, 8, 16], b: [4, 16], bias: [8, 4], a_placements: [R], b_placements: [R],
     bias_placements: [R]}
)yaml");
  EXPECT_EQ(e.where(), at(9, 51));
  EXPECT_THAT(e.message(), HasSubstr("bias 8x4 is broadcast along some of the output dims"));

  // addmm still needs its bias.
  e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {op: addmm, a: [8, 16], b: [16, 4], a_placements: [R], b_placements: [R]}
)yaml");
  EXPECT_EQ(e.where(), at(9, 5));
  EXPECT_THAT(e.message(), HasSubstr("missing key 'bias' in workload[0] (addmm needs a bias)"));
}

TEST_F(ScenarioErrors, DuplicateOpNames) {
  auto e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {name: x, op: all_reduce, bytes: 1 MiB}
  - {name: x, op: all_gather, bytes: 1 MiB}
)yaml");
  EXPECT_EQ(e.where(), at(10, 12));
  EXPECT_EQ(e.message(), "duplicate op name 'x' (first at line 9)");

  // A default name ("all_gather1") can clash with an explicit one.
  e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {name: all_gather1, op: all_reduce, bytes: 1 MiB}
  - {op: all_gather, bytes: 1 MiB}
)yaml");
  EXPECT_EQ(e.where(), at(10, 5));
  EXPECT_THAT(e.message(), HasSubstr("duplicate op name 'all_gather1'"));
}

TEST_F(ScenarioErrors, PutSignalRanksWithinTheWorld) {
  auto e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {op: put_signal, bytes: 1 MiB, src: 0, dst: 8}
)yaml");
  EXPECT_EQ(e.where(), at(9, 49));
  EXPECT_THAT(e.message(), HasSubstr("rank 8 is outside the cluster's 8 GPUs (ranks 0..7)"));

  e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {op: put_signal, bytes: 1 MiB, src: -1, dst: 2}
)yaml");
  EXPECT_EQ(e.where(), at(9, 41));
  EXPECT_THAT(e.message(), HasSubstr("workload[0].src: expected a rank"));

  e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {op: put_signal, bytes: 1 MiB, src: 3, dst: 3}
)yaml");
  EXPECT_THAT(e.message(), HasSubstr("src and dst must differ"));
}

TEST_F(ScenarioErrors, UnknownMeshDim) {
  auto e = load_error(std::string(kCluster) + R"yaml(mesh: {shape: [2, 4], names: [dp, tp]}
workload:
  - {op: all_gather, bytes: 1 MiB, mesh_dim: tpp}
)yaml");
  EXPECT_EQ(e.where(), at(9, 46));
  EXPECT_THAT(e.message(), HasSubstr("unknown mesh dim 'tpp' \u2014 did you mean 'tp'?"));

  e = load_error(std::string(kCluster) + R"yaml(mesh: {shape: [2, 4], names: [dp, tp]}
workload:
  - {op: all_gather, bytes: 1 MiB, mesh_dim: 2}
)yaml");
  EXPECT_THAT(e.message(), HasSubstr("mesh dim 2 is out of range for the 2-D mesh"));

  e = load_error(std::string(kCluster) + R"yaml(mesh: {shape: [2, 4], names: [dp, tp]}
workload:
  - {op: all_gather, bytes: 1 MiB}
)yaml");
  EXPECT_EQ(e.where(), at(9, 5));
  EXPECT_THAT(e.message(), HasSubstr("missing key 'mesh_dim'"));
}

TEST_F(ScenarioErrors, UnknownOpAndKeysOfAnotherOp) {
  auto e = load_error(std::string(kCluster) + "mesh: [8]\nworkload: [{op: bmmm}]\n");
  EXPECT_EQ(e.where(), at(8, 17));
  EXPECT_THAT(e.message(), HasSubstr("unknown op 'bmmm' \u2014 did you mean 'bmm'?"));

  e = load_error(std::string(kCluster) +
                 "mesh: [8]\nworkload: [{op: all_reduce, bytes: 1 MiB, src: 0}]\n");
  EXPECT_EQ(e.where(), at(8, 43));
  EXPECT_THAT(e.message(), HasSubstr("unknown key 'src' in workload[0]"));
}

TEST_F(ScenarioErrors, CostModelAndDtype) {
  auto e = load_error(std::string(kCluster) + "mesh: [8]\ncost_model: analytik\n");
  EXPECT_EQ(e.where(), at(8, 13));
  EXPECT_THAT(e.message(), HasSubstr("did you mean 'analytic'?"));
  e = load_error(std::string(kCluster) + "mesh: [8]\ndtype: bf61\n");
  EXPECT_EQ(e.where(), at(8, 8));
  EXPECT_THAT(e.message(), HasSubstr("bf61"));
}

TEST_F(ScenarioErrors, SweepAndObjective) {
  auto e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload: [{op: all_reduce, bytes: 1 MiB}]
sweep: {nodes: [1, 2], mesh: [[8], [12]]}
)yaml");
  EXPECT_EQ(e.where(), at(9, 36));
  EXPECT_THAT(e.message(), HasSubstr("sweep mesh 12 has 12 ranks"));

  e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload: [{op: all_reduce, bytes: 1 MiB}]
objective: {max_time: 20}
)yaml");
  EXPECT_EQ(e.where(), at(9, 23));
  EXPECT_EQ(e.message(), "time '20' needs a unit, e.g. '20 us'");
}

TEST_F(ScenarioErrors, MissingAndUnreadableFiles) {
  const std::string missing = files_.dir() + "/no-such.yaml";
  auto e = error_of([&] { load_scenario(missing); });
  EXPECT_EQ(e.where(), missing);
  EXPECT_THAT(e.message(), HasSubstr("cannot open '" + missing + "'"));

  e = error_of([&] { load_scenario(files_.dir()); });
  EXPECT_THAT(e.message(), HasSubstr("is a directory"));

  e = load_error("cluster: clusters/dgx-h10.yaml\nmesh: [8]\n");
  EXPECT_EQ(e.where(), at(1, 10));
  EXPECT_THAT(e.message(), HasSubstr("cluster file 'clusters/dgx-h10.yaml' not found"));
  EXPECT_THAT(e.message(), HasSubstr("did you mean 'clusters/dgx-h100.yaml'?"));
}

TEST_F(ScenarioErrors, CyclicClusterReference) {
  files_.write("a.yaml", "base: b.yaml\nnodes: 1\n");
  files_.write("b.yaml", "nodes: 2\nbase: a.yaml\n");
  const auto e = load_error("cluster: a.yaml\nmesh: [8]\n");
  // a.yaml -> b.yaml -> a.yaml: the reference that closes the cycle is b.yaml:2:7.
  EXPECT_EQ(e.where(), files_.dir() + "/b.yaml:2:7");
  EXPECT_THAT(e.message(), HasSubstr("cyclic cluster reference"));
  EXPECT_THAT(e.message(), HasSubstr("a.yaml -> "));
}

TEST_F(ScenarioErrors, YamlSyntaxAndDuplicateKeys) {
  auto e = load_error("cluster: [1, 2\nmesh: [8]\n");
  EXPECT_THAT(e.message(), HasSubstr("invalid YAML"));
  EXPECT_THAT(e.where(), HasSubstr(path_ + ":"));

  e = load_error(std::string(kCluster) + "mesh: [8]\nmesh: [8]\n");
  EXPECT_EQ(e.where(), at(8, 1));
  EXPECT_EQ(e.message(), "duplicate key 'mesh' (first at line 7)");

  e = load_error("");
  EXPECT_THAT(e.message(), HasSubstr("empty scenario"));
}
