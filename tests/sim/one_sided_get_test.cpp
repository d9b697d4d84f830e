// get: a one-sided read of a peer's copy of a symmetric buffer (core/program.hpp), timed as
// a flow from the peer's GPU to the reader's that completes before the reader's stream goes
// on, and carrying the peer's bytes when the run carries data.
#include <gtest/gtest.h>

#include "sim/compute_model.hpp"
#include "sim/forked_run.hpp"
#include "sim_test_support.hpp"

namespace symmesh::sim {
namespace {

using namespace testing;

OpLabel label(const std::string& name) {
  return {name, OpCategory::comm, ""};
}

// Rank 1 reads 64 MiB of rank 0's copy over NVSwitch, then signals rank 0. By hand, on
// test_cluster's figures (intra_node latency 1 us, 450 GB/s per direction):
//   1 us + 67,108,864 B / 450e9 B/s = 1 us + 149.130809 us = 150.130809 us,
// and the signal after it starts only then.
TEST(OneSidedGet, IsAFlowFromThePeerThatEndsBeforeTheStreamGoesOn) {
  const ClusterSpec c = test_cluster(1, 8);
  const int64_t bytes = 64 << 20;
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), bytes);
  const StreamId s1 = p.stream(1, "comm");
  p.get(1, s1, p.local_alloc(1, bytes), h, 0, 0, label("read"));
  p.signal(1, s1, p.world_group(), 0, label("done"));
  p.wait_signal(0, p.stream(0, "comm"), p.world_group(), 1, label("wait done"));
  const TracedRun r = traced(p, c);
  const double expected = 1e-6 + 67108864.0 / 450e9;  // 150.130809 us
  EXPECT_NEAR(duration(r, 1, "read"), expected, 1e-12);
  EXPECT_NEAR(entry(r, 1, "read").start_s, 0.0, 1e-15);
  EXPECT_NEAR(entry(r, 1, "done").start_s, expected, 1e-12);
  EXPECT_EQ(entry(r, 1, "read").bytes, bytes);
  EXPECT_TRUE(r.hazards.empty());
  EXPECT_TRUE(r.warnings.empty());
}

// A get from myself is a local copy: 2 x bytes through HBM plus one launch.
TEST(OneSidedGet, FromMyselfIsALocalCopy) {
  const ClusterSpec c = test_cluster(1, 8);
  const int64_t bytes = 32 << 20;
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), bytes);
  p.get(0, p.stream(0, "comm"), p.local_alloc(0, bytes), h, 0, 0, label("self read"));
  const TracedRun r = traced(p, c);
  EXPECT_NEAR(duration(r, 0, "self read"), local_copy_duration_s(c.gpu, bytes), 1e-12);
}

// The bytes: rank 0 fills its copy at an offset, then signals; rank 1 waits and reads that
// range (offset honoured) into a local buffer.
TEST(OneSidedGet, CarriesThePeersBytesFromTheOffset) {
  const ClusterSpec c = test_cluster(1, 8);
  const int64_t n = 1000;  // not a multiple of 16
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 3 * n);
  const StreamId s0 = p.stream(0, "comm"), s1 = p.stream(1, "comm");
  const std::vector<unsigned char> want = pattern(n, 7);
  const BufferRef src = local_with(p, 0, want);
  p.copy(0, s0, CopyWork{h.whole().slice(n, n), src, 1, 1, n, 0, 0, 0, 0},
         {"fill", OpCategory::compute, ""});
  p.signal(0, s0, p.world_group(), 1, label("filled"));
  p.wait_signal(1, s1, p.world_group(), 0, label("wait filled"));
  const BufferRef out = p.local_alloc(1, n);
  p.get(1, s1, out, h, n, 0, label("read"));
  p.request_output("out", 1, out);
  const TracedRun r = traced(p, c, with_data());
  EXPECT_EQ(r.output("out", 1).bytes, want);
}

}  // namespace
}  // namespace symmesh::sim
