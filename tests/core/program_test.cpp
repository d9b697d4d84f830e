// The Program's own bookkeeping: compact ops, interned labels, one group per rank list
// with O(1) membership, checks that name what is wrong, and a counting Program that holds
// nothing but counts exactly what a real one holds.
#include "core/program.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/collectives.hpp"
#include "core/errors.hpp"

namespace symmesh {
namespace {

using ::testing::HasSubstr;

TEST(Program, OpsAreSmallAndLabelsInterned) {
  EXPECT_LE(sizeof(StreamOp), 64u);
  Program p(2);
  const LabelId a = p.label({"grads", OpCategory::comm, "ring all_gather step 1/1"});
  const LabelId b = p.label({"grads", OpCategory::comm, "ring all_gather step 1/1"});
  const LabelId c = p.label({"grads", OpCategory::compute, "ring all_gather step 1/1"});
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(p.label_of(a).detail, "ring all_gather step 1/1");
  EXPECT_EQ(p.label_of(c).category, OpCategory::compute);
  EXPECT_EQ(p.label_of(0).name, "");  // id 0: no label
}

TEST(Program, OpsKeepWhatTheyWereGiven) {
  Program p(2);
  const SymmetricHandle h = p.symm_alloc(p.world_group(), 64);
  const BufferRef src = p.local_alloc(0, 16);
  p.put_signal(0, p.stream(0, "main"), src, h, 32, 1, {"x", OpCategory::comm, ""});
  p.wait_signal(1, p.stream(1, "main"), h, 0, {"x", OpCategory::comm, ""});
  ReduceWork r;
  r.dtype = DType::bf16;
  r.elements = 4;  // 8 bytes of a 16-byte range: the op keeps exactly the reduced bytes
  r.dst = h.whole().slice(0, 16);
  r.src = h.whole().slice(16, 16);
  r.scale = 0.25;
  r.fused_with_transfer = true;
  p.reduce(1, p.stream(1, "main"), r, {"x", OpCategory::comm, ""});
  const StreamOp& put = p.streams(0)[0].ops[0];
  EXPECT_EQ(put.kind(), StreamOp::Kind::put_signal);
  EXPECT_EQ(put.put().dst().offset_bytes, 32);
  EXPECT_EQ(put.put().dst().size_bytes, 16);
  EXPECT_EQ(put.handle(), h.id);
  EXPECT_EQ(put.peer(), 1);
  const ReduceWork back = p.streams(1)[0].ops[1].reduce();
  EXPECT_EQ(back.dtype, DType::bf16);
  EXPECT_EQ(back.elements, 4);
  EXPECT_EQ(back.dst.size_bytes, 8);
  EXPECT_EQ(back.scale, 0.25);
  EXPECT_TRUE(back.fused_with_transfer);
  EXPECT_THROW(put.wait(), InvalidArgument);  // the payload of another kind
}

TEST(Program, IdenticalGroupsAreOneAndMembershipIsDirect) {
  Program p(8);
  const GroupId g = p.add_group({6, 2, 4});
  EXPECT_EQ(p.add_group({6, 2, 4}), g);
  EXPECT_NE(p.add_group({2, 4, 6}), g);  // another order is another ring
  EXPECT_EQ(p.group(g).index_of(6), 0);
  EXPECT_EQ(p.group(g).index_of(4), 2);
  EXPECT_EQ(p.group(g).index_of(3), -1);
  EXPECT_EQ(p.group(g).index_of(7), -1);
  EXPECT_EQ(p.group(g).index_of(0), -1);
  EXPECT_EQ(p.world_group(), p.add_group({0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(Program, ChecksNameWhatIsWrong) {
  Program p(4);
  const SymmetricHandle h = p.symm_alloc(p.add_group({0, 1}), 64);
  const BufferRef src = p.local_alloc(0, 16);
  try {
    p.put_signal(2, p.stream(2, "main"), p.local_alloc(2, 8), h, 0, 1, {});
    FAIL() << "rank 2 is not in the handle's group";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("belongs to a group rank 2 is not in"));
  }
  EXPECT_THROW(p.put_signal(0, p.stream(0, "main"), src, h, 56, 1, {}), InvalidArgument);
  EXPECT_THROW(p.put_signal(0, p.stream(0, "main"), src, h, 0, 2, {}), InvalidArgument);
  EXPECT_THROW(p.put_signal(0, p.stream(0, "main"), p.local_alloc(1, 8), h, 0, 1, {}),
               InvalidArgument);  // a local buffer of another rank
}

// A ring all-reduce of 1 MiB over 4 ranks, written twice: into a counting Program and a
// real one. The counts are exact: per rank 3 reduce-scatter steps (put, wait, reduce) and
// 3 all-gather steps (put, wait) = 15 ops, 60 over the ranks; two symmetric buffers.
TEST(Program, GetKeepsItsRangeAndChecksItsArguments) {
  Program p(3);
  const GroupId pair = p.add_group({0, 1});
  const SymmetricHandle h = p.symm_alloc(pair, 64);
  const BufferRef dst = p.local_alloc(1, 16);
  const StreamId s1 = p.stream(1, "main");
  p.get(1, s1, dst, h, 48, 0, {"read", OpCategory::comm, ""});
  const StreamOp& op = p.streams(1)[0].ops[0];
  EXPECT_EQ(op.kind(), StreamOp::Kind::get);
  EXPECT_EQ(to_string(op.kind()), "get");
  EXPECT_EQ(op.get().src().offset_bytes, 48);
  EXPECT_EQ(op.get().src().size_bytes, 16);
  EXPECT_EQ(op.handle(), h.id);
  EXPECT_EQ(op.peer(), 0);
  EXPECT_EQ(p.peer_rank_of(op), 0);
  auto refused = [&](auto call, const std::string& text) {
    try {
      call();
      ADD_FAILURE() << "expected: " << text;
    } catch (const InvalidArgument& e) {
      EXPECT_THAT(e.what(), HasSubstr(text));
    }
  };
  refused([&] { p.get(1, s1, dst, h, 0, 2, {}); }, "peer 2 out of range for a group of 2");
  refused([&] { p.get(1, s1, dst, h, 56, 0, {}); },
          "offset 56 + 16 bytes is beyond the symmetric buffer's 64 bytes");
  refused([&] { p.get(2, p.stream(2, "main"), p.local_alloc(2, 16), h, 0, 0, {}); },
          "belongs to a group rank 2 is not in");
  refused([&] { p.get(0, p.stream(0, "main"), dst, h, 0, 1, {}); }, "belongs to rank 1");
}

TEST(Program, ABarrierCanBeAppendedMemberByMember) {
  Program p(3);
  const GroupId pair = p.add_group({0, 2});
  p.barrier(2, p.stream(2, "main"), pair, p.label({"b", OpCategory::sync, ""}));
  EXPECT_TRUE(p.streams(0).empty());  // rank 0 appends its own
  ASSERT_EQ(p.streams(2)[0].ops.size(), 1u);
  EXPECT_EQ(p.streams(2)[0].ops[0].kind(), StreamOp::Kind::barrier);
  EXPECT_EQ(p.streams(2)[0].ops[0].group(), pair);
  try {
    p.barrier(1, p.stream(1, "main"), pair, 0);
    ADD_FAILURE() << "rank 1 is not a member";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank 1 is not a member of group"));
  }
}

TEST(Program, CountingHoldsNothingAndCountsExactly) {
  auto build = [](Program& p) {
    const CollectiveSpec spec{p.world_group(), 1 << 20, DType::fp32, ReduceOp::sum, "main", "ar"};
    ring_all_reduce(p, spec);
    p.barrier(p.world_group(), "main", {"ar", OpCategory::sync, "end"});
  };
  Program counted = Program::counting(4);
  build(counted);
  Program real(4);
  real.reserve_like(counted);
  build(real);
  EXPECT_EQ(counted.counts().stream_ops, 4 * (15 + 1));
  EXPECT_EQ(real.counts().stream_ops, counted.counts().stream_ops);
  EXPECT_EQ(counted.counts().symmetric_allocations, 2);
  // Data 1 MiB and 3 staging slots of 256 KiB on each of the 4 ranks.
  EXPECT_EQ(counted.counts().buffer_bytes, 4 * ((1 << 20) + 3 * (1 << 18)));
  EXPECT_TRUE(counted.streams(0)[0].ops.empty());
  EXPECT_EQ(counted.stream_op_counts()[0][0], 16);
  ASSERT_EQ(real.streams(0)[0].ops.size(), 16u);
  EXPECT_EQ(real.streams(0)[0].ops.capacity(), 16u);  // reserved exactly: no growth slack
  EXPECT_TRUE(counted.collectives().empty());
  EXPECT_EQ(counted.counts().collective_spans, 4);
}

}  // namespace
}  // namespace symmesh

namespace symmesh {
namespace {

TEST(ProgramBytes, AllocationsBeyondInt64AreRefusedNotWrapped) {
  // 2^61 bytes on each of 4 ranks is 2^63 in all: one more than int64 holds. The program
  // must refuse it (a clear error) rather than overflow its byte counts.
  Program p(4);
  const int64_t huge = int64_t{1} << 61;
  EXPECT_THROW(p.symm_alloc(p.world_group(), huge), InvalidArgument);
  // On one rank, one 2^62 fits; a second makes 2^63, one past the largest int64.
  Program q(1);
  q.local_alloc(0, int64_t{1} << 62);
  EXPECT_THROW(q.local_alloc(0, int64_t{1} << 62), InvalidArgument);
}

}  // namespace
}  // namespace symmesh
