// The pool that runs simulations side by side from one thread: at most N at a time, every
// result back under its key (a put of b bytes over NVLink takes α + b/β, checked by closed
// form), a failing simulation reported as its error without stopping the others.
#include "sim/simulation_pool.hpp"

#include <gtest/gtest.h>

#include <map>

#include "sim/deadlock_report.hpp"
#include "sim_test_support.hpp"

namespace symmesh::sim {
namespace {

using namespace testing;

// A wait that no put satisfies: the simulator reports a deadlock.
Program deadlocked() {
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 64);
  p.wait_signal(1, p.stream(1, "comm"), h, 0, {"wait", OpCategory::comm, ""});
  return p;
}

TEST(SimulationPool, RunsAtMostNAtOnceAndReturnsEveryResultUnderItsKey) {
  const ClusterSpec c = test_cluster(1, 8);
  const Program small = one_put_program(1 << 20), large = one_put_program(64 << 20),
                bad = deadlocked();
  ForkedSimulationPool pool(2);
  std::map<size_t, double> makespans;
  std::map<size_t, bool> failed;
  const std::vector<const Program*> programs{&small, &large, &bad, &small};
  size_t next = 0;
  while (next < programs.size() || !pool.empty()) {
    while (next < programs.size() && !pool.full()) {
      pool.start(next, *programs[next], c, {});
      ++next;
      EXPECT_LE(pool.running(), 2u);
    }
    for (auto& f : pool.wait()) {
      failed[f.key] = static_cast<bool>(f.error);
      if (!f.error) makespans[f.key] = f.result.makespan_s;
    }
  }
  ASSERT_EQ(failed.size(), 4u);
  EXPECT_TRUE(failed[2]);
  EXPECT_NEAR(makespans[0], kIntraLatency + (1 << 20) / kIntraBandwidth, 1e-8);
  EXPECT_NEAR(makespans[1], kIntraLatency + (64 << 20) / kIntraBandwidth, 1e-7);
  EXPECT_EQ(makespans[3], makespans[0]);
}

TEST(SimulationPool, RunSimulationsKeepsTheOrderAndRethrowsTheError) {
  const ClusterSpec c = test_cluster(1, 8);
  const Program a = one_put_program(4 << 20), b = one_put_program(2 << 20), bad = deadlocked();
  const auto results = run_simulations({&a, &b, &a}, c, {}, 2);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_GT(results[0].makespan_s, results[1].makespan_s);
  EXPECT_EQ(results[2].makespan_s, results[0].makespan_s);
  EXPECT_THROW(run_simulations({&a, &bad}, c, {}, 2), DeadlockError);
}

}  // namespace
}  // namespace symmesh::sim
