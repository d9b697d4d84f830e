// The platform and network-model calibration: one uncontended put of b bytes over a route of
// latency α and bandwidth β takes α + b/β (within 0.5 %), flows sharing a link split it, and
// the rails of a rail-optimised network stay independent.
#include <gtest/gtest.h>

#include <cmath>

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

TEST(Calibration, CrossRailAndFatTreePutsTakeTheSameEndToEndTime) {
  const int64_t bytes = 256 << 20;
  const double expected = kInterLatency + bytes / kInterBandwidth;
  expect_within(single_put_time(test_cluster(2, 8, "rail"), 0, 13, bytes), expected, 0.005,
                "cross-rail");
  expect_within(single_put_time(test_cluster(2, 8, "fat-tree"), 0, 13, bytes), expected, 0.005,
                "fat-tree");
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
