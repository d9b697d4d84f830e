// The scenario loader on bad input: each error names file:line:col (1-based, counted by
// hand in the YAML below) and says what was expected (scenario-format.md, "Errors").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_test_files.hpp"

using namespace symmesh;
using symmesh::testing::error_of;
using ::testing::HasSubstr;

namespace {

class ScenarioErrors : public symmesh::testing::ScenarioFileTest {};

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

  // A self-put is accepted, as NCCL accepts one (tests/tools/simulate_command_test.cpp
  // times it).
  const Scenario self = load_scenario_text(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {op: put_signal, bytes: 1 MiB, src: 3, dst: 3}
)yaml",
                                           "self.yaml");
  EXPECT_EQ(self.workload.at(0).src, 3);
  EXPECT_EQ(self.workload.at(0).dst, 3);
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

TEST_F(ScenarioErrors, PlacementTextInOneStringPointsIntoTheFile) {
  // One string of placements fails at its value, like a list's item does.
  const auto e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
workload:
  - {op: mm, a: [64, 32], b: [32, 16], a_placements: "S(0),Shard", b_placements: [R]}
)yaml");
  EXPECT_EQ(e.where(), at(9, 54));
  EXPECT_THAT(e.message(), HasSubstr("shard needs a tensor dim"));
}

// ---- Version 2 (scenario-format.md, "Version 2: named tensors and dataflow") ----

namespace {

// kCluster (lines 1-6), then version 2 on a 2x4 mesh (lines 7-8); tensors start on line 9.
std::string v2(const std::string& rest) {
  return std::string(kCluster) + "version: 2\nmesh: {shape: [2, 4], names: [dp, tp]}\n" + rest;
}

// Declarations only (from line 9), then a workload that reads none of them.
std::string v2_tensors(const std::string& tensors) {
  return v2(tensors + "workload: [{op: all_reduce, bytes: 1 MiB, mesh_dim: dp}]\n");
}

// A valid two-op pipeline, x @ w1 -> h, h @ w2 -> out, in lines 9-15; tests change a line.
const char* kTensors = R"yaml(tensors:
  x: {shape: [64, 32], placements: ["S(0)", R]}
  w1: {shape: [32, 16], parameter: true}
  w2: {shape: [16, 8], parameter: true}
workload:
  - {name: up, op: mm, a: x, b: w1, output: h}
  - {name: down, op: mm, a: h, b: w2, output: out}
)yaml";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

}  // namespace

TEST_F(ScenarioErrors, PipelineOfTheVersionTwoTestsIsValid) {
  const Scenario s = load_scenario(files_.write("ok.yaml", v2(kTensors)));
  EXPECT_EQ(s.workload.size(), 2u);
}

TEST_F(ScenarioErrors, VersionOneOrTwo) {
  auto e = load_error(std::string(kCluster) + R"yaml(version: 3
mesh: [8]
workload: [{op: all_reduce, bytes: 1 MiB}]
)yaml");
  EXPECT_EQ(e.where(), at(7, 10));
  EXPECT_EQ(e.message(), "version 3 is not supported (this symmesh reads versions 1 and 2)");

  e = load_error(std::string(kCluster) + "version: 0\nmesh: [8]\n");
  EXPECT_EQ(e.where(), at(7, 10));
  EXPECT_THAT(e.message(), HasSubstr("version: expected an integer >= 1, got 0"));
}

TEST_F(ScenarioErrors, VersionTwoKeysInAVersionOneFile) {
  auto e = load_error(std::string(kCluster) + R"yaml(mesh: [8]
tensors:
  x: {shape: [8, 8], placements: [R]}
workload: [{op: all_reduce, bytes: 1 MiB}]
)yaml");
  EXPECT_EQ(e.where(), at(8, 1));
  EXPECT_EQ(e.message(), "'tensors' needs 'version: 2' (named tensors are a version-2 feature)");

  e = load_error(std::string(kCluster) + R"yaml(version: 1
mesh: [8]
training: {optimizer: sgd}
workload: [{op: all_reduce, bytes: 1 MiB}]
)yaml");
  EXPECT_EQ(e.where(), at(9, 1));
  EXPECT_EQ(e.message(),
            "'training' needs 'version: 2' (the training step is a version-2 feature)");
}

