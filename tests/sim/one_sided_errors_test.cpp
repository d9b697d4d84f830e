// Cases 15–18 of docs/one-sided.md and the other errors: argument errors the
// Program builder rejects (core/program.cpp), use after free at execution, and runs that can
// never finish — reported with who waits on whom, never hung, never a SimGrid abort.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/errors.hpp"
#include "sim/deadlock_report.hpp"
#include "sim/forked_run.hpp"
#include "sim_test_support.hpp"

namespace symmesh::sim {
namespace {

using namespace testing;

OpLabel label(const std::string& name) {
  return {name, OpCategory::comm, ""};
}

// Case 15: peer < 0 or >= group size.
TEST(OneSidedErrors, PeerOutOfRangeIsRejected) {
  Program p(4);
  const GroupId pair = p.add_group({1, 2});
  const SymmetricHandle h = p.symm_alloc(pair, 64);
  const BufferRef src = p.local_alloc(1, 64);
  const StreamId s = p.stream(1, "comm");
  EXPECT_THROW(p.put_signal(1, s, src, h, 0, -1, label("x")), InvalidArgument);
  EXPECT_THROW(p.put_signal(1, s, src, h, 0, 2, label("x")), InvalidArgument);  // group of 2
  EXPECT_THROW(p.wait_signal(1, s, h, 2, label("x")), InvalidArgument);
  EXPECT_THROW(p.wait_signal(1, s, h, -1, label("x")), InvalidArgument);
  try {
    p.put_signal(1, s, src, h, 0, 2, label("x"));
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("peer 2 out of range for a group of 2"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(p.streams(1)[s].ops.empty());  // nothing half-recorded
}

// Case 16: offset + bytes beyond the buffer.
TEST(OneSidedErrors, PutBeyondTheBufferIsRejected) {
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 100);
  const StreamId s = p.stream(0, "comm");
  EXPECT_THROW(p.put_signal(0, s, p.local_alloc(0, 64), h, 37, 1, label("x")), InvalidArgument);
  EXPECT_THROW(p.put_signal(0, s, p.local_alloc(0, 101), h, 0, 1, label("x")), InvalidArgument);
  EXPECT_THROW(p.put_signal(0, s, p.local_alloc(0, 1), h, -1, 1, label("x")), InvalidArgument);
  EXPECT_NO_THROW(p.put_signal(0, s, p.local_alloc(0, 64), h, 36, 1, label("fits")));
}

// Case 17: a handle of a group the caller is not in.
TEST(OneSidedErrors, HandleOfAnotherGroupIsRejected) {
  Program p(4);
  const SymmetricHandle h = p.symm_alloc(p.add_group({0, 1}), 64);
  EXPECT_THROW(p.wait_signal(2, p.stream(2, "comm"), h, 0, label("x")), InvalidArgument);
  EXPECT_THROW(p.put_signal(3, p.stream(3, "comm"), p.local_alloc(3, 8), h, 0, 0, label("x")),
               InvalidArgument);
}

TEST(OneSidedErrors, FreeOfAnUnknownHandleIsRejected) {
  Program p(2);
  const SymmetricHandle real = p.symm_alloc(p.world_group(), 64);
  SymmetricHandle forged = real;
  forged.id = 5;
  EXPECT_THROW(p.symm_free(forged, "comm"), InvalidArgument);
  EXPECT_TRUE(p.streams(0).empty() || p.streams(0)[0].ops.empty());  // nothing half-recorded
  EXPECT_NO_THROW(p.symm_free(real, "comm"));
}

// Case 17: use after free, which only execution can tell.
TEST(OneSidedErrors, PutFromAFreedBufferIsAUseAfterFree) {
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 64);
  p.symm_free(h, "comm");
  p.put_signal(0, p.stream(0, "comm"), p.local_alloc(0, 8), h, 0, 1, label("late put"));
  try {
    run_simulation(p, test_cluster(1, 8));
    FAIL() << "expected a use-after-free error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("use after free"), std::string::npos) << e.what();
    EXPECT_EQ(e.rank(), 0);
  }
}

TEST(OneSidedErrors, PutLandingOnAFreedCopyIsAUseAfterFree) {
  // Rank 1 frees at once; rank 0's put arrives afterwards.
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 64);
  p.put_signal(0, p.stream(0, "comm"), p.local_alloc(0, 64), h, 0, 1, label("put"));
  p.symm_free(h, "free");
  try {
    run_simulation(p, test_cluster(1, 8));
    FAIL() << "expected a use-after-free error";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("use after free: put_signal 'put' from rank 0 lands on rank 1's copy"),
              std::string::npos)
        << what;
  }
}

