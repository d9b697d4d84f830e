// Cases 1–5 of docs/one-sided.md (ordering and visibility), with real bytes.
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

// Case 1: a large put split into many chunks, each followed by a signal; the receiver waits
// for every chunk, then copies the whole buffer out: every byte is new. Twice, with a
// different pattern, the second round gated by a credit the receiver sends back.
TEST(OneSidedOrdering, PayloadBeforeSignalAcrossManyChunks) {
  const ClusterSpec c = test_cluster(1, 8);
  const int64_t chunk = 64 << 10, chunks = 64, total = chunk * chunks;
  Program p(2);
  const SymmetricHandle data = p.symm_alloc(p.world_group(), total);
  const SymmetricHandle credit = p.symm_alloc(p.world_group(), 0);
  const StreamId s0 = p.stream(0, "comm"), s1 = p.stream(1, "comm");
  std::vector<BufferRef> outs;
  for (unsigned round = 0; round < 2; ++round) {
    const BufferRef src = local_with(p, 0, pattern(total, 100 + round));
    if (round > 0) p.wait_signal(0, s0, credit, 1, label("credit"));
    for (int64_t i = 0; i < chunks; ++i)
      p.put_signal(0, s0, src.slice(i * chunk, chunk), data, i * chunk, 1, label("chunk"));
    for (int64_t i = 0; i < chunks; ++i) p.wait_signal(1, s1, data, 0, label("wait chunk"));
    const BufferRef out = p.local_alloc(1, total);
    p.copy(1, s1, CopyWork{out, data.whole(), 1, 1, total, 0, 0, 0, 0}, label("read"));
    p.put_signal(1, s1, p.local_alloc(1, 0), credit, 0, 0, label("give credit"));
    p.request_output("round" + std::to_string(round), 1, out);
  }
  const TracedRun r = traced(p, c, with_data());
  EXPECT_EQ(r.output("round0", 1).bytes, pattern(total, 100));
  EXPECT_EQ(r.output("round1", 1).bytes, pattern(total, 101));
  EXPECT_TRUE(r.hazards.empty()) << r.hazards.front().to_string();
}

// Case 2: the receiver enqueues its wait before the sender has even started; the work
// after the wait runs only once the put has landed, and sees its bytes.
TEST(OneSidedOrdering, WaitEnqueuedBeforePutHoldsDependentWork) {
  const ClusterSpec c = test_cluster(1, 8);
  const int64_t bytes = 1 << 20;
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), bytes);
  const StreamId s0 = p.stream(0, "main"), s1 = p.stream(1, "main");
  // The sender is busy for a while first (a 512³ fp32 matmul, about 8 µs).
  MatmulWork mm;
  mm.m = mm.n = mm.k = 512;
  mm.a = p.local_alloc(0, 512 * 512 * 4);
  mm.b = p.local_alloc(0, 512 * 512 * 4);
  mm.c = p.local_alloc(0, 512 * 512 * 4);
  p.matmul(0, s0, mm, {"busy", OpCategory::compute, ""});
  p.put_signal(0, s0, local_with(p, 0, pattern(bytes, 7)), h, 0, 1, label("put"));
  p.wait_signal(1, s1, h, 0, label("wait"));
  const BufferRef out = p.local_alloc(1, bytes);
  p.copy(1, s1, CopyWork{out, h.whole(), 1, 1, bytes, 0, 0, 0, 0}, label("use"));
  p.request_output("seen", 1, out);
  const TracedRun r = traced(p, c, with_data());
  EXPECT_DOUBLE_EQ(entry(r, 1, "wait").start_s, 0.0);
  EXPECT_GE(entry(r, 1, "use").start_s, entry(r, 0, "put").end_s);
  EXPECT_GT(entry(r, 0, "put").start_s, 5e-6);
  EXPECT_EQ(r.output("seen", 1).bytes, pattern(bytes, 7));
}

// Case 3a: put A then put B into the same bytes of one peer: after the second wait the
// bytes are B's, whole. The receiver is busy until both have landed, so B overwrote bytes
// of A it had not consumed: an overwrite hazard too, which the simulator reports.
TEST(OneSidedOrdering, SamePeerPutsLandInOrderFinalBytesAreTheLast) {
  const ClusterSpec c = test_cluster(1, 8);
  const int64_t bytes = 1 << 20;
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), bytes);
  const StreamId s0 = p.stream(0, "comm"), s1 = p.stream(1, "comm");
  p.put_signal(0, s0, local_with(p, 0, pattern(bytes, 1)), h, 0, 1, label("A"));
  p.put_signal(0, s0, local_with(p, 0, pattern(bytes, 2)), h, 0, 1, label("B"));
  const BufferRef scratch = p.local_alloc(1, 4 << 20);
  p.copy(1, s1, CopyWork{scratch, scratch, 1, 1, 4 << 20, 0, 0, 0, 0},
         {"busy", OpCategory::compute, ""});
  p.wait_signal(1, s1, h, 0, label("wait A"));
  p.wait_signal(1, s1, h, 0, label("wait B"));
  p.request_output("final", 1, h.whole());
  const TracedRun r = traced(p, c, with_data());
  EXPECT_EQ(r.output("final", 1).bytes, pattern(bytes, 2));
  ASSERT_EQ(r.hazards.size(), 1u);
  EXPECT_EQ(r.hazards[0].earlier_label, "A");
  EXPECT_EQ(r.hazards[0].later_label, "B");
  EXPECT_GT(entry(r, 1, "wait A").start_s, entry(r, 0, "B").end_s);
}

