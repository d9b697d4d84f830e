// core/nccl_cost_model: NCCL's cost shape, the tuner's choice and the NIC rule, against
// times worked out by hand in each test's comment.
#include "core/nccl_cost_model.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "core/errors.hpp"

namespace symmesh {
namespace {

ClusterSpec tuned_cluster(int nodes = 1, int nics_per_node = 8, const std::string& kind = "rail") {
  ClusterSpec c;
  c.name = "tuned";
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.gpu.peak_flops_per_s = {{"bf16", 989.4e12}};
  c.gpu.memory_capacity_bytes = 80e9;
  c.gpu.memory_bandwidth_bytes_per_s = 3.35e12;
  c.intra_node = {"nvswitch", 450e9, 1e-6};
  c.inter_node.kind = kind;
  c.inter_node.nics_per_node = nics_per_node;
  c.inter_node.bandwidth_bytes_per_s = 50e9;
  c.inter_node.latency_s = 3e-6;
  auto& ar = c.collectives.intra_node.of(BandwidthCollective::all_reduce);
  ar = {{LibraryAlgorithm::ring, "LL", 10e-6, 0.5e-6, 50e9},
        {LibraryAlgorithm::ring, "Simple", 20e-6, 1e-6, 360e9},
        {LibraryAlgorithm::nvls, "Simple", 30e-6, 0, 480e9}};
  c.collectives.inter_node.of(BandwidthCollective::all_reduce) = {
      {LibraryAlgorithm::ring, "Simple", 50e-6, 0, 41.25e9}};
  return c;
}

std::vector<int> ranks(int from, int count, int stride = 1) {
  std::vector<int> out;
  for (int i = 0; i < count; ++i) out.push_back(from + i * stride);
  return out;
}

TEST(NcclCostModel, SmallAllReduceTakesTheLowLatencyProtocol) {
  const ClusterSpec c = tuned_cluster();
  const GroupGeometry g = geometry_of(c, ranks(0, 8), 8);
  // 8 KiB over 8 GPUs, busbw factor 2·7/8 = 1.75, ring steps 2·7 = 14:
  //   LL:     10 + 14·0.5 + 8192·1.75 / 50e9 s = 17 + 0.28672 = 17.28672 us
  //   Simple: 20 + 14·1   + 8192·1.75 / 360e9  = 34.0398 us
  //   NVLS:   30 + 0      + 8192·1.75 / 480e9  = 30.0299 us
  const LibraryEstimate e =
      estimate_library_collective(c, BandwidthCollective::all_reduce, g, 8192);
  EXPECT_EQ(e.name(), "ring/LL");
  EXPECT_NEAR(e.time_s, 17.28672e-6, 1e-12);
  EXPECT_FALSE(e.inter_node);
}

TEST(NcclCostModel, LargeAllReduceTakesNvlsAtItsBusBandwidth) {
  const ClusterSpec c = tuned_cluster();
  const GroupGeometry g = geometry_of(c, ranks(0, 8), 8);
  // 1 GiB: Simple ring 34 us + 1073741824·1.75 / 360e9 = 5253.578 us; NVLS 30 us +
  // 1879048192 / 480e9 = 3944.684 us (the least); LL's 37,580 us.
  const LibraryEstimate e =
      estimate_library_collective(c, BandwidthCollective::all_reduce, g, 1073741824.0);
  EXPECT_EQ(e.name(), "nvls/Simple");
  EXPECT_NEAR(e.time_s, 30e-6 + 1879048192.0 / 480e9, 1e-12);
  EXPECT_NEAR(e.bus_bandwidth_bytes_per_s, 480e9, 1);
}

TEST(NcclCostModel, ThirtyTwoRankAllReduceUsesEveryNicOfTheNode) {
  // Issue 15's yardstick: 4 DGX H100 x 8, all-reduce of 8 GiB over all 32 ranks measured
  // at 50.3 ms (busbw ~330 GB/s). One ring per NIC, 8 NICs: 8 × 41.25 = 330 GB/s bus
  // bandwidth; factor 2·31/32 = 1.9375: 50 us + 8589934592·1.9375 / 330e9 s = 50.4833 ms.
  const ClusterSpec c = tuned_cluster(4);
  const GroupGeometry g = geometry_of(c, ranks(0, 32), 32);
  EXPECT_EQ(g.nodes, 4);
  EXPECT_EQ(g.ranks_per_node, 8);
  EXPECT_EQ(g.groups_per_node, 1);
  const LibraryEstimate e =
      estimate_library_collective(c, BandwidthCollective::all_reduce, g, 8589934592.0);
  EXPECT_TRUE(e.inter_node);
  EXPECT_NEAR(e.bus_bandwidth_bytes_per_s, 330e9, 1);
  EXPECT_NEAR(e.time_s, 50e-6 + 8589934592.0 * 1.9375 / 330e9, 1e-9);
  EXPECT_NEAR(e.time_s, 50.3e-3, 0.01 * 50.3e-3);
}

TEST(NcclCostModel, DataParallelGroupsShareTheNodesNics) {
  // Mesh [4, 8] on 4 rail nodes: a dp group holds GPU g of every node, and the 8 groups
  // run at once: each uses its own NIC, min(1 × 8/8, 8 / 8) = 1 NIC → 41.25 GB/s.
  const ClusterSpec rail = tuned_cluster(4);
  const GroupGeometry g = geometry_of(rail, ranks(3, 4, 8), 32);
  EXPECT_EQ(g.ranks_per_node, 1);
  EXPECT_EQ(g.groups_per_node, 8);
  EXPECT_NEAR(estimate_library_collective(rail, BandwidthCollective::all_reduce, g, 1e9)
                  .bus_bandwidth_bytes_per_s,
              41.25e9, 1);
  // A fat-tree node with 2 NICs for 8 GPUs: min(1 × 2/8, 2 / 8) = a quarter of a NIC each.
  const ClusterSpec fat = tuned_cluster(4, 2, "fat-tree");
  EXPECT_NEAR(estimate_library_collective(fat, BandwidthCollective::all_reduce, g, 1e9)
                  .bus_bandwidth_bytes_per_s,
              41.25e9 / 4, 1);
}

TEST(NcclCostModel, ANicAloneOnItsNodeRunsUpToItsLineRate) {
  // 4 nodes, one GPU of each in one group and the nodes' other GPUs idle (an nccl-tests run
  // of 4 × 1 GPU): one NIC busy per node. The group's share of the node's budget is all
  // 8 NICs, 8 × 41.25 = 330 GB/s, but its one NIC carries at most its line rate, 50 GB/s:
  // min(330, 1 × 50) = 50 GB/s.
  const ClusterSpec c = tuned_cluster(4);
  GroupGeometry g;
  g.ranks = 4, g.nodes = 4, g.ranks_per_node = 1, g.groups_per_node = 1;
  EXPECT_EQ(group_nics(c, g), 1);
  EXPECT_EQ(group_nic_share(c, g), 8);
  EXPECT_NEAR(group_bus_bandwidth(c, g, 41.25e9), 50e9, 1);
  // Two GPUs per node: two NICs, min(330, 2 × 50) = 100 GB/s.
  GroupGeometry two = g;
  two.ranks = 8, two.ranks_per_node = 2;
  EXPECT_NEAR(group_bus_bandwidth(c, two, 41.25e9), 100e9, 1);
  // Where the budget binds first, it is the budget: a figure of 5 GB/s gives 8 × 5 = 40 GB/s.
  EXPECT_NEAR(group_bus_bandwidth(c, g, 5e9), 40e9, 1);
  // Without a NIC rate there is no ceiling.
  ClusterSpec no_rate = c;
  no_rate.inter_node.bandwidth_bytes_per_s = 0;
  EXPECT_NEAR(group_bus_bandwidth(no_rate, g, 41.25e9), 330e9, 1);
  // Groups that fill the node (the 8 dp groups of mesh [4, 8]) are where the budget binds:
  // share 8 / 8 = 1 NIC, min(41.25, 1 × 50) = 41.25 GB/s, as before the ceiling.
  EXPECT_NEAR(group_bus_bandwidth(c, geometry_of(c, ranks(3, 4, 8), 32), 41.25e9), 41.25e9, 1);
  // Inside one node the figure is the GPU's own.
  EXPECT_NEAR(group_bus_bandwidth(c, geometry_of(c, ranks(0, 8), 8), 360e9), 360e9, 1);
}

TEST(NcclCostModel, StepsPerAlgorithm) {
  GroupGeometry g;
  g.ranks = 32, g.nodes = 4, g.ranks_per_node = 8;
  EXPECT_EQ(algorithm_steps(LibraryAlgorithm::ring, BandwidthCollective::all_reduce, g), 62);
  EXPECT_EQ(algorithm_steps(LibraryAlgorithm::ring, BandwidthCollective::all_gather, g), 31);
  // Tree: 2 × (ceil(log2 4) + 8 - 1) = 18.
  EXPECT_EQ(algorithm_steps(LibraryAlgorithm::tree, BandwidthCollective::all_reduce, g), 18);
  g.nodes = 5;  // ceil(log2 5) = 3
  EXPECT_EQ(algorithm_steps(LibraryAlgorithm::tree, BandwidthCollective::all_reduce, g), 20);
  EXPECT_EQ(algorithm_steps(LibraryAlgorithm::nvls, BandwidthCollective::all_reduce, g), 0);
  EXPECT_EQ(algorithm_steps(LibraryAlgorithm::pairwise, BandwidthCollective::all_to_all, g), 31);
  EXPECT_EQ(algorithm_steps(LibraryAlgorithm::direct, BandwidthCollective::sendrecv, g), 1);
}

TEST(NcclCostModel, OneRankCostsNothing) {
  const ClusterSpec c = tuned_cluster();
  const LibraryEstimate e =
      estimate_library_collective(c, BandwidthCollective::all_reduce, geometry_of(c, {5}, 8), 1e9);
  EXPECT_EQ(e.time_s, 0);
  EXPECT_EQ(e.name(), "none");
}

TEST(NcclCostModel, AClusterThatDoesNotSayIsAnErrorNamingTheField) {
  ClusterSpec c = tuned_cluster();
  const GroupGeometry g = geometry_of(c, ranks(0, 8), 8);
  try {
    estimate_library_collective(c, BandwidthCollective::all_gather, g, 1e6);
    FAIL() << "no all_gather variants";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "cluster.collectives.intra_node.all_gather");
    EXPECT_NE(std::string(e.what()).find("lists no way to run all_gather inside a node"),
              std::string::npos)
        << e.what();
  }
  c.collectives = {};
  try {
    estimate_library_collective(c, BandwidthCollective::all_reduce, g, 1e6);
    FAIL() << "no section";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("has no collectives: section"), std::string::npos)
        << e.what();
  }
}

