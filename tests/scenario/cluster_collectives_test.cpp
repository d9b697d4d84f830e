// A cluster's collectives: section (core/collective_tuning.hpp): read in its units, refused
// at the figure with the field named, replaced per list by a file that overrides its base,
// and written back by the cluster writer so that the reader gets the same figures.
// Columns are counted by hand in the YAML below (1-based).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenario/cluster_writer.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_test_files.hpp"

using namespace symmesh;
using ::testing::HasSubstr;

namespace {

class ClusterCollectives : public symmesh::testing::ScenarioFileTest {};

// Lines 1-6; tests add the section from line 7.
const char* kHead = R"yaml(cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: {peak: {bf16: 989.4 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}
  intra_node: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}
  collectives:
)yaml";
const char* kTail = "mesh: [8]\nworkload: [{op: all_reduce, bytes: 1 MiB}]\n";

TEST_F(ClusterCollectives, VariantsAreReadInTheirUnits) {
  const Scenario s =
      load(std::string(kHead) +
           "    intra_node:\n"
           "      all_reduce:\n"
           "        - {algorithm: ring, protocol: LL, base_latency: 12 us, "
           "step_latency: 600 ns, bus_bandwidth: 40 GB/s}\n"
           "        - {algorithm: nvls, base_latency: 0.03 ms, bus_bandwidth: 480 GB/s}\n" +
           kTail);
  const auto& v = s.cluster.collectives.intra_node.of(BandwidthCollective::all_reduce);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].algorithm, LibraryAlgorithm::ring);
  EXPECT_EQ(v[0].protocol, "LL");
  EXPECT_DOUBLE_EQ(v[0].base_latency_s, 12e-6);
  EXPECT_DOUBLE_EQ(v[0].step_latency_s, 600e-9);
  EXPECT_DOUBLE_EQ(v[0].bus_bandwidth_bytes_per_s, 40e9);
  EXPECT_EQ(v[1].algorithm, LibraryAlgorithm::nvls);
  EXPECT_EQ(v[1].protocol, "Simple");  // the default protocol
  EXPECT_EQ(v[1].step_latency_s, 0);   // the default step latency
  EXPECT_DOUBLE_EQ(v[1].base_latency_s, 30e-6);
  EXPECT_TRUE(s.cluster.collectives.inter_node.empty());
}

TEST_F(ClusterCollectives, ABadBandwidthIsRefusedAtItsFigure) {
  const auto e =
      load_error(std::string(kHead) +
                 "    intra_node:\n"
                 "      all_gather:\n"
                 "        - {algorithm: ring, base_latency: 1 us, bus_bandwidth: 0 GB/s}\n" +
                 kTail);
  // Line 9: 8 spaces, "- {" at 9-11, "algorithm: ring, " 12-28, "base_latency: 1 us, " 29-48,
  // "bus_bandwidth: " 49-63: the figure starts at column 64.
  EXPECT_EQ(e.where(), at(9, 64));
  EXPECT_THAT(e.message(),
              HasSubstr("cluster.collectives.intra_node.all_gather[0].bus_bandwidth: must be > 0"));
}

TEST_F(ClusterCollectives, UnknownNamesAreRefusedWithTheChoices) {
  const auto algorithm = load_error(std::string(kHead) +
                                    "    intra_node:\n      all_reduce:\n"
                                    "        - {algorithm: collnet, base_latency: 1 us, "
                                    "bus_bandwidth: 1 GB/s}\n" +
                                    kTail);
  EXPECT_THAT(algorithm.message(), HasSubstr("collnet"));
  const auto op = load_error(std::string(kHead) + "    intra_node:\n      allreduce: []\n" + kTail);
  EXPECT_THAT(op.message(), HasSubstr("allreduce"));
  const auto across = load_error(std::string(kHead) +
                                 "    inter_node:\n      all_reduce:\n"
                                 "        - {algorithm: nvls, base_latency: 1 us, "
                                 "bus_bandwidth: 1 GB/s}\n" +
                                 kTail);
  EXPECT_THAT(across.message(), HasSubstr("NCCL has no nvls all_reduce across nodes"));
  const auto missing = load_error(std::string(kHead) +
                                  "    intra_node:\n      all_reduce:\n"
                                  "        - {algorithm: ring, base_latency: 1 us}\n" +
                                  kTail);
  EXPECT_THAT(missing.message(), HasSubstr("bus_bandwidth"));
}