// Case 3b: the FIFO is enforced even when transfers finish out of order. Stream "big" puts
// 16 MiB; stream "small" puts 1 KiB to the same peer just after, which finishes first. The
// receiver's first wait may only complete once the big put is delivered, and sees its bytes.
TEST(OneSidedOrdering, SignalOfALaterPutWaitsForEarlierPutsToTheSamePeer) {
  const ClusterSpec c = test_cluster(1, 8);
  const int64_t big = 16 << 20, small = 1024;
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), big + small);
  const StreamId big_stream = p.stream(0, "big"), small_stream = p.stream(0, "small");
  const StreamId s1 = p.stream(1, "comm");
  p.put_signal(0, big_stream, local_with(p, 0, pattern(big, 3)), h, 0, 1, label("big"));
  // A tiny op delays the small put just past the big one's start.
  p.copy(0, small_stream, CopyWork{p.local_alloc(0, 8), p.local_alloc(0, 8), 1, 1, 8, 0, 0, 0, 0},
         label("delay"));
  p.put_signal(0, small_stream, local_with(p, 0, pattern(small, 4)), h, big, 1, label("small"));
  p.wait_signal(1, s1, h, 0, label("first wait"));
  const BufferRef out = p.local_alloc(1, big);
  p.copy(1, s1, CopyWork{out, h.whole().slice(0, big), 1, 1, big, 0, 0, 0, 0}, label("read"));
  p.wait_signal(1, s1, h, 0, label("second wait"));
  p.request_output("after first wait", 1, out);
  p.request_output("small", 1, h.whole().slice(big, small));
  const TracedRun r = traced(p, c, with_data());
  const double big_end = entry(r, 0, "big").end_s;
  EXPECT_LT(entry(r, 0, "small").end_s, big_end);  // the transfers did finish out of order
  EXPECT_GE(entry(r, 1, "first wait").end_s, big_end);
  EXPECT_EQ(r.output("after first wait", 1).bytes, pattern(big, 3));
  EXPECT_EQ(r.output("small", 1).bytes, pattern(small, 4));
  EXPECT_TRUE(r.hazards.empty());
}

// Case 4: a receiver that never waits does not stall another one.
TEST(OneSidedOrdering, DifferentPeersAreIndependent) {
  const ClusterSpec c = test_cluster(1, 8);
  const int64_t bytes = 4 << 20;
  Program p(3);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), bytes);
  const StreamId s0 = p.stream(0, "comm");
  p.put_signal(0, s0, local_with(p, 0, pattern(bytes, 5)), h, 0, 1, label("to 1"));
  p.put_signal(0, s0, local_with(p, 0, pattern(bytes, 6)), h, 0, 2, label("to 2"));
  p.wait_signal(2, p.stream(2, "comm"), h, 0, label("wait"));
  p.request_output("got", 2, h.whole());
  const TracedRun r = traced(p, c, with_data());
  EXPECT_EQ(r.output("got", 2).bytes, pattern(bytes, 6));
  EXPECT_NEAR(entry(r, 2, "wait").end_s, entry(r, 0, "to 2").end_s, 1e-12);
  ASSERT_EQ(r.warnings.size(), 1u);  // rank 1's unconsumed signal is noted, not an error
  EXPECT_NE(r.warnings[0].find("rank 1 left 1 of 1 signals from rank 0"), std::string::npos)
      << r.warnings[0];
}

// Case 5: the sender overwrites its source right after the put completes; the receiver
// still sees the old bytes — even when the put's delivery was held back behind an earlier
// put to the same peer (the source is then snapshotted at completion).
TEST(OneSidedOrdering, SourceReuseAfterCompletionDoesNotChangeWhatTheReceiverSees) {
  const ClusterSpec c = test_cluster(1, 8);
  const int64_t big = 8 << 20, bytes = 4096;
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), big + bytes);
  const StreamId big_stream = p.stream(0, "big"), reuse = p.stream(0, "reuse");
  const StreamId s1 = p.stream(1, "comm");
  p.put_signal(0, big_stream, local_with(p, 0, pattern(big, 8)), h, 0, 1, label("big"));
  const BufferRef src = local_with(p, 0, pattern(bytes, 9));
  p.put_signal(0, reuse, src, h, big, 1, label("put"));
  p.copy(0, reuse, CopyWork{src, local_with(p, 0, pattern(bytes, 10)), 1, 1, bytes, 0, 0, 0, 0},
         label("overwrite source"));
  p.wait_signal(1, s1, h, 0, label("w1"));
  p.wait_signal(1, s1, h, 0, label("w2"));
  p.request_output("got", 1, h.whole().slice(big, bytes));
  p.request_output("source", 0, src);
  const TracedRun r = traced(p, c, with_data());
  EXPECT_LT(entry(r, 0, "overwrite source").end_s, entry(r, 0, "big").end_s);
  EXPECT_EQ(r.output("got", 1).bytes, pattern(bytes, 9));
  EXPECT_EQ(r.output("source", 0).bytes, pattern(bytes, 10));
}

}  // namespace
}  // namespace symmesh::sim
