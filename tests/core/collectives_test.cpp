// Every collective the core writes is recorded in the Program: its kind, group, sizes,
// algorithm, buffers and each member's span of ops — exactly the ops it appended.
#include "core/collectives.hpp"

#include <gtest/gtest.h>

namespace symmesh {
namespace {

// The kinds of the ops in a span.
std::vector<StreamOp::Kind> kinds(const Program& p, const CollectiveSpan& s) {
  std::vector<StreamOp::Kind> out;
  const auto& ops = p.streams(s.rank)[s.stream].ops;
  for (int i = s.first_op; i < s.first_op + s.op_count; ++i) out.push_back(ops[i].kind());
  return out;
}

TEST(CollectiveRecords, RingAllReduceIsOneRecordWithOneSpanPerMember) {
  Program p(4);
  // Something before it on rank 2's stream, so its span does not start at 0.
  p.barrier(p.add_group({2}), "main");
  const GroupId g = p.add_group({3, 2, 1, 0});
  const CollectiveSpec spec{g, 1000, DType::bf16, ReduceOp::avg, "main", "grads"};
  const CollectiveBuffers b = ring_all_reduce(p, spec);
  ASSERT_EQ(p.collectives().size(), 1u);
  const CollectiveRecord& r = p.collectives()[0];
  EXPECT_EQ(r.op, CollectiveOp::all_reduce);
  EXPECT_EQ(r.algorithm, CollectiveAlgorithm::ring);
  EXPECT_EQ(r.group, g);
  EXPECT_EQ(r.bytes, 1000);
  EXPECT_EQ(r.chunk_bytes, 250);  // 500 bf16 elements over 4 members: 125 each
  EXPECT_EQ(r.dtype, DType::bf16);
  EXPECT_EQ(r.reduction, ReduceOp::avg);
  EXPECT_EQ(r.name, "grads");
  EXPECT_EQ(r.data, b.data.id);
  EXPECT_EQ(r.staging, b.staging.id);
  ASSERT_EQ(r.spans.size(), 4u);
  using K = StreamOp::Kind;
  for (size_t i = 0; i < 4; ++i) {
    const CollectiveSpan& s = r.spans[i];
    EXPECT_EQ(s.rank, 3 - static_cast<int>(i));  // group order
    EXPECT_EQ(s.first_op, s.rank == 2 ? 1 : 0);
    // 3 reduce-scatter steps, then 3 all-gather steps.
    EXPECT_EQ(kinds(p, s), (std::vector<K>{K::put_signal, K::wait_signal, K::reduce, K::put_signal,
                                           K::wait_signal, K::reduce, K::put_signal, K::wait_signal,
                                           K::reduce, K::put_signal, K::wait_signal, K::put_signal,
                                           K::wait_signal, K::put_signal, K::wait_signal}));
  }
}

TEST(CollectiveRecords, EachKindAndItsBuffers) {
  Program p(3);
  const GroupId g = p.world_group();
  const CollectiveSpec spec{g, 300, DType::fp32, ReduceOp::sum, "comm", "x"};
  const auto ag = ring_all_gather(p, spec);
  const auto rs = ring_reduce_scatter(p, spec);
  const auto a2a = pairwise_all_to_all(p, spec);
  ASSERT_EQ(p.collectives().size(), 3u);
  EXPECT_EQ(p.collectives()[0].op, CollectiveOp::all_gather);
  EXPECT_EQ(p.collectives()[0].result, ag.data.id);
  EXPECT_EQ(p.collectives()[1].op, CollectiveOp::reduce_scatter);
  EXPECT_EQ(p.collectives()[1].staging, rs.staging.id);
  EXPECT_EQ(p.collectives()[2].op, CollectiveOp::all_to_all);
  EXPECT_EQ(p.collectives()[2].algorithm, CollectiveAlgorithm::pairwise);
  EXPECT_EQ(p.collectives()[2].result, a2a.result.id);
  // The spans tile each stream: 4 + 6 + 4 ops per member.
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(p.collectives()[0].spans[r].op_count, 4);
    EXPECT_EQ(p.collectives()[1].spans[r].first_op, 4);
    EXPECT_EQ(p.collectives()[1].spans[r].op_count, 6);
    EXPECT_EQ(p.collectives()[2].spans[r].first_op, 10);
    EXPECT_EQ(static_cast<int>(p.streams(r)[0].ops.size()), 14);
  }
  // A group of one moves nothing and records nothing.
  Program one(1);
  ring_all_reduce(one, {one.world_group(), 64, DType::fp32, ReduceOp::sum, "main", "y"});
  EXPECT_TRUE(one.collectives().empty());
}

}  // namespace
}  // namespace symmesh
