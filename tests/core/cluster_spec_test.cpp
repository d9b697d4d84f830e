// ClusterSpec::validate (scenario-format.md `cluster:`): every error names the field it
// is about, a rail network has one NIC per GPU, and a single node ignores inter_node.
#include "core/cluster_spec.hpp"

#include <gtest/gtest.h>

#include "tests/thrown.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "core/errors.hpp"

namespace symmesh {
namespace {

using testing::thrown;

// The scenario-format.md example cluster: 4 DGX-H100 nodes on a rail network, in SI units.
ClusterSpec dgx_h100(int nodes = 4) {
  ClusterSpec c;
  c.name = "dgx-h100";
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.gpu.name = "H100-SXM";
  c.gpu.peak_flops_per_s = {
      {"bf16", 989.4e12}, {"fp16", 989.4e12}, {"fp32", 67e12}, {"fp8", 1978.9e12}};
  c.gpu.memory_capacity_bytes = 80.0 * (1ull << 30);  // 80 GiB
  c.gpu.memory_bandwidth_bytes_per_s = 3.35e12;       // 3.35 TB/s
  c.intra_node = {"nvswitch", 450e9, 1e-6};           // 450 GB/s, 1 us
  c.inter_node = {"rail", 8, 400e9 / 8, 3e-6};        // 400 Gb/s = 50 GB/s, 3 us
  return c;
}

std::string field_of_error(const ClusterSpec& c) {
  return thrown<InvalidArgument>([&] { c.validate(); }).where();
}

TEST(ClusterSpec, ReferenceClusterIsValid) {
  EXPECT_NO_THROW(dgx_h100().validate());
}

TEST(ClusterSpec, DerivedCounts) {
  const ClusterSpec c = dgx_h100(4);
  EXPECT_EQ(c.num_gpus(), 32);
  // Ranks are node-major: GPU g of node n is rank 8n + g.
  EXPECT_EQ(c.node_of(0), 0);
  EXPECT_EQ(c.node_of(7), 0);
  EXPECT_EQ(c.node_of(8), 1);
  EXPECT_EQ(c.node_of(31), 3);
}

TEST(ClusterSpec, DefaultsDescribeOneGpu) {
  const ClusterSpec c;
  EXPECT_EQ(c.nodes, 1);
  EXPECT_EQ(c.gpus_per_node, 1);
  EXPECT_EQ(c.num_gpus(), 1);
}

TEST(ClusterSpec, NodesMustBePositive) {
  ClusterSpec c = dgx_h100();
  c.nodes = 0;
  EXPECT_EQ(field_of_error(c), "cluster.nodes");
  c.nodes = -3;
  EXPECT_EQ(field_of_error(c), "cluster.nodes");
}

TEST(ClusterSpec, GpusPerNodeMustBePositive) {
  ClusterSpec c = dgx_h100();
  c.gpus_per_node = 0;
  EXPECT_EQ(field_of_error(c), "cluster.gpus_per_node");
}

TEST(ClusterSpec, ErrorTextStartsWithTheField) {
  ClusterSpec c = dgx_h100();
  c.nodes = 0;
  const auto e = thrown<InvalidArgument>([&] { c.validate(); });
  EXPECT_EQ(std::string(e.what()).rfind("cluster.nodes: ", 0), 0u) << e.what();
}

TEST(ClusterSpec, AbsurdGpuCountIsRejected) {
  ClusterSpec c = dgx_h100();
  c.inter_node.nics_per_node = 8;
  c.nodes = 1 << 22;  // 2^22 * 8 = 2^25 GPUs
  EXPECT_THROW(c.validate(), InvalidArgument);
}

TEST(ClusterSpec, PeakTableMustNotBeEmpty) {
  ClusterSpec c = dgx_h100();
  c.gpu.peak_flops_per_s.clear();
  EXPECT_EQ(field_of_error(c), "cluster.gpu.peak");
}

TEST(ClusterSpec, PeakRatesMustBePositive) {
  ClusterSpec c = dgx_h100();
  c.gpu.peak_flops_per_s["fp32"] = 0;
  EXPECT_EQ(field_of_error(c), "cluster.gpu.peak");
  const auto e = thrown<InvalidArgument>([&] { c.validate(); });
  EXPECT_NE(e.message().find("fp32"), std::string::npos) << e.message();
}

TEST(ClusterSpec, MemoryCapacityMustBePositive) {
  ClusterSpec c = dgx_h100();
  c.gpu.memory_capacity_bytes = 0;
  EXPECT_EQ(field_of_error(c), "cluster.gpu.memory.capacity");
}

TEST(ClusterSpec, MemoryBandwidthMustBePositive) {
  ClusterSpec c = dgx_h100();
  c.gpu.memory_bandwidth_bytes_per_s = -1;
  EXPECT_EQ(field_of_error(c), "cluster.gpu.memory.bandwidth");
}

TEST(ClusterSpec, NanRatesAreRejected) {
  ClusterSpec c = dgx_h100();
  c.gpu.memory_bandwidth_bytes_per_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(field_of_error(c), "cluster.gpu.memory.bandwidth");
  c = dgx_h100();
  c.intra_node.bandwidth_bytes_per_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(field_of_error(c), "cluster.intra_node.bandwidth");
  c = dgx_h100();
  c.intra_node.latency_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(field_of_error(c), "cluster.intra_node.latency");
}

TEST(ClusterSpec, IntraNodeKinds) {
  ClusterSpec c = dgx_h100();
  for (const char* kind : {"nvswitch", "nvlink", "pcie"}) {
    c.intra_node.kind = kind;
    EXPECT_NO_THROW(c.validate()) << kind;
  }
  c.intra_node.kind = "infiniband";
  EXPECT_EQ(field_of_error(c), "cluster.intra_node.kind");
}

TEST(ClusterSpec, IntraNodeBandwidthMustBePositive) {
  ClusterSpec c = dgx_h100();
  c.intra_node.bandwidth_bytes_per_s = 0;
  EXPECT_EQ(field_of_error(c), "cluster.intra_node.bandwidth");
}

TEST(ClusterSpec, IntraNodeLatencyMayBeZeroNotNegative) {
  ClusterSpec c = dgx_h100();
  c.intra_node.latency_s = 0;
  EXPECT_NO_THROW(c.validate());
  c.intra_node.latency_s = -1e-6;
  EXPECT_EQ(field_of_error(c), "cluster.intra_node.latency");
}

TEST(ClusterSpec, InterNodeKinds) {
  ClusterSpec c = dgx_h100();
  c.inter_node.kind = "fat-tree";
  EXPECT_NO_THROW(c.validate());
  c.inter_node.kind = "torus";
  EXPECT_EQ(field_of_error(c), "cluster.inter_node.kind");
}

TEST(ClusterSpec, InterNodeNeedsANic) {
  ClusterSpec c = dgx_h100();
  c.inter_node.kind = "fat-tree";
  c.inter_node.nics_per_node = 0;
  EXPECT_EQ(field_of_error(c), "cluster.inter_node.nics_per_node");
}

TEST(ClusterSpec, RailNeedsOneNicPerGpu) {
  ClusterSpec c = dgx_h100();
  c.inter_node.nics_per_node = 4;  // 8 GPUs per node
  const auto e = thrown<InvalidArgument>([&] { c.validate(); });
  EXPECT_EQ(e.where(), "cluster.inter_node.nics_per_node");
  EXPECT_NE(e.message().find("4"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("8"), std::string::npos) << e.message();
}

TEST(ClusterSpec, FatTreeMayHaveFewerNicsThanGpus) {
  ClusterSpec c = dgx_h100();
  c.inter_node.kind = "fat-tree";
  c.inter_node.nics_per_node = 4;
  EXPECT_NO_THROW(c.validate());
}

TEST(ClusterSpec, InterNodeBandwidthMustBePositive) {
  ClusterSpec c = dgx_h100();
  c.inter_node.bandwidth_bytes_per_s = 0;
  EXPECT_EQ(field_of_error(c), "cluster.inter_node.bandwidth");
}

TEST(ClusterSpec, InterNodeLatencyMustNotBeNegative) {
  ClusterSpec c = dgx_h100();
  c.inter_node.latency_s = -3e-6;
  EXPECT_EQ(field_of_error(c), "cluster.inter_node.latency");
  c.inter_node.latency_s = 0;
  EXPECT_NO_THROW(c.validate());
}

TEST(ClusterSpec, SingleNodeIgnoresInterNode) {
  ClusterSpec c = dgx_h100(1);
  c.inter_node = {"no-such-network", 0, 0, -1};
  EXPECT_NO_THROW(c.validate());
}

TEST(ClusterSpec, TwoNodesCheckInterNode) {
  ClusterSpec c = dgx_h100(2);
  c.inter_node = {"no-such-network", 0, 0, -1};
  EXPECT_EQ(field_of_error(c), "cluster.inter_node.kind");
}

TEST(ClusterSpec, SingleGpuNodesOnARail) {
  // One GPU per node: a rail network then needs exactly one NIC per node.
  ClusterSpec c = dgx_h100(4);
  c.gpus_per_node = 1;
  c.inter_node.nics_per_node = 1;
  EXPECT_NO_THROW(c.validate());
  EXPECT_EQ(c.num_gpus(), 4);
  EXPECT_EQ(c.node_of(3), 3);
}

}  // namespace
}  // namespace symmesh