TEST_F(ScenarioErrors, TensorsIsANonEmptyMapOfMaps) {
  auto e = load_error(v2("tensors: [x, w]\nworkload: [{op: all_reduce, bytes: 1 MiB}]\n"));
  EXPECT_EQ(e.where(), at(9, 10));
  EXPECT_EQ(e.message(),
            "tensors: expected a map of tensor declarations, name: {shape, placements, "
            "parameter}, got a list");

  e = load_error(v2("tensors: {}\nworkload: [{op: all_reduce, bytes: 1 MiB}]\n"));
  EXPECT_EQ(e.where(), at(9, 10));
  EXPECT_THAT(e.message(), HasSubstr("tensors: expected at least one tensor declaration, e.g. "
                                     "x: {shape: [8192, 8192], placements: [\"S(0)\", \"R\"]}"));

  e = load_error(v2_tensors("tensors:\n  x: [8, 8]\n"));
  EXPECT_EQ(e.where(), at(10, 6));
  EXPECT_EQ(e.message(), "tensors.x: expected a map, got a list");
}

TEST_F(ScenarioErrors, TensorNamesAndKeys) {
  auto e = load_error(v2_tensors("tensors:\n  x: {shape: [8, 8], placement: [R, R]}\n"));
  EXPECT_EQ(e.where(), at(10, 22));
  EXPECT_EQ(e.message(), "unknown key 'placement' in tensors.x \u2014 did you mean 'placements'?");

  e = load_error(v2_tensors("tensors:\n  \"\": {shape: [8, 8], placements: [R, R]}\n"));
  EXPECT_EQ(e.where(), at(10, 3));
  EXPECT_EQ(e.message(), "tensors: a tensor name must not be empty");

  e = load_error(v2_tensors(R"yaml(tensors:
  x: {shape: [8, 8], placements: [R, R]}
  x: {shape: [8, 8], parameter: true}
)yaml"));
  EXPECT_EQ(e.where(), at(11, 3));
  EXPECT_EQ(e.message(), "duplicate key 'x' in tensors (first at line 10)");

  e = load_error(v2_tensors("tensors:\n  w: {shape: [8, 8], parameter: yes}\n"));
  EXPECT_EQ(e.where(), at(10, 33));
  EXPECT_EQ(e.message(), "tensors.w.parameter: expected true or false, got 'yes'");
}

TEST_F(ScenarioErrors, TensorRoles) {
  // A shape without `parameter: true`: an input, which must say where it is.
  auto e = load_error(v2_tensors("tensors:\n  x: {shape: [8, 8]}\n"));
  EXPECT_EQ(e.where(), at(10, 3));
  EXPECT_EQ(e.message(),
            "tensor 'x' is an input: give its placements, one per mesh dim, e.g. placements: "
            "[\"S(0)\", \"R\"]");

  e = load_error(v2_tensors("tensors:\n  w: {parameter: true, placements: [R, R]}\n"));
  EXPECT_EQ(e.where(), at(10, 3));
  EXPECT_EQ(e.message(), "tensor 'w' is a parameter: give its shape, e.g. shape: [8192, 8192]");

  // No shape: an output requirement, which is nothing without placements.
  e = load_error(v2_tensors("tensors:\n  y: {parameter: false}\n"));
  EXPECT_EQ(e.where(), at(10, 3));
  EXPECT_EQ(e.message(),
            "tensor 'y' has no shape, so it is an output requirement: give its placements, one "
            "per mesh dim (an input or a parameter needs a shape)");
}

TEST_F(ScenarioErrors, TensorShapesAndPlacements) {
  auto e = load_error(v2_tensors("tensors:\n  x: {shape: [8, -1], placements: [R, R]}\n"));
  EXPECT_EQ(e.where(), at(10, 18));
  EXPECT_THAT(e.message(), HasSubstr("tensors.x.shape: expected a list of sizes >= 0"));

  e = load_error(v2_tensors("tensors:\n  x: {shape: [8, 8], placements: [\"S(0)\"]}\n"));
  EXPECT_EQ(e.where(), at(10, 34));
  EXPECT_EQ(e.message(),
            "tensors.x.placements: 1 placement (S(0)) for the 2-D mesh 2x4 (dp,tp); give one per "
            "mesh dim");

  e = load_error(v2_tensors("tensors:\n  x: {shape: [8, 8], placements: [R, \"S(2)\"]}\n"));
  EXPECT_EQ(e.where(), at(10, 38));
  EXPECT_EQ(e.message(),
            "tensors.x.placements: S(2) is beyond the rank of the 2-D tensor 'x' (8x8); S(d) "
            "needs d < 2");

  // A parameter's placements, optional, are checked the same way.
  e = load_error(
      v2_tensors("tensors:\n  w: {shape: [8], parameter: true, placements: [R, \"S(1)\"]}\n"));
  EXPECT_EQ(e.where(), at(10, 52));
  EXPECT_THAT(e.message(), HasSubstr("S(1) is beyond the rank of the 1-D tensor 'w' (8)"));
}

TEST_F(ScenarioErrors, Training) {
  const std::string ops = "workload: [{op: all_reduce, bytes: 1 MiB, mesh_dim: dp}]\n";
  auto e = load_error(v2("training: {optimizer: adamm}\n" + ops));
  EXPECT_EQ(e.where(), at(9, 23));
  EXPECT_EQ(e.message(), "unknown training.optimizer 'adamm' \u2014 did you mean 'adam'?");

  e = load_error(v2("training: {optimizer: lion}\n" + ops));
  EXPECT_EQ(e.message(), "unknown training.optimizer 'lion' (expected one of: adam, sgd)");

  // ZeRO stages 0-3 (3 loads: the planner shards the weights, tests/evaluation/
  // zero_step_test.cpp).
  EXPECT_EQ(load_scenario_text(v2("training: {zero: 3}\n" + ops), "s.yaml").training->zero_stage,
            3);
  e = load_error(v2("training: {zero: 4}\n" + ops));
  EXPECT_EQ(e.message(), "training.zero must be 0, 1, 2 or 3 (a ZeRO stage)");
  e = load_error(v2("training: {zero: one}\n" + ops));
  EXPECT_EQ(e.message(), "training.zero: expected a ZeRO stage: 0, 1, 2 or 3, got 'one'");

  e = load_error(v2("training: {backwards: true}\n" + ops));
  EXPECT_EQ(e.where(), at(9, 12));
  EXPECT_EQ(e.message(), "unknown key 'backwards' in training \u2014 did you mean 'backward'?");

  e = load_error(v2("training: {backward: 1}\n" + ops));
  EXPECT_EQ(e.where(), at(9, 22));
  EXPECT_EQ(e.message(), "training.backward: expected true or false, got '1'");

  e = load_error(v2("training: adam\n" + ops));
  EXPECT_EQ(e.where(), at(9, 11));
  EXPECT_EQ(e.message(), "training: expected a map, got 'adam'");
}

TEST_F(ScenarioErrors, VersionTwoMatrixOpKeys) {
  // Version 1's placement keys: the placements moved to the declarations.
  auto e = load_error(v2(replaced(kTensors, "output: h}", "output: h, a_placements: [R, R]}")));
  EXPECT_EQ(e.where(), at(14, 48));
  EXPECT_EQ(e.message(),
            "'a_placements' is a version-1 key: in version 2 placements belong to the tensors "
            "(declare them under 'tensors:')");
  e = load_error(v2(replaced(kTensors, "output: out}", "output: out, out_placements: [R, R]}")));
  EXPECT_EQ(e.where(), at(15, 52));
  EXPECT_THAT(e.message(), HasSubstr("'out_placements' is a version-1 key"));

  // A shape where a name belongs.
  e = load_error(v2(replaced(kTensors, "a: x,", "a: [64, 32],")));
  EXPECT_EQ(e.where(), at(14, 27));
  EXPECT_EQ(e.message(),
            "workload[0].a: expected a tensor name, got a list (in version 2 shapes and "
            "placements belong to the tensors: declare them under 'tensors:')");

  e = load_error(v2(replaced(kTensors, ", output: h}", "}")));
  EXPECT_EQ(e.where(), at(14, 5));
  EXPECT_EQ(e.message(), "missing key 'output' in workload[0]");

  e = load_error(v2(replaced(kTensors, "output: h}", "output: \"\"}")));
  EXPECT_EQ(e.where(), at(14, 45));
  EXPECT_EQ(e.message(), "workload[0].output: a tensor name must not be empty");

  // The bias key as the op takes it: addmm needs one, mm takes none.
  e = load_error(v2(replaced(kTensors, "op: mm, a: x", "op: addmm, a: x")));
  EXPECT_EQ(e.where(), at(14, 5));
  EXPECT_EQ(e.message(), "missing key 'bias' in workload[0] (addmm needs a bias)");
  e = load_error(v2(replaced(kTensors, "b: w1,", "b: w1, bias: w2,")));
  EXPECT_EQ(e.where(), at(14, 37));
  EXPECT_THAT(e.message(), HasSubstr("unknown key 'bias' in workload[0]"));
}

TEST_F(ScenarioErrors, UnknownTensorSuggestsAKnownOne) {
  auto e = load_error(v2(replaced(kTensors, "a: h,", "a: hh,")));
  EXPECT_EQ(e.where(), at(15, 29));
  EXPECT_EQ(e.message(),
            "unknown tensor 'hh': not declared under 'tensors:' and not the output of an earlier "
            "op \u2014 did you mean 'h'?");

  // Ops run in order: a later op's output is not there yet.
  e = load_error(v2(replaced(kTensors, "a: x,", "a: out,")));
  EXPECT_EQ(e.where(), at(14, 27));
  EXPECT_THAT(e.message(), HasSubstr("unknown tensor 'out': not declared under 'tensors:' and "
                                     "not the output of an earlier op (expected one of: x, w1, "
                                     "w2)"));

  // An output declaration is a requirement on a producer, not something to read first.
  // (y is line 13; the workload moves one line down.)
  e = load_error(v2(replaced(replaced(kTensors, "  w2: {shape: [16, 8], parameter: true}\n",
                                      "  w2: {shape: [16, 8], parameter: true}\n"
                                      "  y: {placements: [R, R]}\n"),
                             "a: x,", "a: y,")));
  EXPECT_EQ(e.where(), at(15, 27));
  EXPECT_EQ(e.message(),
            "tensor 'y' is declared as an output (no shape, line 13) but no earlier op produces "
            "it; ops run in order, so its producer must come first");
}

TEST_F(ScenarioErrors, OutputNames) {
  auto e = load_error(v2(replaced(kTensors, "output: h}", "output: x}")));
  EXPECT_EQ(e.where(), at(14, 45));
  EXPECT_EQ(e.message(),
            "'x' is declared as an input (line 10); an op's output needs a new name or an output "
            "declaration");

  e = load_error(v2(replaced(kTensors, "output: h}", "output: w2}")));
  EXPECT_THAT(e.message(), HasSubstr("'w2' is declared as a parameter (line 12)"));

  // h @ w2 is [64, 8]; naming it h again is a second producer of h.
  e = load_error(v2(replaced(kTensors, "output: out}", "output: h}")));
  EXPECT_EQ(e.where(), at(15, 47));
  EXPECT_EQ(e.message(),
            "tensor 'h' is already the output of op 'up' (line 14); each tensor is produced by "
            "one op: give this output a new name");
}

TEST_F(ScenarioErrors, ResolvedShapesMustMultiply) {
  // h = x[64, 32] @ w1[32, 16] is 64x16; w2 as [8, 16] does not meet it.
  auto e = load_error(v2(replaced(kTensors, "w2: {shape: [16, 8]", "w2: {shape: [8, 16]")));
  EXPECT_EQ(e.where(), at(15, 35));
  EXPECT_EQ(e.message(),
            "workload[1].b: tensor 'w2' is 8x16; inner dims differ: a is 64x16, b is 8x16 (a's "
            "last dim must equal b's first)");

  e = load_error(v2(replaced(kTensors, "op: mm, a: x", "op: bmm, a: x")));
  EXPECT_EQ(e.where(), at(14, 28));
  EXPECT_EQ(e.message(), "workload[0].a: tensor 'x' is 64x32; bmm needs a 3-D tensor, got 64x32");

  // addmm's bias must broadcast to the output, x @ w1 = [64, 16].
  e = load_error(
      v2(replaced(kTensors, "op: mm, a: x, b: w1,", "op: addmm, a: x, b: w1, bias: w2,")));
  EXPECT_EQ(e.where(), at(14, 46));
  EXPECT_EQ(e.message(),
            "workload[0].bias: tensor 'w2' is 16x8; bias 16x8 does not broadcast to the output "
            "64x16 (each of its trailing dims must be 1 or the output's)");
}

TEST_F(ScenarioErrors, OutputDeclarationsAndUnreadTensors) {
  // y is declared (line 13) but the ops produce h and out.
  const std::string with_y = replaced(kTensors, "  w2: {shape: [16, 8], parameter: true}\n",
                                      "  w2: {shape: [16, 8], parameter: true}\n"
                                      "  y: {placements: [\"S(0)\", \"S(2)\"]}\n");
  auto e = load_error(v2(with_y));
  EXPECT_EQ(e.where(), at(13, 3));
  EXPECT_EQ(e.message(),
            "tensor 'y' has no shape and no op produces it \u2014 did you mean 'h' (the output of "
            "op 'up')?");

  // Produced by down as 64x8 = h[64, 16] @ w2[16, 8]: S(2) is beyond its rank.
  e = load_error(v2(replaced(with_y, "output: out}", "output: y}")));
  EXPECT_EQ(e.where(), at(13, 28));
  EXPECT_EQ(e.message(),
            "tensors.y.placements: S(2) is beyond the rank of the 2-D tensor 'y' (64x8, the "
            "output of op 'down'); S(d) needs d < 2");

  e = load_error(v2(replaced(kTensors, "  w2: {shape: [16, 8], parameter: true}\n",
                             "  w2: {shape: [16, 8], parameter: true}\n"
                             "  w3: {shape: [8, 8], parameter: true}\n")));
  EXPECT_EQ(e.where(), at(13, 3));
  EXPECT_EQ(e.message(), "tensor 'w3' is declared but no op reads it");
}

namespace symmesh {
namespace {

TEST_F(ScenarioErrors, ABarrierTakesNoArguments) {
  // Line 7 is the mesh, 8 "workload:", 9 the barrier; `bytes` starts at column 28.
  const auto e = load_error(std::string(kCluster) + R"yaml(mesh: {shape: [8]}
workload:
  - {name: s, op: barrier, bytes: 1 MiB}
)yaml");
  EXPECT_EQ(e.where(), at(9, 28));
  EXPECT_THAT(e.message(), HasSubstr("unknown key 'bytes'"));
}

}  // namespace
}  // namespace symmesh
