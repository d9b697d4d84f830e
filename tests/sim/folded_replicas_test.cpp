// A Program that folds identical replicas (core/replica_folding.hpp) simulates as the whole
// one does: the reference is the same ops written for every rank and simulated unfolded.
#include <gtest/gtest.h>

#include <string>

#include "core/collectives.hpp"
#include "core/errors.hpp"
#include "sim/forked_run.hpp"
#include "sim_test_support.hpp"
#include "tests/thrown.hpp"

namespace symmesh::sim {
namespace {

using namespace testing;
using symmesh::testing::thrown;

constexpr int kReplicas = 4;  // dp
constexpr int kTensor = 2;    // tp: world rank = dp · 2 + t, one node per replica

// The dp group of tensor rank t: its copies in every replica, in replica order.
GroupId dp_group(Program& p, int t) {
  std::vector<int> ranks;
  for (int d = 0; d < kReplicas; ++d) ranks.push_back(d * kTensor + t);
  return p.add_group(ranks);
}

MatmulWork gemm(Program& p, int rank, int64_t size) {
  MatmulWork w;
  w.m = w.n = w.k = size;
  w.dtype = DType::bf16;
  const int64_t bytes = size * size * 2;
  w.a = p.local_alloc(rank, bytes);
  w.b = p.local_alloc(rank, bytes);
  w.c = p.local_alloc(rank, bytes);
  return w;
}

// One step of a [dp 4, tp 2] mesh, the same on every replica: tensor rank t computes a
// GEMM (rank 1's twice as large, so the tensor ranks are not in step), all-reduces 64 MiB
// over its dp group, exchanges 8 MiB all-to-all over it, sends 1 MiB to the other tensor
// rank of its replica, and the world meets at a barrier.
Program dp_tp_step(bool fold) {
  Program p(kReplicas * kTensor);
  if (fold) p.fold_replicas({kReplicas, kTensor});
  const SymmetricHandle pair_buffer = p.symm_alloc(p.world_group(), 1 << 20);
  for (int rank = 0; rank < p.world_size(); ++rank)
    p.matmul(rank, p.stream(rank, "comm"), gemm(p, rank, rank % kTensor ? 4096 : 2048),
             {"gemm", OpCategory::compute, ""});
  for (int t = 0; t < kTensor; ++t) {
    CollectiveSpec reduce;
    reduce.group = dp_group(p, t);
    reduce.bytes = 64 << 20;
    reduce.dtype = DType::bf16;
    reduce.name = "grads";
    ring_all_reduce(p, reduce);
    CollectiveSpec exchange = reduce;
    exchange.bytes = 8 << 20;
    exchange.name = "exchange";
    pairwise_all_to_all(p, exchange);
  }
  for (int d = 0; d < kReplicas; ++d) {
    const int from = d * kTensor, to = from + 1;
    p.put_signal(from, p.stream(from, "comm"), p.local_alloc(from, 1 << 20), pair_buffer, 0, to,
                 {"handoff", OpCategory::comm, ""});
    p.wait_signal(to, p.stream(to, "comm"), pair_buffer, from, {"handoff", OpCategory::comm, ""});
  }
  p.barrier(p.world_group(), "comm", {"end", OpCategory::sync, ""});
  return p;
}

TEST(FoldedReplicas, AFoldedStepTakesTheWholeStepsTimeWithAQuarterOfItsOps) {
  const ClusterSpec cluster = test_cluster(kReplicas, kTensor);
  const Program whole = dp_tp_step(false);
  const Program folded = dp_tp_step(true);
  EXPECT_EQ(folded.counts().stream_ops * kReplicas, whole.counts().stream_ops);
  for (int rank = kTensor; rank < folded.world_size(); ++rank)
    for (const Stream& s : folded.streams(rank)) EXPECT_TRUE(s.ops.empty()) << rank;

  const TracedRun w = traced(whole, cluster);
  const TracedRun f = traced(folded, cluster);
  ASSERT_TRUE(w.warnings.empty()) << w.warnings.front();
  EXPECT_TRUE(f.warnings.empty()) << f.warnings.front();  // every signal consumed
  EXPECT_NEAR(f.makespan_s, w.makespan_s, 1e-9 * w.makespan_s);
  // Op by op on the represented ranks, not only the end.
  for (int rank = 0; rank < kTensor; ++rank)
    for (const char* name : {"gemm", "grads", "exchange", "handoff"})
      EXPECT_NEAR(entry(f, rank, name).end_s, entry(w, rank, name).end_s, 1e-12)
          << rank << " " << name;
}

// The folded all-reduce against its closed form, not only the whole run: over p = 4 nodes
// a ring all-reduce of B bytes takes 2(p-1)(α + B/p/β) with β the NIC's 50 GB/s (one NIC
// per GPU on rails); for 256 MiB, 2·3·(1.34 ms + a few µs) = 8.06 ms.
TEST(FoldedReplicas, AFoldedRingAllReduceFollowsTheRingClosedForm) {
  const ClusterSpec cluster = test_cluster(kReplicas, 1);
  Program p(kReplicas);
  p.fold_replicas({kReplicas, 1});
  CollectiveSpec reduce;
  reduce.group = p.world_group();
  reduce.bytes = int64_t{256} << 20;
  reduce.name = "grads";
  ring_all_reduce(p, reduce);
  const double ring = 2 * (kReplicas - 1) * (reduce.bytes / double{kReplicas} / kInterBandwidth);
  const RunResult r = run_simulation(p, cluster, {});
  EXPECT_NEAR(r.makespan_s, ring, 0.01 * ring);
  EXPECT_GT(r.makespan_s, ring);  // plus the latencies
}

// A group that the translation does not map onto itself cannot be read off replica 0:
// ranks 0 and 2 (replicas 0 and 1 of 4) exchanging; rank 0's wait on rank 2 would be
// rank 0's put to rank 6, which is not in the group.
TEST(FoldedReplicas, AGroupNotClosedUnderTheTranslationIsRefused) {
  const ClusterSpec cluster = test_cluster(kReplicas, kTensor);
  Program p(kReplicas * kTensor);
  p.fold_replicas({kReplicas, kTensor});
  CollectiveSpec reduce;
  reduce.group = p.add_group({0, 2});
  reduce.bytes = 1 << 20;
  ring_all_reduce(p, reduce);
  const std::string message =
      thrown<InvalidArgument>([&] { run_simulation(p, cluster, {}); }).message();
  EXPECT_NE(message.find("rank 0 waits on folded rank 2 of a group that does not hold its copy "
                         "in replica 0 (rank 0 → 6)"),
            std::string::npos)
      << message;
}

TEST(FoldedReplicas, AFoldedProgramCarriesNoData) {
  SimOptions carry;
  carry.carry_data = true;
  const Program p = dp_tp_step(true);
  const ClusterSpec cluster = test_cluster(kReplicas, kTensor);
  EXPECT_NE(thrown<InvalidArgument>([&] { run_simulation(p, cluster, carry); })
                .message()
                .find("carries no data"),
            std::string::npos);
}

TEST(FoldedReplicas, ReplicasAreFoldedBeforeAnyOpAndTileTheWorld) {
  Program p(8);
  EXPECT_THROW(p.fold_replicas({3, 2}), InvalidArgument);  // 6 does not divide 8
  p.matmul(0, p.stream(0, "s"), gemm(p, 0, 64), {"gemm", OpCategory::compute, ""});
  EXPECT_THROW(p.fold_replicas({4, 2}), InvalidArgument);
}

}  // namespace
}  // namespace symmesh::sim
