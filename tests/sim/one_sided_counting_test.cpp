// Cases 6–14 of docs/one-sided.md: counting, hazards and special cases.
#include <gtest/gtest.h>

#include "sim/compute_model.hpp"
#include "sim/deadlock_report.hpp"
#include "sim/forked_run.hpp"
#include "sim_test_support.hpp"

namespace symmesh::sim {
namespace {

using namespace testing;

OpLabel label(const std::string& name) {
  return {name, OpCategory::comm, ""};
}

// Case 6: three puts, three waits succeed; a fourth wait is reported, not hung.
TEST(OneSidedCounting, AFourthWaitAfterThreePutsIsReportedNotHung) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 3 * 64);
  const StreamId s0 = p.stream(0, "comm"), s1 = p.stream(1, "comm");
  for (int i = 0; i < 3; ++i) {
    p.put_signal(0, s0, p.local_alloc(0, 64), h, i * 64, 1, label("put"));
    p.wait_signal(1, s1, h, 0, label("wait" + std::to_string(i + 1)));
  }
  Program ok = p;  // three and three: completes
  const TracedRun r = traced(ok, c);
  EXPECT_GT(r.makespan_s, 0.0);
  EXPECT_TRUE(r.warnings.empty());

  p.wait_signal(1, s1, h, 0, label("wait4"));
  try {
    run_simulation(p, c);
    FAIL() << "a fourth wait must not complete";
  } catch (const DeadlockError& e) {
    ASSERT_EQ(e.blocked().size(), 1u);
    const BlockedStream& b = e.blocked()[0];
    EXPECT_EQ(b.rank, 1);
    EXPECT_EQ(b.op_name, "wait4");
    EXPECT_EQ(b.op_kind, "wait_signal");
    EXPECT_EQ(b.handle, h.id);
    EXPECT_EQ(b.waits_for, std::vector<int>{0});
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 1 stream 'comm' at wait_signal 'wait4'"), std::string::npos) << what;
    EXPECT_NE(what.find("signal #4 from rank 0"), std::string::npos) << what;
    EXPECT_NE(what.find("3 delivered"), std::string::npos) << what;
    EXPECT_NE(what.find("rank 0 has finished all its streams"), std::string::npos) << what;
  }
}

// Case 7: two puts, then two waits: the second wait returns at once (credits carry over).
TEST(OneSidedCounting, CreditsCarryOver) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 128);
  const StreamId s0 = p.stream(0, "comm"), s1 = p.stream(1, "comm");
  p.put_signal(0, s0, p.local_alloc(0, 64), h, 0, 1, label("put1"));
  p.put_signal(0, s0, p.local_alloc(0, 64), h, 64, 1, label("put2"));
  p.wait_signal(1, s1, h, 0, label("wait1"));
  p.wait_signal(1, s1, h, 0, label("wait2"));
  const TracedRun r = traced(p, c);
  EXPECT_NEAR(entry(r, 1, "wait1").end_s, entry(r, 0, "put1").end_s, 1e-12);
  EXPECT_GT(entry(r, 1, "wait2").end_s, entry(r, 1, "wait1").end_s);  // waits for put 2
  // After both have arrived, two more waits on a second pair of puts: the last is instant.
  Program q(2);
  const SymmetricHandle g = q.symm_alloc(q.world_group(), 128);
  const StreamId t0 = q.stream(0, "comm"), t1 = q.stream(1, "comm");
  q.put_signal(0, t0, q.local_alloc(0, 64), g, 0, 1, label("put1"));
  q.put_signal(0, t0, q.local_alloc(0, 64), g, 64, 1, label("put2"));
  MatmulWork slow;
  slow.m = slow.n = slow.k = 1024;
  slow.a = q.local_alloc(1, 1 << 22);
  slow.b = q.local_alloc(1, 1 << 22);
  slow.c = q.local_alloc(1, 1 << 22);
  q.matmul(1, t1, slow, {"slow", OpCategory::compute, ""});
  q.wait_signal(1, t1, g, 0, label("wait1"));
  q.wait_signal(1, t1, g, 0, label("wait2"));
  const TracedRun s = traced(q, c);
  EXPECT_GT(entry(s, 1, "wait1").start_s, entry(s, 0, "put2").end_s);
  EXPECT_DOUBLE_EQ(duration(s, 1, "wait1"), 0.0);
  EXPECT_DOUBLE_EQ(duration(s, 1, "wait2"), 0.0);
}

