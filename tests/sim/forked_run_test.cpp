// Process isolation: every run_simulation gets a fresh engine in a forked child; errors
// cross back with their type and message; the wall-clock limit kills a runaway child.
#include "sim/forked_run.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/errors.hpp"
#include "sim/deadlock_report.hpp"
#include "sim_test_support.hpp"

namespace symmesh::sim {
namespace {

using namespace testing;

TEST(ForkedRun, EverySimulationStartsAtTimeZero) {
  const ClusterSpec c = test_cluster(1, 8);
  const Program p = one_put_program(64 << 20);
  const TracedRun first = traced(p, c);
  const TracedRun second = traced(p, c);
  EXPECT_DOUBLE_EQ(entry(first, 0, "put").start_s, 0.0);
  EXPECT_DOUBLE_EQ(entry(second, 0, "put").start_s, 0.0);  // not first.makespan_s
  EXPECT_DOUBLE_EQ(first.makespan_s, second.makespan_s);
  EXPECT_GT(first.makespan_s, 1e-4);
}

// Side by side from one thread, as forked_run.hpp requires: forking from several threads
// hangs a child that inherits a lock another thread held (GCC 12's AddressSanitizer
// allocator has no fork handler; CI saw exactly that hang from a two-thread version).
TEST(ForkedRun, SimulationsRunSideBySideFromOneThread) {
  const ClusterSpec c = test_cluster(1, 8);
  const Program small = one_put_program(1 << 20), large = one_put_program(256 << 20);
  SimulationProcess a(small, c, SimOptions{}), b(large, c, SimOptions{});
  while (!a.finished() || !b.finished()) {
    std::vector<SimulationProcess*> running;
    for (SimulationProcess* p : {&a, &b})
      if (!p->finished()) running.push_back(p);
    wait_for_any(running, -1);
  }
  // One put each: latency plus size over the intra-node link (test_cluster's constants).
  EXPECT_NEAR(a.result().makespan_s, kIntraLatency + (1 << 20) / kIntraBandwidth, 1e-8);
  EXPECT_NEAR(b.result().makespan_s, kIntraLatency + (256 << 20) / kIntraBandwidth, 1e-6);
}

TEST(ForkedRun, ErrorsKeepTheirTypeMessagePlaceAndRank) {
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 64);
  p.symm_free(h, "comm");
  p.put_signal(1, p.stream(1, "comm"), p.local_alloc(1, 8), h, 0, 0,
               {"late", OpCategory::comm, ""});
  try {
    run_simulation(p, test_cluster(1, 8));
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "simulation");
    EXPECT_EQ(e.rank(), 1);
    EXPECT_EQ(e.message(),
              "use after free: put_signal 'late' uses symmetric buffer 0, which rank 1 has "
              "already freed");
  }
  // A bad option is rejected in the parent, before any fork.
  SimOptions bad;
  bad.wall_clock_limit_s = -1;
  EXPECT_THROW(run_simulation(p, test_cluster(1, 8), bad), InvalidArgument);
  // A cluster the child cannot build from.
  ClusterSpec broken = test_cluster(1, 8);
  broken.intra_node.bandwidth_bytes_per_s = 0;
  try {
    run_simulation(one_put_program(8), broken);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "cluster.intra_node.bandwidth");
  }
}

TEST(ForkedRun, DeadlockCrossesWithItsBlockedStreams) {
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 8);
  p.wait_signal(0, p.stream(0, "comm"), h, 1, {"w", OpCategory::comm, ""});
  try {
    run_simulation(p, test_cluster(1, 8));
    FAIL() << "expected DeadlockError";
  } catch (const DeadlockError& e) {
    ASSERT_EQ(e.blocked().size(), 1u);
    EXPECT_EQ(e.blocked()[0].stream, "comm");
    EXPECT_EQ(e.blocked()[0].handle, h.id);
    EXPECT_EQ(e.where(), "simulation");
  }
}

// The children of this process, from /proc (empty when the kernel does not list them).
std::vector<pid_t> child_pids() {
  std::vector<pid_t> pids;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream children(task.path() / "children");
    pid_t pid = 0;
    while (children >> pid) pids.push_back(pid);
  }
  return pids;
}

Program slow_emulated_program() {
  // Emulating 2048³ fp32 matmuls takes seconds of CPU.
  Program p(1);
  MatmulWork w;
  w.m = w.n = w.k = 2048;
  w.a = p.local_alloc(0, 2048 * 2048 * 4);
  w.b = p.local_alloc(0, 2048 * 2048 * 4);
  w.c = p.local_alloc(0, 2048 * 2048 * 4);
  for (int i = 0; i < 8; ++i) p.matmul(0, p.stream(0, "main"), w, {"mm", OpCategory::compute, ""});
  return p;
}

TEST(ForkedRun, AChildThatDiesIsABackendError) {
  if (!std::filesystem::exists("/proc/self/task/" + std::to_string(getpid()) + "/children"))
    GTEST_SKIP() << "this kernel does not list children in /proc";
  const Program p = slow_emulated_program();
  std::atomic<bool> done{false};
  // Plays the crash with SIGKILL, which no runtime (a sanitizer's SIGSEGV handler, say)
  // can turn into an ordinary exit.
  std::thread crasher([&] {
    while (!done) {
      const auto pids = child_pids();
      if (!pids.empty()) {
        kill(pids.front(), SIGKILL);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  try {
    run_simulation(p, test_cluster(1, 8), with_data());
    done = true;
    crasher.join();
    FAIL() << "expected BackendError";
  } catch (const BackendError& e) {
    done = true;
    crasher.join();
    EXPECT_NE(std::string(e.what()).find("the simulation process died from signal 9"),
              std::string::npos)
        << e.what();
  }
}

TEST(ForkedRun, WallClockLimitKillsTheChild) {
  const Program p = slow_emulated_program();  // far longer than 50 ms
  SimOptions o = with_data();
  o.wall_clock_limit_s = 0.05;
  const auto start = std::chrono::steady_clock::now();
  try {
    run_simulation(p, test_cluster(1, 8), o);
    FAIL() << "expected Timeout";
  } catch (const Timeout& e) {
    EXPECT_EQ(e.message(), "simulation exceeded its wall-clock limit of 0.05 s");
  }
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(waited, 2.0);
}

}  // namespace
}  // namespace symmesh::sim
