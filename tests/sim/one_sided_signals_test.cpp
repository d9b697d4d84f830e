// Signal counters as NCCL and PyTorch keep them (docs/one-sided.md, "Counting"): one per
// (group, sender → receiver, signal index), shared by every buffer of the group; the
// signal-only operation (ncclSignal) and the wait on a group (ncclWaitSignal).
#include <gtest/gtest.h>

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

bool has_warning(const RunResult& r, const std::string& words) {
  for (const std::string& w : r.warnings)
    if (w.find(words) != std::string::npos) return true;
  return false;
}

// A put into buffer A satisfies a wait named on buffer B of the same group, as on NCCL.
TEST(OneSidedSignals, APutIntoOneBufferSatisfiesAWaitOnAnotherOfTheGroup) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(2);
  const SymmetricHandle a = p.symm_alloc(p.world_group(), 64);
  const SymmetricHandle b = p.symm_alloc(p.world_group(), 64);
  p.put_signal(0, p.stream(0, "comm"), p.local_alloc(0, 64), a, 0, 1, label("put a"));
  p.wait_signal(1, p.stream(1, "comm"), b, 0, label("wait b"));
  const TracedRun r = traced(p, c);  // no deadlock: the one signal is (world, 0 → 1, 0)'s
  EXPECT_NEAR(entry(r, 1, "wait b").end_s, entry(r, 0, "put a").end_s, 1e-12);
  // ... and the simulator says what that crossing hides.
  EXPECT_TRUE(has_warning(r,
                          "1 wait_signal took a signal that came with a put into another "
                          "buffer of the same group"));
  EXPECT_TRUE(has_warning(
      r, "rank 1's wait_signal 'wait b' on symmetric buffer " + std::to_string(b.id) +
             " took the signal of a put from rank 0 into buffer " + std::to_string(a.id)));
}

// The race such a crossing hides: rank 0 puts 1 MiB into A, computes for a while (a
// 2048³ fp32 matmul, about 0.3 ms), then puts 64 bytes into B; rank 1 waits on B first,
// takes A's signal (delivered first, same route), and reads B before B's put lands: it
// reads zeros, not B's bytes. On per-buffer counters it would have read B's bytes.
TEST(OneSidedSignals, AWaitThatTakesAnotherBuffersSignalReadsBeforeItsDataLands) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(2);
  const SymmetricHandle a = p.symm_alloc(p.world_group(), 1 << 20);
  const SymmetricHandle b = p.symm_alloc(p.world_group(), 64);
  const StreamId s0 = p.stream(0, "comm"), s1 = p.stream(1, "comm");
  p.put_signal(0, s0, local_with(p, 0, pattern(1 << 20, 1)), a, 0, 1, label("put a"));
  MatmulWork slow;
  slow.m = slow.n = slow.k = 2048;
  slow.a = p.local_alloc(0, 4 << 22);
  slow.b = p.local_alloc(0, 4 << 22);
  slow.c = p.local_alloc(0, 4 << 22);
  p.matmul(0, s0, slow, {"slow", OpCategory::compute, ""});
  p.put_signal(0, s0, local_with(p, 0, pattern(64, 2)), b, 0, 1, label("put b"));
  p.wait_signal(1, s1, b, 0, label("wait b"));
  const BufferRef read = p.local_alloc(1, 64);
  CopyWork copy;
  copy.src = b.whole();
  copy.dst = read;
  copy.row_bytes = 64;
  p.copy(1, s1, copy, {"read b", OpCategory::compute, ""});
  p.wait_signal(1, s1, a, 0, label("wait a"));
  p.request_output("read", 1, read);
  p.request_output("b", 1, b.whole());
  const TracedRun r = traced(p, c, with_data());
  EXPECT_EQ(r.output("read", 1).bytes, std::vector<unsigned char>(64, 0));  // too early
  EXPECT_EQ(r.output("b", 1).bytes, pattern(64, 2));  // B's bytes did land, later
  EXPECT_LT(entry(r, 1, "read b").end_s, entry(r, 0, "put b").end_s);
  EXPECT_TRUE(has_warning(r, "2 wait_signals took a signal"));  // both waits crossed
}

// Different signal indices are different counters: a put on index 1 never satisfies a
// wait on index 0 of the same buffer.
TEST(OneSidedSignals, SignalIndicesAreSeparateCounters) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 64);
  p.put_signal(0, p.stream(0, "comm"), p.local_alloc(0, 64), h, 0, 1, label("put on 1"), 1);
  p.wait_signal(1, p.stream(1, "comm"), h, 0, label("wait on 0"));
  try {
    run_simulation(p, c);
    FAIL() << "a wait on signal 0 must not take signal 1";
  } catch (const DeadlockError& e) {
    ASSERT_EQ(e.blocked().size(), 1u);
    EXPECT_EQ(e.blocked()[0].op_name, "wait on 0");
    const std::string what = e.what();
    EXPECT_NE(what.find("0 delivered so far"), std::string::npos) << what;
  }
  // The same put, waited for on index 1, completes; so does the unconsumed-signal report
  // name the index when it is not 0.
  Program q(2);
  const SymmetricHandle g = q.symm_alloc(q.world_group(), 64);
  q.put_signal(0, q.stream(0, "comm"), q.local_alloc(0, 64), g, 0, 1, label("put on 1"), 1);
  q.put_signal(0, q.stream(0, "comm"), q.local_alloc(0, 64), g, 0, 1, label("again"), 1);
  q.wait_signal(1, q.stream(1, "comm"), g, 0, label("wait on 1"), 1);
  const TracedRun r = traced(q, c);
  EXPECT_TRUE(has_warning(r, "rank 1 left 1 of 2 signals from rank 0 on group " +
                                 std::to_string(q.world_group()) + " (signal 1) unconsumed"));
}