// Case 8: the sender never blocks on a slow receiver: its put completes at α + b/β and
// its stream finishes, long before the receiver gets round to waiting.
TEST(OneSidedCounting, SenderNeverBlocksOnASlowReceiver) {
  const ClusterSpec c = test_cluster(1, 8);
  const int64_t bytes = 16 << 20;
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), bytes);
  const StreamId s0 = p.stream(0, "comm"), s1 = p.stream(1, "comm");
  p.put_signal(0, s0, p.local_alloc(0, bytes), h, 0, 1, label("put"));
  MatmulWork slow;
  slow.m = slow.n = slow.k = 4096;
  slow.a = p.local_alloc(1, 64 << 20);
  slow.b = p.local_alloc(1, 64 << 20);
  slow.c = p.local_alloc(1, 64 << 20);
  p.matmul(1, s1, slow, {"slow", OpCategory::compute, ""});
  p.wait_signal(1, s1, h, 0, label("wait"));
  const TracedRun r = traced(p, c);
  const double alone = kIntraLatency + static_cast<double>(bytes) / kIntraBandwidth;
  EXPECT_NEAR(entry(r, 0, "put").end_s, alone, alone * 0.005);
  EXPECT_GT(entry(r, 1, "wait").start_s, 10 * alone);  // the receiver is that much slower
  EXPECT_DOUBLE_EQ(duration(r, 1, "wait"), 0.0);       // and finds the signal waiting
}

// Case 9: a put into bytes the receiver has not consumed is reported with both ranks and
// the byte range; with a wait in between there is nothing to report.
TEST(OneSidedCounting, OverwriteHazardNamesBothRanksAndTheRange) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(3);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 4096);
  p.put_signal(0, p.stream(0, "comm"), p.local_alloc(0, 1024), h, 0, 1, label("first"));
  // Rank 2 starts later (a small copy first) and writes [512, 1536): overlaps [512, 1024).
  const StreamId s2 = p.stream(2, "comm");
  p.copy(2, s2, CopyWork{p.local_alloc(2, 4096), p.local_alloc(2, 4096), 1, 1, 4096, 0, 0, 0, 0},
         label("delay"));
  p.put_signal(2, s2, p.local_alloc(2, 1024), h, 512, 1, label("second"));
  // The receiver is busy until both puts have landed.
  const StreamId s1 = p.stream(1, "comm");
  const BufferRef scratch = p.local_alloc(1, 64 << 20);
  p.copy(1, s1, CopyWork{scratch, scratch, 1, 1, 64 << 20, 0, 0, 0, 0},
         {"busy", OpCategory::compute, ""});
  p.wait_signal(1, s1, h, 0, label("w0"));
  p.wait_signal(1, s1, h, 2, label("w2"));
  const TracedRun r = traced(p, c);
  ASSERT_EQ(r.hazards.size(), 1u);
  const Hazard& hz = r.hazards[0];
  EXPECT_EQ(hz.receiver, 1);
  EXPECT_EQ(hz.earlier_sender, 0);
  EXPECT_EQ(hz.later_sender, 2);
  EXPECT_EQ(hz.begin_bytes, 512);
  EXPECT_EQ(hz.end_bytes, 1024);
  EXPECT_EQ(hz.earlier_label, "first");
  EXPECT_EQ(hz.later_label, "second");
  EXPECT_NE(hz.to_string().find("bytes [512, 1024) of rank 1"), std::string::npos);

  SimOptions strict;
  strict.hazards_are_errors = true;
  try {
    run_simulation(p, c, strict);
    FAIL() << "expected a HazardError";
  } catch (const HazardError& e) {
    EXPECT_NE(std::string(e.what()).find("from rank 2 overwrote bytes [512, 1024) of rank 1"),
              std::string::npos)
        << e.what();
  }
}

TEST(OneSidedCounting, ACreditProtocolHasNoHazard) {
  // The receiver consumes each put before the sender, told by a reverse signal, sends the
  // next into the same bytes.
  const ClusterSpec c = test_cluster(1, 8);
  Program p(2);
  const SymmetricHandle data = p.symm_alloc(p.world_group(), 1024);
  const SymmetricHandle ack = p.symm_alloc(p.world_group(), 0);
  const StreamId s0 = p.stream(0, "comm"), s1 = p.stream(1, "comm");
  for (int i = 0; i < 4; ++i) {
    if (i > 0) p.wait_signal(0, s0, ack, 1, label("credit"));
    p.put_signal(0, s0, p.local_alloc(0, 1024), data, 0, 1, label("put"));
    p.wait_signal(1, s1, data, 0, label("wait"));
    p.put_signal(1, s1, p.local_alloc(1, 0), ack, 0, 0, label("ack"));
  }
  const TracedRun r = traced(p, c);
  EXPECT_TRUE(r.hazards.empty());
  EXPECT_EQ(r.warnings.size(), 1u);  // the last ack is never consumed
}

