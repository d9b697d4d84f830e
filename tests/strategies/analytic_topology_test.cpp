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

TEST(AnalyticTopology, SmallerMeshUsesTheFirstGpusAndLargerIsAnError) {
  const auto topo = AnalyticTopology::of(dgx_cluster(2), DeviceMesh({2, 4}));  // GPUs 0-7
  EXPECT_FALSE(topo.dims[0].spans_nodes);
  EXPECT_THROW(AnalyticTopology::of(dgx_cluster(1), DeviceMesh({16})), InvalidArgument);
}

}  // namespace
}  // namespace symmesh::strategies
