// Which leaf each NIC is on and which flows cross the spine (core/fabric_layout.hpp),
// against the leaves drawn by hand for small clusters.
#include "core/fabric_layout.hpp"

#include <gtest/gtest.h>

namespace symmesh {
namespace {

ClusterSpec cluster(int nodes, int gpus, const std::string& kind, int nics, int per_leaf) {
  ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = gpus;
  c.gpu.peak_flops_per_s = {{"bf16", 1e15}};
  c.gpu.memory_capacity_bytes = 1e9;
  c.gpu.memory_bandwidth_bytes_per_s = 1e12;
  c.intra_node = {"nvswitch", 450e9, 1e-6};
  c.inter_node = {kind, nics, 50e9, 3e-6};
  c.inter_node.nodes_per_leaf = per_leaf;
  return c;
}

TEST(FabricLayout, RailLeavesAreOnePerNicIndexPerGroup) {
  // 3 nodes of 4 GPUs, 2 nodes a leaf: groups {0, 1} and {2}; leaf = group × 4 + GPU index.
  const ClusterSpec c = cluster(3, 4, "rail", 4, 2);
  const FabricLayout f(c);
  EXPECT_EQ(f.leaf_count(), 8);
  EXPECT_EQ(f.leaf_of(1), 1);  // node 0, GPU 1
  EXPECT_EQ(f.leaf_of(5), 1);  // node 1, GPU 1: same rail, same group
  EXPECT_EQ(f.leaf_of(9), 5);  // node 2, GPU 1: group 1
  EXPECT_FALSE(f.crosses_spine(1, 5));
  EXPECT_TRUE(f.crosses_spine(1, 9));   // other group
  EXPECT_TRUE(f.crosses_spine(1, 6));   // other rail
  EXPECT_FALSE(f.crosses_spine(1, 2));  // same node: NVSwitch, no NIC at all
  // Group 0's leaves hold 2 NICs: 2 × 50 GB/s; group 1's (one node) 50 GB/s.
  EXPECT_DOUBLE_EQ(f.uplink_bytes_per_s(1), 100e9);
  EXPECT_DOUBLE_EQ(f.uplink_bytes_per_s(5), 50e9);
}

TEST(FabricLayout, FatTreeLeavesHoldEveryNicOfTheirNodes) {
  // 4 nodes of 8 GPUs with 4 NICs, 2 nodes a leaf, 2:1: leaf 0 = nodes 0-1, 8 NICs,
  // 8 × 50 / 2 = 200 GB/s up. GPUs 0 and 1 share NIC 0.
  ClusterSpec c = cluster(4, 8, "fat-tree", 4, 2);
  c.inter_node.oversubscription = 2;
  const FabricLayout f(c);
  EXPECT_EQ(f.leaf_count(), 2);
  EXPECT_EQ(f.nic_slot(1), 0);
  EXPECT_EQ(f.nic_slot(9), 4);           // node 1, NIC 0
  EXPECT_FALSE(f.crosses_spine(0, 13));  // node 0 → node 1, cross NIC index: same leaf
  EXPECT_TRUE(f.crosses_spine(0, 16));   // node 0 → node 2
  EXPECT_DOUBLE_EQ(f.uplink_bytes_per_s(0), 200e9);
}

TEST(FabricLayout, DefaultIsOneLeafGroup) {
  const FabricLayout rail(cluster(4, 8, "rail", 8, 0));
  EXPECT_EQ(rail.leaf_count(), 8);
  EXPECT_FALSE(rail.crosses_spine(3, 27));  // rail 3, nodes 0 and 3
  EXPECT_DOUBLE_EQ(rail.uplink_bytes_per_s(3), 200e9);
  const FabricLayout ft(cluster(4, 8, "fat-tree", 8, 0));
  EXPECT_EQ(ft.leaf_count(), 1);
  EXPECT_FALSE(ft.crosses_spine(3, 28));
}

}  // namespace
}  // namespace symmesh
