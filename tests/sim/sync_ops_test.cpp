// Events between streams of one rank, barriers over a group, frees and peak memory.
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "sim/compute_model.hpp"
#include "sim/forked_run.hpp"
#include "sim_test_support.hpp"

namespace symmesh::sim {
namespace {

using namespace testing;

MatmulWork square_matmul(Program& p, int rank, int64_t n) {
  MatmulWork w;
  w.m = w.n = w.k = n;
  w.a = p.local_alloc(rank, n * n * 4);
  w.b = p.local_alloc(rank, n * n * 4);
  w.c = p.local_alloc(rank, n * n * 4);
  return w;
}

TEST(SyncOps, WaitEventOrdersStreamsOfOneRank) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 1 << 20);
  const StreamId compute = p.stream(0, "compute"), comm = p.stream(0, "comm");
  p.matmul(0, compute, square_matmul(p, 0, 2048), {"mm", OpCategory::compute, ""});
  const EventId done = p.record_event(0, compute, {"mm done", OpCategory::sync, ""});
  p.wait_event(0, comm, done, {"wait mm", OpCategory::sync, ""});
  p.put_signal(0, comm, p.local_alloc(0, 1 << 20), h, 0, 1, {"send", OpCategory::comm, ""});
  const TracedRun r = traced(p, c);
  EXPECT_DOUBLE_EQ(entry(r, 0, "wait mm").start_s, 0.0);
  EXPECT_DOUBLE_EQ(entry(r, 0, "send").start_s, entry(r, 0, "mm").end_s);
  EXPECT_NEAR(entry(r, 0, "mm").end_s, matmul_duration_s(c.gpu, square_matmul(p, 0, 2048)), 1e-12);
}

TEST(SyncOps, StreamsOfOneGpuComputingAtOnceShareIt) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(1);
  const MatmulWork w = square_matmul(p, 0, 4096);
  p.matmul(0, p.stream(0, "a"), w, {"mm a", OpCategory::compute, ""});
  p.matmul(0, p.stream(0, "b"), w, {"mm b", OpCategory::compute, ""});
  const TracedRun r = traced(p, c);
  const double alone = matmul_duration_s(c.gpu, w);
  EXPECT_NEAR(duration(r, 0, "mm a"), 2 * alone, 2 * alone * 1e-6);
  EXPECT_NEAR(r.makespan_s, 2 * alone, 2 * alone * 1e-6);
}

TEST(SyncOps, BarrierReleasesEveryMemberWhenTheLastArrives) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(4);
  const GroupId world = p.world_group();
  for (int r = 0; r < 4; ++r)
    p.matmul(r, p.stream(r, "main"), square_matmul(p, r, 512 * (r + 1)),
             {"work", OpCategory::compute, ""});
  p.barrier(world, "main", {"sync", OpCategory::sync, ""});
  const TracedRun r = traced(p, c);
  const double last = entry(r, 3, "work").end_s;
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_DOUBLE_EQ(entry(r, rank, "sync").end_s, last);
    EXPECT_DOUBLE_EQ(entry(r, rank, "sync").start_s, entry(r, rank, "work").end_s);
  }
  EXPECT_DOUBLE_EQ(r.makespan_s, last);
}

TEST(SyncOps, SecondBarrierMeetsTheSecondBarrierOfEveryMember) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(2);
  const GroupId world = p.world_group();
  p.barrier(world, "main", {"b1", OpCategory::sync, ""});
  p.matmul(1, p.stream(1, "main"), square_matmul(p, 1, 1024), {"work", OpCategory::compute, ""});
  p.barrier(world, "main", {"b2", OpCategory::sync, ""});
  const TracedRun r = traced(p, c);
  EXPECT_DOUBLE_EQ(entry(r, 0, "b1").end_s, 0.0);
  EXPECT_DOUBLE_EQ(entry(r, 0, "b2").end_s, entry(r, 1, "work").end_s);
}

TEST(SyncOps, PeakMemoryCountsSymmetricAndLocalAllocations) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(3);
  const SymmetricHandle all = p.symm_alloc(p.world_group(), 1000);
  p.symm_alloc(p.add_group({1, 2}), 300);
  p.local_alloc(0, 500);
  p.local_alloc(2, 7);
  p.symm_free(all, "main");  // frees lower the live total, not the peak
  const TracedRun r = traced(p, c);
  EXPECT_EQ(r.peak_memory_bytes, (std::vector<int64_t>{1500, 1300, 1307}));
}

TEST(SyncOps, ProgramWiderThanTheClusterIsRejected) {
  Program p(9);
  p.stream(8, "main");
  EXPECT_THROW(run_simulation(p, test_cluster(1, 8)), InvalidArgument);
}

TEST(SyncOps, EmptyProgramTakesNoTime) {
  Program p(4);
  const TracedRun r = traced(p, test_cluster(1, 8));
  EXPECT_EQ(r.makespan_s, 0.0);
  EXPECT_TRUE(r.timeline.empty());
  EXPECT_EQ(r.peak_memory_bytes.size(), 4u);
}

}  // namespace
}  // namespace symmesh::sim