TEST_F(ClusterCollectives, WriterWritesTheSectionAndTheReaderGetsItBack) {
  ClusterSpec c =
      load(std::string(kHead) +
           "    intra_node:\n      all_reduce:\n"
           "        - {algorithm: ring, protocol: LL128, base_latency: 12.5 us, "
           "step_latency: 0.6 us, bus_bandwidth: 340.6 GB/s}\n"
           "    inter_node:\n      all_to_all:\n"
           "        - {algorithm: pairwise, base_latency: 30 us, bus_bandwidth: 40 GB/s}\n" +
           kTail)
          .cluster;
  const std::string text = scenario::cluster_file_text(c);
  EXPECT_THAT(text, HasSubstr("collectives:\n  intra_node:\n    all_reduce:\n"
                              "      - {algorithm: ring, protocol: LL128, base_latency: 12.5 us, "
                              "step_latency: 0.6 us, bus_bandwidth: 340.6 GB/s}\n"));
  const ClusterSpec back = load_cluster(files_.write("written.yaml", text));
  const auto& a = c.collectives.intra_node.of(BandwidthCollective::all_reduce)[0];
  const auto& b = back.collectives.intra_node.of(BandwidthCollective::all_reduce)[0];
  EXPECT_EQ(b.protocol, a.protocol);
  EXPECT_EQ(b.base_latency_s, a.base_latency_s);
  EXPECT_EQ(b.step_latency_s, a.step_latency_s);
  EXPECT_EQ(b.bus_bandwidth_bytes_per_s, a.bus_bandwidth_bytes_per_s);
  ASSERT_EQ(back.collectives.inter_node.of(BandwidthCollective::all_to_all).size(), 1u);
  EXPECT_EQ(back.collectives.inter_node.of(BandwidthCollective::all_to_all)[0].algorithm,
            LibraryAlgorithm::pairwise);
}

TEST_F(ClusterCollectives, AnOverridingFileReplacesOnlyTheListsItGives) {
  files_.write(
      "base.yaml",
      "nodes: 1\ngpus_per_node: 8\n"
      "gpu: {peak: {bf16: 989.4 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}\n"
      "intra_node: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}\n"
      "collectives:\n  intra_node:\n"
      "    all_reduce: [{algorithm: ring, base_latency: 1 us, bus_bandwidth: 1 GB/s},\n"
      "                 {algorithm: nvls, base_latency: 2 us, bus_bandwidth: 2 GB/s}]\n"
      "    all_gather: [{algorithm: ring, base_latency: 3 us, bus_bandwidth: 3 GB/s}]\n");
  const ClusterSpec c = load_cluster(files_.write(
      "over.yaml",
      "base: base.yaml\ncollectives:\n  intra_node:\n"
      "    all_reduce: [{algorithm: ring, base_latency: 9 us, bus_bandwidth: 9 GB/s}]\n"));
  ASSERT_EQ(c.collectives.intra_node.of(BandwidthCollective::all_reduce).size(), 1u);
  EXPECT_DOUBLE_EQ(c.collectives.intra_node.of(BandwidthCollective::all_reduce)[0].base_latency_s,
                   9e-6);
  ASSERT_EQ(c.collectives.intra_node.of(BandwidthCollective::all_gather).size(), 1u);
  EXPECT_DOUBLE_EQ(c.collectives.intra_node.of(BandwidthCollective::all_gather)[0].base_latency_s,
                   3e-6);
}

}  // namespace
