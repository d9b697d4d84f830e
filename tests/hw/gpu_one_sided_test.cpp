// The one-sided cases of docs/one-sided.md on real GPUs (SKIPPED without):
// world size 1 (self-put) for cases 1, 6, 7, 11-14, two GPUs for 3 and 10. Each program
// runs once (no warm-up) so that outputs are the first run's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "hw/program_executor.hpp"
#include "tests/hw/hw_test_support.hpp"

namespace symmesh::hw {
namespace {

using symmesh::testing::local_with;
using symmesh::testing::pattern;
using ::testing::HasSubstr;

ExecutorOptions once(double timeout_s = 5) {
  ExecutorOptions o;
  o.warmup_runs = 0;
  o.wait_timeout_s = timeout_s;
  return o;
}

const MeasuredOutput& output(const Measurement& m, const std::string& name, int rank = 0) {
  for (const auto& o : m.outputs)
    if (o.name == name && o.rank == rank) return o;
  throw InvalidArgument("no output " + name, "test");
}

TEST(GpuOneSided, LargeSelfPutDeliversPayloadBeforeSignal) {  // cases 1 and 11
  SYMMESH_REQUIRE_GPUS(1);
  const int64_t bytes = int64_t{64} << 20;
  for (unsigned seed : {1u, 2u}) {
    Program p(1);
    const auto h = p.symm_alloc(p.world_group(), bytes);
    const auto src = local_with(p, 0, pattern(bytes, seed));
    const auto copy = p.local_alloc(0, bytes);
    const StreamId s = p.stream(0, "main");
    p.put_signal(0, s, src, h, 0, 0, {"put", OpCategory::comm, ""});
    p.wait_signal(0, s, h, 0, {"put", OpCategory::comm, ""});
    // Work after the wait sees the data: copy it out right behind the wait.
    CopyWork w;
    w.src = h.whole(), w.dst = copy, w.row_bytes = bytes;
    p.copy(0, s, w, {"copy", OpCategory::compute, ""});
    p.request_output("copy", 0, copy);
    const Measurement m = execute_program(p, once());
    EXPECT_TRUE(output(m, "copy").bytes == pattern(bytes, seed)) << "seed " << seed;
  }
}

TEST(GpuOneSided, FourthWaitAfterThreePutsTimesOutNamingRankPeerAndBuffer) {  // case 6
  SYMMESH_REQUIRE_GPUS(1);
  Program p(1);
  const auto h = p.symm_alloc(p.world_group(), 64);
  const auto src = p.local_alloc(0, 64);
  const StreamId s = p.stream(0, "main");
  for (int i = 0; i < 3; ++i) p.put_signal(0, s, src, h, 0, 0, {"put", OpCategory::comm, ""});
  for (int i = 0; i < 4; ++i)
    p.wait_signal(0, s, h, 0, {"wait", OpCategory::comm, std::to_string(i + 1)});
  try {
    execute_program(p, once(1.0));
    FAIL() << "expected Timeout";
  } catch (const Timeout& e) {
    EXPECT_THAT(e.what(), HasSubstr("wait_signal 'wait' (4)"));
    EXPECT_THAT(e.what(), HasSubstr("for rank 0 on symmetric buffer 0"));
    EXPECT_THAT(e.what(), HasSubstr("3 signal(s) arrived, 4 needed"));
    EXPECT_THAT(e.what(), HasSubstr("(rank 0)"));
  }
}

TEST(GpuOneSided, CreditsCarryOverAndRepeatedRunsExpectMore) {  // case 7
  SYMMESH_REQUIRE_GPUS(1);
  Program p(1);
  const auto h = p.symm_alloc(p.world_group(), 64);
  const auto src = p.local_alloc(0, 64);
  const StreamId s = p.stream(0, "main");
  p.put_signal(0, s, src, h, 0, 0, {"put", OpCategory::comm, ""});
  p.put_signal(0, s, src, h, 0, 0, {"put", OpCategory::comm, ""});
  p.wait_signal(0, s, h, 0, {"wait", OpCategory::comm, ""});
  p.wait_signal(0, s, h, 0, {"wait", OpCategory::comm, ""});
  ExecutorOptions o = once();
  o.warmup_runs = 2;  // three runs: the counter goes 2, 4, 6
  EXPECT_NO_THROW(execute_program(p, o));
}

TEST(GpuOneSided, BuffersOfAGroupShareItsCountersAndSignalsNeedNoData) {  // cases 19, 20
  // NCCL keeps signals per communicator: a put into buffer a satisfies a wait on buffer b;
  // a signal with no data on index 2 is waited for on the group; a wait on index 1, which
  // nothing signals, times out.
  SYMMESH_REQUIRE_GPUS(1);
  Program p(1);
  const GroupId world = p.world_group();
  const auto a = p.symm_alloc(world, 64);
  const auto b = p.symm_alloc(world, 64);
  const StreamId s = p.stream(0, "main");
  p.put_signal(0, s, local_with(p, 0, pattern(64, 3)), a, 0, 0, {"put a", OpCategory::comm, ""});
  p.wait_signal(0, s, b, 0, {"wait b", OpCategory::comm, ""});
  p.signal(0, s, world, 0, {"ping", OpCategory::sync, ""}, 2);
  p.wait_signal(0, s, world, 0, {"pong", OpCategory::sync, ""}, 2);
  p.request_output("a", 0, a.whole());
  Program never = p;
  const Measurement m = execute_program(p, once());
  EXPECT_TRUE(output(m, "a").bytes == pattern(64, 3));
  never.wait_signal(0, never.stream(0, "main"), world, 0, {"none", OpCategory::sync, ""}, 1);
  try {
    execute_program(never, once(1.0));
    FAIL() << "expected Timeout";
  } catch (const Timeout& e) {
    EXPECT_THAT(e.what(), HasSubstr("wait_signal 'none' for rank 0 on communicator 0 (signal 1)"));
  }
}

TEST(GpuOneSided, ZeroBytePutStillSignals) {  // case 12
  SYMMESH_REQUIRE_GPUS(1);
  Program p(1);
  const auto h = p.symm_alloc(p.world_group(), 16);
  const auto src = p.local_alloc(0, 0);
  const StreamId s = p.stream(0, "main");
  p.put_signal(0, s, src, h, 0, 0, {"put", OpCategory::comm, ""});
  p.wait_signal(0, s, h, 0, {"wait", OpCategory::comm, ""});
  EXPECT_NO_THROW(execute_program(p, once()));
}

TEST(GpuOneSided, OffsetAndOddSizesAreByteExact) {  // cases 13 and 14
  SYMMESH_REQUIRE_GPUS(1);
  const int64_t size = 10000, offset = 4099, bytes = 1237;
  Program p(1);
  const auto h = p.symm_alloc(p.world_group(), size);
  const auto src = local_with(p, 0, pattern(bytes, 7));
  const StreamId s = p.stream(0, "main");
  p.put_signal(0, s, src, h, offset, 0, {"put", OpCategory::comm, ""});
  p.wait_signal(0, s, h, 0, {"wait", OpCategory::comm, ""});
  p.request_output("all", 0, h.whole());
  const Measurement m = execute_program(p, once());
  const auto& got = output(m, "all").bytes;
  std::vector<unsigned char> want(size, 0);
  const auto data = pattern(bytes, 7);
  std::copy(data.begin(), data.end(), want.begin() + offset);
  EXPECT_TRUE(got == want);
}

TEST(GpuOneSided, SameProgramTwiceGivesTheSameTimelineShape) {
  SYMMESH_REQUIRE_GPUS(1);
  Program p(1);
  const auto h = p.symm_alloc(p.world_group(), 1 << 20);
  const auto src = p.local_alloc(0, 1 << 20);
  const StreamId s = p.stream(0, "main");
  p.put_signal(0, s, src, h, 0, 0, {"put", OpCategory::comm, ""});
  p.wait_signal(0, s, h, 0, {"wait", OpCategory::comm, ""});
  const Measurement m = execute_program(p, {});
  ASSERT_EQ(m.timeline.size(), 2u);
  EXPECT_GT(m.makespan_s, 0);
  for (const auto& op : m.timeline) EXPECT_LE(op.start_s, op.end_s);
  EXPECT_LE(m.timeline[0].end_s, m.timeline[1].end_s);  // the wait ends after the put
  EXPECT_EQ(m.timeline[0].bytes, 1 << 20);
}

TEST(GpuOneSidedTwoRanks, SamePeerFifoAndPerPairIsolation) {  // cases 3 and 10
  SYMMESH_REQUIRE_GPUS(3);
  Program p(3);
  const auto h = p.symm_alloc(p.world_group(), 4096);
  const auto a = local_with(p, 1, pattern(4096, 11));
  const auto b = local_with(p, 1, pattern(4096, 12));
  p.put_signal(1, p.stream(1, "main"), a, h, 0, 0, {"A", OpCategory::comm, ""});
  p.put_signal(1, p.stream(1, "main"), b, h, 0, 0, {"B", OpCategory::comm, ""});
  p.wait_signal(0, p.stream(0, "main"), h, 1, {"wait", OpCategory::comm, ""});
  p.wait_signal(0, p.stream(0, "main"), h, 1, {"wait", OpCategory::comm, ""});
  p.request_output("got", 0, h.whole());
  // Rank 2 waits for rank 1, which never sends to it: a timeout, not rank 0's signals.
  p.wait_signal(2, p.stream(2, "main"), h, 1, {"isolated", OpCategory::comm, ""});
  try {
    execute_program(p, once(1.0));
    FAIL() << "rank 2's wait must time out";
  } catch (const Timeout& e) {
    EXPECT_THAT(e.what(), HasSubstr("'isolated'"));
    EXPECT_THAT(e.what(), HasSubstr("(rank 2)"));
  }
  Program q(2);
  const auto hq = q.symm_alloc(q.world_group(), 4096);
  const auto qa = local_with(q, 1, pattern(4096, 11));
  const auto qb = local_with(q, 1, pattern(4096, 12));
  q.put_signal(1, q.stream(1, "main"), qa, hq, 0, 0, {"A", OpCategory::comm, ""});
  q.put_signal(1, q.stream(1, "main"), qb, hq, 0, 0, {"B", OpCategory::comm, ""});
  q.wait_signal(0, q.stream(0, "main"), hq, 1, {"wait", OpCategory::comm, ""});
  q.wait_signal(0, q.stream(0, "main"), hq, 1, {"wait", OpCategory::comm, ""});
  q.request_output("got", 0, hq.whole());
  const Measurement m = execute_program(q, once());
  EXPECT_TRUE(output(m, "got").bytes == pattern(4096, 12));
}

}  // namespace
}  // namespace symmesh::hw