TEST(NcclCostModel, GeometryRejectsRanksOutsideTheCluster) {
  const ClusterSpec c = tuned_cluster();
  EXPECT_THROW(geometry_of(c, {0, 8}, 9), InvalidArgument);
  EXPECT_THROW(geometry_of(c, {}, 8), InvalidArgument);
}

TEST(CollectiveTuning, ValidateNamesTheVariantAndField) {
  ClusterSpec c = tuned_cluster();
  c.collectives.intra_node.of(BandwidthCollective::all_reduce)[1].bus_bandwidth_bytes_per_s = 0;
  try {
    c.validate();
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "cluster.collectives.intra_node.all_reduce[1].bus_bandwidth");
  }
  c = tuned_cluster();
  // NVLS reduces in the NVSwitch of one node: not across nodes here.
  c.collectives.inter_node.of(BandwidthCollective::all_reduce)[0].algorithm =
      LibraryAlgorithm::nvls;
  EXPECT_THROW(c.validate(), InvalidArgument);
  c = tuned_cluster();
  c.collectives.intra_node.of(BandwidthCollective::all_gather) = {
      {LibraryAlgorithm::tree, "Simple", 1e-6, 0, 1e9}};  // NCCL's tree is all-reduce only
  EXPECT_THROW(c.validate(), InvalidArgument);
  c = tuned_cluster();
  c.collectives.intra_node.of(BandwidthCollective::all_reduce)[0].protocol = "LL64";
  EXPECT_THROW(c.validate(), InvalidArgument);
}

}  // namespace
}  // namespace symmesh
