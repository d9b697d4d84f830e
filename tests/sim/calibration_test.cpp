// The platform and network-model calibration: one uncontended put of b bytes over a route of
// latency α and bandwidth β takes α + b/β (within 0.5 %), flows sharing a link split it, the
// rails of a rail-optimised network stay independent, and flows between leaves pay the
// spine's latency and share the leaves' uplinks (sim/platform_builder.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "sim/forked_run.hpp"
#include "sim_test_support.hpp"

namespace symmesh::sim {
namespace {

using namespace testing;

// One put of `bytes` from rank `from` to rank `to`, alone in the program.
double single_put_time(const ClusterSpec& cluster, int from, int to, int64_t bytes) {
  Program p(cluster.num_gpus());
  const GroupId world = p.world_group();
  const SymmetricHandle h = p.symm_alloc(world, bytes);
  const BufferRef src = p.local_alloc(from, bytes);
  p.put_signal(from, p.stream(from, "comm"), src, h, 0, to, {"put", OpCategory::comm, ""});
  p.wait_signal(to, p.stream(to, "comm"), h, from, {"wait", OpCategory::comm, ""});
  const TracedRun r = traced(p, cluster);
  return duration(r, from, "put");
}

void expect_within(double measured, double expected, double rel, const std::string& what) {
  EXPECT_LE(std::abs(measured - expected), rel * expected)
      << what << ": measured " << measured << " s, expected " << expected << " s";
}

TEST(Calibration, IntraNodePutTakesLatencyPlusBytesOverBandwidth) {
  const ClusterSpec c = test_cluster(1, 8);
  for (int64_t bytes : {int64_t{0}, int64_t{1}, int64_t{4096}, int64_t{1} << 20, int64_t{64} << 20,
                        int64_t{1} << 30}) {
    const double expected = kIntraLatency + static_cast<double>(bytes) / kIntraBandwidth;
    expect_within(single_put_time(c, 0, 5, bytes), expected, 0.005,
                  "intra-node put of " + std::to_string(bytes) + " B");
  }
}

TEST(Calibration, InterNodePutOnRailNetworkTakesLatencyPlusBytesOverBandwidth) {
  const ClusterSpec c = test_cluster(2, 8, "rail");
  for (int64_t bytes : {int64_t{0}, int64_t{4096}, int64_t{16} << 20, int64_t{1} << 30}) {
    const double expected = kInterLatency + static_cast<double>(bytes) / kInterBandwidth;
    expect_within(single_put_time(c, 3, 11, bytes), expected, 0.005,
                  "inter-node put of " + std::to_string(bytes) + " B");
  }
}

TEST(Calibration, CrossRailPutCrossesTheSpineAndSameRailPutDoesNot) {
  // GPU 0 of node 0 → GPU 5 of node 1 leaves on rail 0 and enters on rail 5: up the leaf's
  // uplink and down another's, paying spine_latency (2 us here, to stand out) on top of
  // latency. GPU 0 → GPU 8 stays on rail 0's leaf. The uplinks carry 2 nodes × 50 GB/s, so
  // one flow still runs at the NIC's 50 GB/s.
  ClusterSpec c = test_cluster(2, 8, "rail");
  c.inter_node.spine_latency_s = 2e-6;
  for (int64_t bytes : {int64_t{0}, int64_t{4096}, int64_t{256} << 20}) {
    const double over_nic = static_cast<double>(bytes) / kInterBandwidth;
    expect_within(single_put_time(c, 0, 13, bytes), 3e-6 + 2e-6 + over_nic, 0.005,
                  "cross-rail put of " + std::to_string(bytes) + " B");
    expect_within(single_put_time(c, 0, 8, bytes), 3e-6 + over_nic, 0.005,
                  "same-rail put of " + std::to_string(bytes) + " B");
  }
  // With the default spine latency (0.5 us, docs/scenario-format.md) a zero-byte cross-rail
  // put takes 3.5 us.
  expect_within(single_put_time(test_cluster(2, 8, "rail"), 0, 13, 0), 3.5e-6, 0.005,
                "default spine latency");
}

TEST(Calibration, FatTreeUnderOneLeafHasNoSpineLatency) {
  // nodes_per_leaf absent: both nodes under one leaf, so any GPU pair pays latency only.
  const int64_t bytes = 256 << 20;
  expect_within(single_put_time(test_cluster(2, 8, "fat-tree"), 0, 13, bytes),
                kInterLatency + bytes / kInterBandwidth, 0.005, "fat-tree, one leaf");
}

// `senders` GPUs of node 0 each put `bytes` to the same GPU index on node 1, at once.
std::vector<double> puts_node0_to_node1(const ClusterSpec& c, const std::vector<int>& senders,
                                        int64_t bytes) {
  Program p(c.num_gpus());
  const SymmetricHandle h = p.symm_alloc(p.world_group(), bytes);
  for (int g : senders) {
    const BufferRef src = p.local_alloc(g, bytes);
    p.put_signal(g, p.stream(g, "comm"), src, h, 0, c.gpus_per_node + g,
                 {"put", OpCategory::comm, ""});
  }
  const TracedRun r = traced(p, c);
  std::vector<double> out;
  for (int g : senders) out.push_back(duration(r, g, "put"));
  return out;
}

TEST(Calibration, OversubscribedFatTreeSplitsTheLeafUplink) {
  // 2 nodes, one leaf each (nodes_per_leaf 1), 4 NICs of 50 GB/s per node, oversubscription
  // 2: each leaf's uplink carries 4 × 50 / 2 = 100 GB/s per direction, half its NICs' total.
  // GPUs 0, 2, 4, 6 use NICs 0-3 (one flow per NIC): 4 flows share the 100 GB/s uplink,
  // 25 GB/s each, so 256 MiB takes 3 us + 0.5 us + 268435456 / 25e9 = 10741.9 us.
  // GPUs 0 and 2 alone: 50 GB/s each fits (2 × 50 = 100), so 3.5 us + 268435456 / 50e9.
  ClusterSpec c = test_cluster(2, 8, "fat-tree");
  c.inter_node.nodes_per_leaf = 1;
  c.inter_node.oversubscription = 2;
  const int64_t bytes = 256 << 20;
  for (double t : puts_node0_to_node1(c, {0, 2, 4, 6}, bytes))
    expect_within(t, 3.5e-6 + bytes / 25e9, 0.01, "4 flows on a 100 GB/s uplink");
  for (double t : puts_node0_to_node1(c, {0, 2}, bytes))
    expect_within(t, 3.5e-6 + bytes / 50e9, 0.01, "2 flows on a 100 GB/s uplink");
  // Non-blocking (oversubscription 1): 200 GB/s, 4 flows at their NICs' 50 GB/s.
  c.inter_node.oversubscription = 1;
  for (double t : puts_node0_to_node1(c, {0, 2, 4, 6}, bytes))
    expect_within(t, 3.5e-6 + bytes / 50e9, 0.01, "non-blocking uplink");
}

TEST(Calibration, RailLeavesOfTwoNodesSendThirdNodeTrafficOverTheSpine) {
  // 4 nodes, nodes_per_leaf 2: rail 3 of nodes 0-1 is one leaf, of nodes 2-3 another.
  // GPU 3 → GPU 11 (node 1, same leaf): 3 us; GPU 3 → GPU 19 (node 2): + 0.5 us spine.
  ClusterSpec c = test_cluster(4, 8, "rail");
  c.inter_node.nodes_per_leaf = 2;
  expect_within(single_put_time(c, 3, 11, 0), 3e-6, 0.005, "same leaf");
  expect_within(single_put_time(c, 3, 19, 0), 3.5e-6, 0.005, "other leaf");
}

TEST(Calibration, TwoFlowsIntoOneGpuShareItsDownLink) {
  // Ranks 0 and 1 both put into rank 2: both flows cross gpu2's NVLink down link.
  const ClusterSpec c = test_cluster(1, 8);
  const int64_t bytes = 256 << 20;
  Program p(c.num_gpus());
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 2 * bytes);
  for (int from : {0, 1}) {
    const BufferRef src = p.local_alloc(from, bytes);
    p.put_signal(from, p.stream(from, "comm"), src, h, from * bytes, 2,
                 {"put", OpCategory::comm, ""});
  }
  const TracedRun r = traced(p, c);
  const double expected = kIntraLatency + 2.0 * bytes / kIntraBandwidth;
  for (int from : {0, 1}) expect_within(duration(r, from, "put"), expected, 0.01, "shared link");
}

TEST(Calibration, OppositeDirectionsDoNotShare) {
  // 0 → 1 and 1 → 0 at once: separate up and down links, so each takes the single-flow time.
  const ClusterSpec c = test_cluster(1, 8);
  const int64_t bytes = 256 << 20;
  Program p(c.num_gpus());
  const SymmetricHandle h = p.symm_alloc(p.world_group(), bytes);
  for (int from : {0, 1}) {
    const BufferRef src = p.local_alloc(from, bytes);
    p.put_signal(from, p.stream(from, "comm"), src, h, 0, 1 - from, {"put", OpCategory::comm, ""});
  }
  const TracedRun r = traced(p, c);
  const double expected = kIntraLatency + static_cast<double>(bytes) / kIntraBandwidth;
  for (int from : {0, 1}) expect_within(duration(r, from, "put"), expected, 0.005, "duplex");
}

TEST(Calibration, EightRailsStayIndependent) {
  // GPU g of node 0 → GPU g of node 1 for every g at once: eight NICs, eight rails, each
  // flow at full NIC bandwidth.
  const ClusterSpec c = test_cluster(2, 8, "rail");
  const int64_t bytes = 256 << 20;
  Program p(c.num_gpus());
  const SymmetricHandle h = p.symm_alloc(p.world_group(), bytes);
  for (int g = 0; g < 8; ++g) {
    const BufferRef src = p.local_alloc(g, bytes);
    p.put_signal(g, p.stream(g, "comm"), src, h, 0, 8 + g, {"put", OpCategory::comm, ""});
  }
  const TracedRun r = traced(p, c);
  const double expected = kInterLatency + static_cast<double>(bytes) / kInterBandwidth;
  for (int g = 0; g < 8; ++g) expect_within(duration(r, g, "put"), expected, 0.005, "rail");
}

TEST(Calibration, FatTreeGpusSharingANicSplitItsBandwidth) {
  // test_cluster's fat-tree nodes have 4 NICs for 8 GPUs: GPUs 0 and 1 share NIC 0.
  const ClusterSpec c = test_cluster(2, 8, "fat-tree");
  const int64_t bytes = 256 << 20;
  Program p(c.num_gpus());
  const SymmetricHandle h = p.symm_alloc(p.world_group(), bytes);
  for (int g : {0, 1}) {
    const BufferRef src = p.local_alloc(g, bytes);
    p.put_signal(g, p.stream(g, "comm"), src, h, 0, 8 + g, {"put", OpCategory::comm, ""});
  }
  const TracedRun r = traced(p, c);
  const double expected = kInterLatency + 2.0 * bytes / kInterBandwidth;
  for (int g : {0, 1}) expect_within(duration(r, g, "put"), expected, 0.01, "shared NIC");
}

}  // namespace
}  // namespace symmesh::sim