// Case 10: a put from rank 1 never satisfies a wait on rank 2.
TEST(OneSidedCounting, PairsAreIsolated) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(3);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 64);
  p.put_signal(1, p.stream(1, "comm"), p.local_alloc(1, 64), h, 0, 0, label("1 to 0"));
  p.wait_signal(0, p.stream(0, "comm"), h, 2, label("wait on 2"));
  try {
    run_simulation(p, c);
    FAIL() << "rank 0's wait on rank 2 must not complete";
  } catch (const DeadlockError& e) {
    ASSERT_EQ(e.blocked().size(), 1u);
    EXPECT_EQ(e.blocked()[0].rank, 0);
    EXPECT_EQ(e.blocked()[0].waits_for, std::vector<int>{2});
  }
}

// Case 11: a self-put works; it is a device-local copy.
TEST(OneSidedSpecial, SelfPut) {
  const ClusterSpec c = test_cluster(1, 8);
  const int64_t bytes = 1 << 20;
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), bytes);
  const StreamId s = p.stream(1, "comm");
  p.put_signal(1, s, local_with(p, 1, pattern(bytes, 11)), h, 0, 1, label("self"));
  p.wait_signal(1, s, h, 1, label("wait"));
  p.request_output("got", 1, h.whole());
  const TracedRun r = traced(p, c, with_data());
  EXPECT_EQ(r.output("got", 1).bytes, pattern(bytes, 11));
  EXPECT_NEAR(duration(r, 1, "self"), local_copy_duration_s(c.gpu, bytes), 1e-12);
}

// Case 12: a zero-byte put still delivers its signal, after the link latency.
TEST(OneSidedSpecial, ZeroBytePutSignals) {
  const ClusterSpec c = test_cluster(2, 8);
  Program p(16);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 16);
  p.put_signal(0, p.stream(0, "comm"), p.local_alloc(0, 0), h, 16, 9, label("empty"));
  p.wait_signal(9, p.stream(9, "comm"), h, 0, label("wait"));
  const TracedRun r = traced(p, c, with_data());
  // GPU 0 → GPU 1 of node 1 crosses rails: latency + the default 0.5 us spine_latency.
  EXPECT_NEAR(entry(r, 9, "wait").end_s, kInterLatency + 0.5e-6, kInterLatency * 0.005);
}

// Case 13: a non-zero offset is honoured: the bytes land there, and nowhere else.
TEST(OneSidedSpecial, OffsetIsHonoured) {
  const ClusterSpec c = test_cluster(1, 8);
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 4096);
  p.put_signal(0, p.stream(0, "comm"), local_with(p, 0, pattern(1000, 13)), h, 1001, 1,
               label("put"));
  p.wait_signal(1, p.stream(1, "comm"), h, 0, label("wait"));
  p.request_output("all", 1, h.whole());
  const TracedRun r = traced(p, c, with_data());
  std::vector<unsigned char> expected(4096, 0);
  const auto payload = pattern(1000, 13);
  std::copy(payload.begin(), payload.end(), expected.begin() + 1001);
  EXPECT_EQ(r.output("all", 1).bytes, expected);
}

// Case 14: any bytes move exactly, whatever the size (not a multiple of 16 bytes) and
// whether the source is local or another symmetric buffer.
TEST(OneSidedSpecial, OddSizesMoveByteExactly) {
  const ClusterSpec c = test_cluster(2, 8);
  const std::vector<int64_t> sizes{1, 3, 17, 1001, 65537};
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  Program p(16);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), total);
  const SymmetricHandle staging = p.symm_alloc(p.world_group(), total);
  const StreamId s0 = p.stream(0, "comm"), s12 = p.stream(12, "comm");
  const StreamId s5 = p.stream(5, "comm");
  // Rank 0 first moves everything into its own staging copy (a self-put), then sends each
  // piece from there to rank 12 (another node), at odd offsets.
  const auto all = pattern(static_cast<size_t>(total), 14);
  p.put_signal(0, s0, local_with(p, 0, all), staging, 0, 0, label("stage"));
  p.wait_signal(0, s0, staging, 0, label("staged"));
  int64_t at = 0;
  for (int64_t s : sizes) {
    p.put_signal(0, s0, staging.whole().slice(at, s), h, at, 12, label("piece"));
    p.put_signal(0, s0, staging.whole().slice(at, s), h, at, 5, label("piece"));
    at += s;
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    p.wait_signal(12, s12, h, 0, label("wait"));
    p.wait_signal(5, s5, h, 0, label("wait"));
  }
  p.request_output("remote", 12, h.whole());
  p.request_output("local node", 5, h.whole());
  const TracedRun r = traced(p, c, with_data());
  EXPECT_EQ(r.output("remote", 12).bytes, all);
  EXPECT_EQ(r.output("local node", 5).bytes, all);
  EXPECT_TRUE(r.hazards.empty());
}

}  // namespace
}  // namespace symmesh::sim