TEST(OneSidedErrors, WaitAfterFreeAndDoubleFreeAreErrors) {
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 64);
  p.symm_free(h, "comm");
  p.wait_signal(1, p.stream(1, "comm"), h, 0, label("late wait"));
  EXPECT_THROW(run_simulation(p, test_cluster(1, 8)), InvalidArgument);
  Program q(2);
  const SymmetricHandle g = q.symm_alloc(q.world_group(), 64);
  q.symm_free(g, "comm");
  q.symm_free(g, "comm");
  EXPECT_THROW(run_simulation(q, test_cluster(1, 8)), InvalidArgument);
}

// Case 18: a cycle — each rank waits for the other before putting.
TEST(OneSidedErrors, WaitCycleNamesEveryWaitingRankAndWhomItWaitsFor) {
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 64);
  for (int r : {0, 1}) {
    const StreamId s = p.stream(r, "comm");
    p.wait_signal(r, s, h, 1 - r, label("recv"));
    p.put_signal(r, s, p.local_alloc(r, 64), h, 0, 1 - r, label("send"));
  }
  try {
    run_simulation(p, test_cluster(1, 8));
    FAIL() << "expected a deadlock";
  } catch (const DeadlockError& e) {
    ASSERT_EQ(e.blocked().size(), 2u);
    for (int r : {0, 1}) {
      EXPECT_EQ(e.blocked()[r].rank, r);
      EXPECT_EQ(e.blocked()[r].waits_for, std::vector<int>{1 - r});
      EXPECT_EQ(e.blocked()[r].op_name, "recv");
    }
    const std::string what = e.what();
    EXPECT_NE(what.find("deadlock: 2 streams wait forever"), std::string::npos) << what;
    EXPECT_NE(what.find("rank 1 is itself blocked"), std::string::npos) << what;
  }
}

// A deadlock is caught as a Timeout too, and SimGrid prints nothing (no "Oops! Deadlock"
// listing, no backtrace): the child's stderr is captured to check.
TEST(OneSidedErrors, DeadlockIsATimeoutAndSimGridStaysQuiet) {
  Program p(3);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 64);
  p.wait_signal(2, p.stream(2, "comm"), h, 0, label("never"));
  char path[] = "/tmp/symmesh_sim_stderr_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::fflush(stderr);
  const int saved = dup(2);
  dup2(fd, 2);
  bool timed_out = false;
  try {
    run_simulation(p, test_cluster(1, 8));
  } catch (const Timeout&) {
    timed_out = true;
  }
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  std::stringstream captured;
  captured << std::ifstream(path).rdbuf();
  std::remove(path);
  EXPECT_TRUE(timed_out);
  // SimGrid's log lines start with "[<simulated time>]"; none may appear. (A sanitizer's
  // own notes about context switching are not SimGrid's and are ignored.)
  std::string line;
  while (std::getline(captured, line)) EXPECT_NE(line.rfind("[", 0), 0u) << line;
  EXPECT_EQ(captured.str().find("Oops"), std::string::npos);
}

TEST(OneSidedErrors, BarrierDeadlockNamesTheAbsentMembers) {
  // Rank 3 waits for a signal nobody sends before reaching the barrier.
  Program p(4);
  const GroupId world = p.world_group();
  const SymmetricHandle h = p.symm_alloc(world, 8);
  p.wait_signal(3, p.stream(3, "main"), h, 0, label("never"));
  p.barrier(world, "main", {"sync", OpCategory::sync, ""});
  try {
    run_simulation(p, test_cluster(1, 8));
    FAIL() << "expected a deadlock";
  } catch (const DeadlockError& e) {
    ASSERT_EQ(e.blocked().size(), 4u);
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(e.blocked()[r].op_kind, "barrier");
      EXPECT_EQ(e.blocked()[r].waits_for, std::vector<int>{3});
    }
    EXPECT_EQ(e.blocked()[3].op_kind, "wait_signal");
    EXPECT_NE(std::string(e.what()).find("for ranks 3 (3 of 4 arrived)"), std::string::npos)
        << e.what();
  }
}

TEST(OneSidedErrors, EventDeadlockNamesTheRecordingStream) {
  Program p(1);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 8);
  const StreamId compute = p.stream(0, "compute"), comm = p.stream(0, "comm");
  p.wait_signal(0, compute, h, 0, label("never"));
  const EventId ev = p.record_event(0, compute, {"done", OpCategory::sync, ""});
  p.wait_event(0, comm, ev, {"after compute", OpCategory::sync, ""});
  try {
    run_simulation(p, test_cluster(1, 8));
    FAIL() << "expected a deadlock";
  } catch (const DeadlockError& e) {
    ASSERT_EQ(e.blocked().size(), 2u);
    const std::string what = e.what();
    EXPECT_NE(what.find("waits for event 0, recorded by stream 'compute' of rank 0"),
              std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace symmesh::sim