// Groups are separate: a put in group {0, 1} never satisfies a wait on the world group.
TEST(OneSidedSignals, GroupsAreSeparateCounters) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(3);
  const GroupId pair = p.add_group({0, 1});
  const SymmetricHandle small = p.symm_alloc(pair, 64);
  const SymmetricHandle world = p.symm_alloc(p.world_group(), 64);
  p.put_signal(0, p.stream(0, "comm"), p.local_alloc(0, 64), small, 0, 1, label("pair put"));
  p.wait_signal(1, p.stream(1, "comm"), world, 0, label("world wait"));
  EXPECT_THROW(run_simulation(p, c), DeadlockError);
}

// ncclSignal: a signal with no data pays the route's latency, and a wait on the group
// (ncclWaitSignal, no buffer named) takes it.
TEST(OneSidedSignals, ASignalAloneArrivesAfterTheLinkLatency) {
  const ClusterSpec c = test_cluster(2, 8);
  Program p(16);
  const GroupId world = p.world_group();
  p.signal(0, p.stream(0, "comm"), world, 9, {"ping", OpCategory::sync, ""});
  p.wait_signal(9, p.stream(9, "comm"), world, 0, {"pong", OpCategory::sync, ""});
  const TracedRun r = traced(p, c);
  // GPU 0 → GPU 1 of node 1 crosses rails: latency + the default 0.5 us spine_latency.
  EXPECT_NEAR(entry(r, 9, "pong").end_s, kInterLatency + 0.5e-6, kInterLatency * 0.005);
  EXPECT_TRUE(r.warnings.empty());
}

// A signal keeps its place in the route's order: once a signal sent after a put is seen,
// the put's bytes are there too — even on another signal index than the put's.
TEST(OneSidedSignals, ASignalAfterAPutImpliesThePutIsDelivered) {
  const ClusterSpec c = test_cluster(1, 8);
  const int64_t bytes = 4 << 20;
  Program p(2);
  const GroupId world = p.world_group();
  const SymmetricHandle h = p.symm_alloc(world, bytes);
  const StreamId s0 = p.stream(0, "comm"), s1 = p.stream(1, "comm");
  p.put_signal(0, s0, local_with(p, 0, pattern(bytes, 7)), h, 0, 1, label("payload"));
  p.signal(0, s0, world, 1, {"done", OpCategory::sync, ""}, 3);
  p.wait_signal(1, s1, world, 0, {"wait done", OpCategory::sync, ""}, 3);
  const BufferRef read = p.local_alloc(1, bytes);
  CopyWork copy;
  copy.src = h.whole();
  copy.dst = read;
  copy.row_bytes = bytes;
  p.copy(1, s1, copy, {"read", OpCategory::compute, ""});
  p.wait_signal(1, s1, h, 0, label("consume payload"));
  p.request_output("read", 1, read);
  const TracedRun r = traced(p, c, with_data());
  EXPECT_EQ(r.output("read", 1).bytes, pattern(bytes, 7));
  EXPECT_GE(entry(r, 1, "wait done").end_s, entry(r, 0, "payload").end_s - 1e-12);
  EXPECT_TRUE(r.warnings.empty());
}

// A signal to oneself (NCCL allows peer = me) and a self-put on the shared counter.
TEST(OneSidedSignals, SelfSignalAndSelfPutShareTheSelfCounter) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(2);
  const GroupId world = p.world_group();
  const SymmetricHandle h = p.symm_alloc(world, 64);
  const StreamId s = p.stream(1, "main");
  p.signal(1, s, world, 1, {"self signal", OpCategory::sync, ""});
  p.put_signal(1, s, local_with(p, 1, pattern(64, 5)), h, 0, 1, label("self put"));
  p.wait_signal(1, s, world, 1, {"take signal", OpCategory::sync, ""});
  p.wait_signal(1, s, h, 1, label("take put"));
  p.request_output("h", 1, h.whole());
  const TracedRun r = traced(p, c, with_data());
  EXPECT_EQ(r.output("h", 1).bytes, pattern(64, 5));
  EXPECT_TRUE(r.warnings.empty());
}

// Arguments the Program can check: the signal index, the group, membership, the peer.
TEST(OneSidedSignals, BadSignalArgumentsAreRefusedWhenBuilt) {
  Program p(3);
  const GroupId pair = p.add_group({0, 1});
  const SymmetricHandle h = p.symm_alloc(pair, 64);
  const StreamId s0 = p.stream(0, "comm"), s2 = p.stream(2, "comm");
  const auto refused = [](const std::function<void()>& f, const std::string& words) {
    try {
      f();
      ADD_FAILURE() << "accepted; expected: " << words;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  refused([&] { p.put_signal(0, s0, p.local_alloc(0, 8), h, 0, 1, label("x"), kSignalIndices); },
          "signal index 8 is outside [0, 8)");
  refused([&] { p.wait_signal(0, s0, h, 1, label("x"), -1); }, "signal index -1 is outside");
  refused([&] { p.signal(0, s0, pair, 2, label("x")); }, "peer 2 out of range for a group of 2");
  refused([&] { p.signal(2, s2, pair, 0, label("x")); }, "rank 2 is not a member of group");
  refused([&] { p.wait_signal(2, s2, pair, 0, label("x")); }, "rank 2 is not a member of group");
  refused([&] { p.signal(0, s0, 42, 0, label("x")); }, "unknown group 42");
}

}  // namespace
}  // namespace symmesh::sim
