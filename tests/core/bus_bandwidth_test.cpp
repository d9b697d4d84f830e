// nccl-tests' algorithm and bus bandwidth (core/bus_bandwidth.hpp). The expectations come
// from NVIDIA/nccl-tests doc/PERFORMANCE.md and from lines all_reduce_perf,
// all_gather_perf and sendrecv_perf printed on real machines (public issue threads and
// write-ups), recomputed by hand below; none of them is symmesh's own output.
#include "core/bus_bandwidth.hpp"

#include <gtest/gtest.h>

namespace symmesh {
namespace {

// doc/PERFORMANCE.md, "Summary": AllReduce 2(n-1)/n, ReduceScatter (n-1)/n, AllGather
// (n-1)/n, Broadcast 1, Reduce 1, AlltoAll (n-1)/n. For n = 8: 14/8 = 1.75 and 7/8.
TEST(BusBandwidth, FactorsAreTheDocumentsSummary) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(BandwidthCollective::all_reduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(BandwidthCollective::reduce_scatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(BandwidthCollective::all_gather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(BandwidthCollective::all_to_all, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(BandwidthCollective::broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(BandwidthCollective::reduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(BandwidthCollective::sendrecv, 2), 1.0);
  // Two ranks: an all-reduce's 2(2-1)/2 = 1, a gather's 1/2. One rank moves nothing.
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(BandwidthCollective::all_reduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(BandwidthCollective::all_gather, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(BandwidthCollective::all_reduce, 1), 0.0);
}

// The document's derivation for all-reduce: with n links of bandwidth B the best time is
// t = (S/B)·2(n-1)/n, and busbw = algbw·2(n-1)/n recovers B. Worked by hand: n = 8,
// B = 400e9 B/s, S = 1 GiB = 1,073,741,824 B: t = 1,073,741,824 / 400e9 × 1.75 =
// 4.697620480 ms; algbw = S/t = 228.571 GB/s; busbw = 228.571 × 1.75 = 400 GB/s = B.
TEST(BusBandwidth, BusBandwidthOfAnIdealAllReduceIsTheLinkBandwidth) {
  const double t_s = 1073741824.0 / 400e9 * 1.75;
  const auto bw = collective_bandwidth(BandwidthCollective::all_reduce, 1073741824, 8, t_s);
  ASSERT_TRUE(bw);
  EXPECT_NEAR(bw->algbw_bytes_per_s, 228.5714e9, 0.001e9);
  EXPECT_NEAR(bw->busbw_bytes_per_s, 400e9, 1);
}

// Lines nccl-tests printed (size B, time us, algbw GB/s, busbw GB/s, two decimals), from
// public threads; n is read from their count column (count = size / 4 / n for a float
// all-gather, whose count is per rank; an all-reduce's count is the whole buffer's):
// (time's last printed digit given, for the tolerance)
//   all_reduce_perf, 2 nodes x 4 GPUs (n = 8):
//     1048576  262144  float  sum   -1  105.9   9.90  17.33
//     1048576 / 105.9e-6 = 9.9016e9; × 2·7/8 = 17.328e9
//   all_gather_perf (count 131072 = 8388608 / 4 / 16: n = 16):
//     8388608  131072  float  none  -1  784.9  10.69  10.02
//     8388608 / 784.9e-6 = 10.6875e9; × 15/16 = 10.0195e9
//   all_gather_perf (count 65536 = 1048576 / 4 / 4: n = 4):
//     1048576  65536   float  none  -1  52.94  19.81  14.85
//     1048576 / 52.94e-6 = 19.8069e9; × 3/4 = 14.8552e9
//   sendrecv_perf, 8 GPUs: 134217728 ... 1211.2  110.81  110.81
//     134217728 / 1211.2e-6 = 110.814e9; × 1
TEST(BusBandwidth, ReproducesPrintedNcclTestsLines) {
  struct Line {
    BandwidthCollective op;
    int64_t bytes;
    int ranks;
    double time_us, time_digit_us, algbw_gbps, busbw_gbps;
  };
  for (const Line& l :
       {Line{BandwidthCollective::all_reduce, 1048576, 8, 105.9, 0.1, 9.90, 17.33},
        Line{BandwidthCollective::all_gather, 8388608, 16, 784.9, 0.1, 10.69, 10.02},
        Line{BandwidthCollective::all_gather, 1048576, 4, 52.94, 0.01, 19.81, 14.85},
        Line{BandwidthCollective::sendrecv, 134217728, 8, 1211.2, 0.1, 110.81, 110.81}}) {
    const auto bw = collective_bandwidth(l.op, l.bytes, l.ranks, l.time_us * 1e-6);
    ASSERT_TRUE(bw);
    // nccl-tests divides by the unrounded time and prints two decimals: within half a unit
    // of the bandwidth's last digit plus what half a unit of the time's last digit moves it
    // (52.94 us ± 0.005 us moves 14.855 GB/s by ± 0.0014 GB/s).
    const double time_share = 0.5 * l.time_digit_us / l.time_us;
    EXPECT_NEAR(bw->algbw_bytes_per_s * 1e-9, l.algbw_gbps, 0.005 + l.algbw_gbps * time_share)
        << l.bytes;
    EXPECT_NEAR(bw->busbw_bytes_per_s * 1e-9, l.busbw_gbps, 0.005 + l.busbw_gbps * time_share)
        << l.bytes;
  }
}

TEST(BusBandwidth, NoFigureWithoutATime) {
  EXPECT_FALSE(collective_bandwidth(BandwidthCollective::all_reduce, 1024, 8, 0));
  EXPECT_FALSE(collective_bandwidth(BandwidthCollective::all_reduce, 1024, 8, -1));
}

TEST(BusBandwidth, NamesTheCollectivesAndNothingElse) {
  EXPECT_EQ(bandwidth_collective("all_reduce"), BandwidthCollective::all_reduce);
  EXPECT_EQ(bandwidth_collective("alltoall"), BandwidthCollective::all_to_all);
  EXPECT_EQ(bandwidth_collective("all_to_all"), BandwidthCollective::all_to_all);
  EXPECT_FALSE(bandwidth_collective("mm"));
  EXPECT_FALSE(bandwidth_collective("put_signal"));
  EXPECT_FALSE(bandwidth_collective(CollectiveOp::allgather_matmul));
  EXPECT_EQ(bandwidth_collective(CollectiveOp::reduce_scatter),
            BandwidthCollective::reduce_scatter);
}

}  // namespace
}  // namespace symmesh
