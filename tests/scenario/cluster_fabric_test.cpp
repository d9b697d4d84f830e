// The fabric fields of inter_node (spine_latency, oversubscription, nodes_per_leaf): read
// with their documented defaults when absent, refused with a message at the figure, and
// written back by the cluster writer so that the reader gets the same figures.
// Columns are counted by hand in the YAML below (1-based).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenario/cluster_writer.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_test_files.hpp"

using namespace symmesh;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

class ClusterFabric : public symmesh::testing::ScenarioFileTest {};

// Lines 1-5; the test adds line 6, `inter_node`.
const char* kHead = R"yaml(cluster:
  nodes: 4
  gpus_per_node: 8
  gpu: {peak: {bf16: 989.4 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}
  intra_node: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}
)yaml";

TEST_F(ClusterFabric, AbsentFieldsTakeTheDocumentedDefaults) {
  // docs/scenario-format.md: spine_latency 0.5 us, oversubscription 1, one leaf (0).
  const Scenario s =
      load(std::string(kHead) +
           "  inter_node: {kind: rail, nics_per_node: 8, bandwidth: 400 Gb/s, "
           "latency: 3 us}\nmesh: [32]\nworkload: [{op: all_reduce, bytes: 1 MiB}]\n");
  EXPECT_EQ(s.cluster.inter_node.spine_latency_s, 0.5e-6);
  EXPECT_EQ(s.cluster.inter_node.oversubscription, 1.0);
  EXPECT_EQ(s.cluster.inter_node.nodes_per_leaf, 0);
}

TEST_F(ClusterFabric, FieldsAreReadInTheirUnits) {
  const Scenario s = load(std::string(kHead) +
                          "  inter_node: {kind: fat-tree, nics_per_node: 8, bandwidth: 400 Gb/s, "
                          "latency: 3 us, spine_latency: 700 ns, oversubscription: 1.5, "
                          "nodes_per_leaf: 2}\nmesh: [32]\nworkload: [{op: all_reduce, bytes: 1 "
                          "MiB}]\n");
  EXPECT_DOUBLE_EQ(s.cluster.inter_node.spine_latency_s, 700e-9);
  EXPECT_EQ(s.cluster.inter_node.oversubscription, 1.5);
  EXPECT_EQ(s.cluster.inter_node.nodes_per_leaf, 2);
}

TEST_F(ClusterFabric, OversubscriptionBelowOneIsRefusedAtTheFigure) {
  const auto e = load_error(std::string(kHead) +
                            "  inter_node: {kind: fat-tree, nics_per_node: 8, bandwidth: 400 Gb/s, "
                            "latency: 3 us, oversubscription: 0.5}\n");
  EXPECT_EQ(e.where(), at(6, 104));
  EXPECT_THAT(e.message(), HasSubstr("cluster.inter_node.oversubscription: must be >= 1"));
  EXPECT_THAT(e.message(), HasSubstr("got 0.5"));
}

TEST_F(ClusterFabric, OversubscriptionIsAPlainNumber) {
  const auto e = load_error(std::string(kHead) +
                            "  inter_node: {kind: rail, nics_per_node: 8, bandwidth: 400 Gb/s, "
                            "latency: 3 us, oversubscription: 2:1}\n");
  EXPECT_EQ(e.where(), at(6, 100));
  EXPECT_THAT(e.message(),
              HasSubstr("cluster.inter_node.oversubscription: expected a plain number"));
}

TEST_F(ClusterFabric, SpineLatencyNeedsATimeUnit) {
  const auto e = load_error(std::string(kHead) +
                            "  inter_node: {kind: rail, nics_per_node: 8, bandwidth: 400 Gb/s, "
                            "latency: 3 us, spine_latency: 1}\n");
  EXPECT_EQ(e.where(), at(6, 97));
  EXPECT_THAT(e.message(), HasSubstr("needs a unit"));
}

TEST_F(ClusterFabric, NodesPerLeafMustBePositive) {
  const auto e = load_error(std::string(kHead) +
                            "  inter_node: {kind: rail, nics_per_node: 8, bandwidth: 400 Gb/s, "
                            "latency: 3 us, nodes_per_leaf: 0}\n");
  EXPECT_EQ(e.where(), at(6, 98));
  EXPECT_THAT(e.message(), HasSubstr("expected an integer >= 1, got 0"));
}

TEST_F(ClusterFabric, WriterWritesTheFabricAndTheReaderGetsItBack) {
  ClusterSpec c = load(std::string(kHead) +
                       "  inter_node: {kind: fat-tree, nics_per_node: 8, bandwidth: 400 Gb/s, "
                       "latency: 3 us}\nmesh: [32]\nworkload: [{op: all_reduce, bytes: 1 MiB}]\n")
                      .cluster;
  // Defaults are not written: a calibrated file stays as short as before.
  const std::string plain = scenario::cluster_file_text(c);
  EXPECT_THAT(plain, Not(HasSubstr("spine_latency")));
  EXPECT_THAT(plain, Not(HasSubstr("oversubscription")));
  EXPECT_THAT(plain, Not(HasSubstr("nodes_per_leaf")));

  c.inter_node.spine_latency_s = 0.7e-6;
  c.inter_node.oversubscription = 2;
  c.inter_node.nodes_per_leaf = 2;
  const std::string text = scenario::cluster_file_text(c);
  EXPECT_THAT(text, HasSubstr("spine_latency: 0.7 us, oversubscription: 2, nodes_per_leaf: 2}"));
  const ClusterSpec back =
      load_cluster(files_.write("written.yaml", text));  // a cluster file of its own
  EXPECT_EQ(back.inter_node.spine_latency_s, c.inter_node.spine_latency_s);
  EXPECT_EQ(back.inter_node.oversubscription, 2.0);
  EXPECT_EQ(back.inter_node.nodes_per_leaf, 2);
}

}  // namespace
