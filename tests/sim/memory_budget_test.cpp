// Without carried data the simulator keeps no per-byte state: a ring all-reduce of 1 GiB
// on 128 GPUs (symmetric buffers of 1 GiB each, 128 GiB in all) runs in well under 1 MiB of
// simulator memory per simulated rank, and its predicted time is the ring's analytic one.
#include <gtest/gtest.h>

#include "sim/compute_model.hpp"
#include "sim/forked_run.hpp"
#include "sim_test_support.hpp"
#include "tests/sanitizers.hpp"

namespace symmesh::sim {
namespace {

using namespace testing;

// Ring all-reduce (reduce-scatter, then all-gather) of `bytes` over every rank of `p`.
Program ring_allreduce(int ranks, int64_t bytes) {
  const int64_t chunk = bytes / ranks;
  Program p(ranks);
  const SymmetricHandle data = p.symm_alloc(p.world_group(), bytes);
  const SymmetricHandle recv = p.symm_alloc(p.world_group(), chunk * (ranks - 1));
  for (int r = 0; r < ranks; ++r) {
    const StreamId s = p.stream(r, "ring");
    const int next = (r + 1) % ranks, prev = (r + ranks - 1) % ranks;
    for (int step = 0; step < ranks - 1; ++step) {
      const int64_t send = ((r - step) % ranks + ranks) % ranks;
      const int64_t into = ((r - step - 1) % ranks + ranks) % ranks;
      p.put_signal(r, s, data.whole().slice(send * chunk, chunk), recv, step * chunk, next,
                   {"rs", OpCategory::comm, ""});
      p.wait_signal(r, s, recv, prev, {"rs wait", OpCategory::comm, ""});
      ReduceWork add;
      add.elements = chunk / 4;
      add.dst = data.whole().slice(into * chunk, chunk);
      add.src = recv.whole().slice(step * chunk, chunk);
      p.reduce(r, s, add, {"rs add", OpCategory::compute, ""});
    }
    for (int step = 0; step < ranks - 1; ++step) {
      const int64_t send = ((r + 1 - step) % ranks + ranks) % ranks;
      p.put_signal(r, s, data.whole().slice(send * chunk, chunk), data, send * chunk, next,
                   {"ag", OpCategory::comm, ""});
      p.wait_signal(r, s, data, prev, {"ag wait", OpCategory::comm, ""});
    }
  }
  return p;
}

TEST(MemoryBudget, RingAllReduceOn128GpusStaysUnderOneMiBPerRank) {
  const int ranks = 128;
  const int64_t bytes = int64_t{1} << 30;
  const ClusterSpec c = test_cluster(ranks / 8, 8, "rail");
  const RunResult r = run_simulation(ring_allreduce(ranks, bytes), c);
  EXPECT_TRUE(r.hazards.empty());
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.peak_memory_bytes[0], bytes + bytes / ranks * (ranks - 1));
  EXPECT_GT(r.backend_memory_bytes, 0);
  if (!symmesh::testing::kAddressSanitizer) {  // see tests/sanitizers.hpp
    EXPECT_LT(r.backend_memory_bytes / ranks, 1 << 20)
        << r.backend_memory_bytes / ranks << " bytes per rank";
  }
  // Every step of the ring waits for its slowest hop, the inter-node one: 2 (p − 1) steps of
  // (α + chunk / β) plus the p − 1 reductions.
  ReduceWork add;
  add.elements = bytes / ranks / 4;
  const double step = kInterLatency + static_cast<double>(bytes / ranks) / kInterBandwidth;
  const double expected = 2 * (ranks - 1) * step + (ranks - 1) * reduce_duration_s(c.gpu, add);
  EXPECT_NEAR(r.makespan_s, expected, expected * 0.01);
}

}  // namespace
}  // namespace symmesh::sim
