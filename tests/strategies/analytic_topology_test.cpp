// Per-mesh-dim alpha-beta figures: which dims stay in a node, which cross nodes, and how
// many flows share a NIC (strategies/analytic_topology.hpp), worked out by hand.
#include "strategies/analytic_topology.hpp"

#include <gtest/gtest.h>

#include "analytic_test_support.hpp"
#include "core/errors.hpp"

namespace symmesh::strategies {
namespace {

using testing::dgx_cluster;

TEST(AnalyticTopology, OneNodeIsNvSwitchEverywhere) {
  // Mesh [8] on one DGX: a ring step is 1 us + c / 450 GB/s; the all-to-all's 7 steps too.
  const auto topo = AnalyticTopology::of(dgx_cluster(1), DeviceMesh({8}));
  const MeshDimLinks& l = topo.dims[0];
  EXPECT_FALSE(l.spans_nodes);
  EXPECT_EQ(l.nic_sharing, 1);
  EXPECT_DOUBLE_EQ(l.ring_latency_s, 1e-6);
  EXPECT_DOUBLE_EQ(l.ring_s_per_byte, 1 / 450e9);
  EXPECT_DOUBLE_EQ(l.a2a_latency_s, 7e-6);
  EXPECT_DOUBLE_EQ(l.a2a_s_per_byte, 7 / 450e9);
  // 1 MiB all-gathered over 8: c = 131,072 B; 7 x (1 us + 0.291271 us) = 9.038898 us.
  EXPECT_NEAR(ring_all_gather_s(l, 131072), 7 * (1e-6 + 131072 / 450e9), 1e-15);
  EXPECT_NEAR(ring_all_reduce_s(l, 131072), 14 * (1e-6 + 131072 / 450e9), 1e-15);
}

TEST(AnalyticTopology, RailGivesEachGpuItsOwnNic) {
  // Mesh [4, 8] on 4 rail nodes: dp (dim 0) groups {g, 8+g, 16+g, 24+g} cross nodes; each
  // of a node's 8 GPUs sends through its own NIC: 3 us + c / 50 GB/s per step. tp stays in
  // the node.
  const auto topo = AnalyticTopology::of(dgx_cluster(4), DeviceMesh({4, 8}));
  EXPECT_TRUE(topo.dims[0].spans_nodes);
  EXPECT_EQ(topo.dims[0].nic_sharing, 1);
  EXPECT_DOUBLE_EQ(topo.dims[0].ring_latency_s, 3e-6);
  EXPECT_DOUBLE_EQ(topo.dims[0].ring_s_per_byte, 1 / 50e9);
  EXPECT_DOUBLE_EQ(topo.dims[0].a2a_s_per_byte, 3 / 50e9);
  EXPECT_FALSE(topo.dims[1].spans_nodes);
  EXPECT_DOUBLE_EQ(topo.dims[1].ring_s_per_byte, 1 / 450e9);
}

TEST(AnalyticTopology, FatTreeSharesTheNodesNics) {
  // 2 NICs per node: GPUs 0-3 use NIC 0, GPUs 4-7 NIC 1. Mesh [4, 8], dp: all 8 GPUs of a
  // node send to the next node at once, 4 through each NIC: c x 4 / 50 GB/s per step.
  const auto ft = dgx_cluster(4, "fat-tree", 2, 3.5e-6);
  const auto topo = AnalyticTopology::of(ft, DeviceMesh({4, 8}));
  EXPECT_EQ(topo.dims[0].nic_sharing, 4);
  EXPECT_DOUBLE_EQ(topo.dims[0].ring_latency_s, 3.5e-6);
  EXPECT_DOUBLE_EQ(topo.dims[0].ring_s_per_byte, 4 / 50e9);
  // Mesh [8, 4]: dim 0 groups {g, g+4, g+8, …, g+28} for g = 0..3 hold 2 GPUs per node; the
  // ring hops g+4 → g+8 leave the node: GPUs 4-7 send, all through NIC 1 (4 flows), and
  // GPUs 0-3 of the next node receive, all through NIC 0 (4 flows). NIC 0 sends nothing.
  const auto topo84 = AnalyticTopology::of(ft, DeviceMesh({8, 4}));
  EXPECT_TRUE(topo84.dims[0].spans_nodes);
  EXPECT_EQ(topo84.dims[0].nic_sharing, 4);
  EXPECT_DOUBLE_EQ(topo84.dims[0].ring_s_per_byte, 4 / 50e9);
  EXPECT_DOUBLE_EQ(topo84.dims[0].ring_latency_s, 3.5e-6);  // the slowest hop's
  EXPECT_FALSE(topo84.dims[1].spans_nodes);
}

TEST(AnalyticTopology, FatTreeWithANicPerGpuSharesNothing) {
  const auto topo = AnalyticTopology::of(dgx_cluster(4, "fat-tree", 8, 3.5e-6), DeviceMesh({4, 8}));
  EXPECT_EQ(topo.dims[0].nic_sharing, 1);
  EXPECT_DOUBLE_EQ(topo.dims[0].ring_s_per_byte, 1 / 50e9);
}

TEST(AnalyticTopology, CrossRailRingHopsPayTheSpineAndShareTheUplinks) {
  // Mesh [32] on 4 rail nodes (one leaf group): the ring hops 7→8, 15→16, 23→24, 31→0 leave
  // rail 7 and enter rail 0, so they cross the spine: 3 us + 0.5 us (default spine latency).
  // Rail 7's leaf has 4 NICs of 50 GB/s: uplink 200 GB/s for 4 flows, 50 GB/s each, no
  // narrower than a NIC.
  auto rail = dgx_cluster(4);
  const auto topo = AnalyticTopology::of(rail, DeviceMesh({32}));
  EXPECT_DOUBLE_EQ(topo.dims[0].ring_latency_s, 3.5e-6);
  EXPECT_DOUBLE_EQ(topo.dims[0].ring_s_per_byte, 1 / 50e9);
  // Oversubscription 2: the uplink carries 100 GB/s, 25 GB/s for each of the 4 flows.
  rail.inter_node.oversubscription = 2;
  EXPECT_DOUBLE_EQ(AnalyticTopology::of(rail, DeviceMesh({32})).dims[0].ring_s_per_byte, 1 / 25e9);
  // Mesh [4, 8]: dp hops are same-rail (GPU g to GPU g), under one leaf: no spine at all.
  const auto dp = AnalyticTopology::of(rail, DeviceMesh({4, 8}));
  EXPECT_DOUBLE_EQ(dp.dims[0].ring_latency_s, 3e-6);
  EXPECT_DOUBLE_EQ(dp.dims[0].ring_s_per_byte, 1 / 50e9);
}

TEST(AnalyticTopology, OversubscribedFatTreeDividesTheLeafUplink) {
  // 4 fat-tree nodes, 2 per leaf, 8 NICs of 50 GB/s each: a leaf's NICs total 800 GB/s.
  // Mesh [4, 8], dp groups {g, 8+g, 16+g, 24+g}: hops 1→2 and 3→0 go between leaves; all 8
  // GPUs of node 1 (and of node 3) send at once, 8 flows per uplink, plus 0.5 us spine.
  //   oversubscription 2: uplink 400 GB/s / 8 = 50 GB/s — as fast as a NIC;
  //   oversubscription 4: uplink 200 GB/s / 8 = 25 GB/s.
  auto ft = dgx_cluster(4, "fat-tree", 8, 3e-6);
  ft.inter_node.nodes_per_leaf = 2;
  ft.inter_node.oversubscription = 2;
  auto topo = AnalyticTopology::of(ft, DeviceMesh({4, 8}));
  EXPECT_DOUBLE_EQ(topo.dims[0].ring_latency_s, 3.5e-6);
  EXPECT_DOUBLE_EQ(topo.dims[0].ring_s_per_byte, 1 / 50e9);
  ft.inter_node.oversubscription = 4;
  topo = AnalyticTopology::of(ft, DeviceMesh({4, 8}));
  EXPECT_DOUBLE_EQ(topo.dims[0].ring_s_per_byte, 1 / 25e9);
  // All-to-all over dp: step 2 sends node n → n+2, always between leaves: 16 flows leave
  // each leaf (8 from each of its 2 nodes), 200 / 16 = 12.5 GB/s. Steps 1 and 3 cross with 8
  // flows a leaf (25 GB/s). Sum of s/B: 1/25 + 1/12.5 + 1/25 per GB/s.
  EXPECT_DOUBLE_EQ(topo.dims[0].a2a_s_per_byte, 1 / 25e9 + 1 / 12.5e9 + 1 / 25e9);
  EXPECT_DOUBLE_EQ(topo.dims[0].a2a_latency_s, 3 * 3.5e-6);
}

TEST(AnalyticTopology, SmallerMeshUsesTheFirstGpusAndLargerIsAnError) {
  const auto topo = AnalyticTopology::of(dgx_cluster(2), DeviceMesh({2, 4}));  // GPUs 0-7
  EXPECT_FALSE(topo.dims[0].spans_nodes);
  EXPECT_THROW(AnalyticTopology::of(dgx_cluster(1), DeviceMesh({16})), InvalidArgument);
}

}  // namespace
}  // namespace symmesh::strategies
