// Where an all-gather can be fused into the matmul, the chunk counts offered, and the shape
// of the program the overlapped all-gather + mm writes. (That its result equals the
// unfused one is checked for every candidate in plan_lowering_test.cpp.)
#include "strategies/collective_matmul.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"

namespace symmesh::strategies {
namespace {

OpProblem mm(std::vector<int> mesh, const char* a, const char* b) {
  OpProblem p;
  p.op = OpKind::mm;
  p.mesh = DeviceMesh(mesh);
  p.inputs = {{{64, 32}, DType::bf16, parse_placements(a)},
              {{32, 48}, DType::bf16, parse_placements(b)}};
  return p;
}

TEST(AllGatherFusion, OnlyAnAllGatherOfTheLeadingDimIsFused) {
  // S(0) -> R on a 4-rank mesh: the rows of a are gathered.
  const auto site = allgather_fusion(mm({4}, "S(0)", "R"), parse_placements("R"));
  ASSERT_TRUE(site.has_value());
  EXPECT_EQ(site->mesh_dim, 0);
  EXPECT_EQ(site->group_size, 4);
  // The inner dim gathered: every chunk would feed every output row (not fused).
  EXPECT_FALSE(allgather_fusion(mm({4}, "S(1)", "R"), parse_placements("R")));
  // Nothing to gather, or a different collective (S(1) -> S(0) is an all-to-all).
  EXPECT_FALSE(allgather_fusion(mm({4}, "S(0)", "R"), parse_placements("S(0)")));
  EXPECT_FALSE(allgather_fusion(mm({4}, "S(1)", "R"), parse_placements("S(0)")));
  // 2-D: the gather on mesh dim 1 while dim 0 shards k.
  const auto two = allgather_fusion(mm({2, 4}, "S(1),S(0)", "R,R"), parse_placements("S(1),R"));
  ASSERT_TRUE(two.has_value());
  EXPECT_EQ(two->mesh_dim, 1);
  EXPECT_EQ(two->group_size, 4);
  // Rows still sharded by the other mesh dim after the gather: not contiguous blocks.
  EXPECT_FALSE(allgather_fusion(mm({2, 4}, "S(0),S(0)", "R,R"), parse_placements("S(0),R")));
  // A mesh dim of one rank has nothing to overlap.
  EXPECT_FALSE(allgather_fusion(mm({1, 4}, "S(0),R", "R,R"), parse_placements("R,R")));
}

TEST(AllGatherFusion, ChunkChoicesArePowersOfTwoKeepingARowEach) {
  EXPECT_EQ(fusion_chunk_choices(5), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(fusion_chunk_choices(0), (std::vector<int>{1}));  // an empty shard
  EXPECT_EQ(fusion_chunk_choices(1000), (std::vector<int>{1, 2, 4, 8, 16}));
}

TEST(OverlappedAllGatherMatmul, TwoStreamsPerRankWithOnePutPerPieceAndStep) {
  // p = 3 ranks, shards of 4 rows, 2 chunks: each rank puts its own 2 pieces, then forwards
  // the 2 pieces of the first shard it receives (not those of the last): 4 puts; it waits
  // for 2 shards × 2 pieces = 4 signals and runs 3 shards × 2 pieces = 6 matmuls.
  Program program(3);
  const GroupId g = program.add_group({0, 1, 2});
  GatherMatmulSpec spec;
  spec.group = g;
  spec.shard_rows = {4, 4, 4};
  spec.a_row_bytes = 8 * 4;  // 8 fp32 columns of a
  spec.chunks = 2;
  for (int r = 0; r < 3; ++r) {
    GatherMatmulMember m;
    m.rank = r;
    m.c_row_bytes = 6 * 4;  // 6 columns of the output
    m.compute_stream = program.stream(r, "main");
    m.comm_stream = program.stream(r, "main-comm");
    m.a_shard = program.local_alloc(r, 4 * spec.a_row_bytes);
    m.c = program.local_alloc(r, 12 * m.c_row_bytes);
    m.work.n = 6;
    m.work.k = 8;
    m.work.b = program.local_alloc(r, 8 * 6 * 4);
    spec.members.push_back(m);
  }
  overlapped_allgather_matmul(program, spec);
  for (int r = 0; r < 3; ++r) {
    int puts = 0, waits = 0, matmuls = 0, rows = 0;
    for (const Stream& s : program.streams(r))
      for (const StreamOp& op : s.ops) {
        puts += op.kind() == StreamOp::Kind::put_signal;
        waits += op.kind() == StreamOp::Kind::wait_signal;
        if (op.kind() == StreamOp::Kind::matmul) {
          ++matmuls;
          rows += static_cast<int>(program.matmul_of(op).m);
          EXPECT_EQ(s.name, "main");
        }
        if (op.kind() == StreamOp::Kind::put_signal || op.kind() == StreamOp::Kind::wait_signal) {
          EXPECT_EQ(s.name, "main-comm");
        }
      }
    EXPECT_EQ(puts, 4) << "rank " << r;
    EXPECT_EQ(waits, 4) << "rank " << r;
    EXPECT_EQ(matmuls, 6) << "rank " << r;
    EXPECT_EQ(rows, 12) << "rank " << r;  // every row of the gathered a, once
  }
  // Recorded as one fused collective: every member owns all its ops on both streams.
  ASSERT_EQ(program.collectives().size(), 1u);
  const CollectiveRecord& record = program.collectives()[0];
  EXPECT_EQ(record.op, CollectiveOp::allgather_matmul);
  EXPECT_EQ(record.algorithm, CollectiveAlgorithm::fused_ring);
  ASSERT_EQ(record.spans.size(), 6u);  // 3 members x (compute, comm)
  for (const CollectiveSpan& span : record.spans) {
    EXPECT_EQ(span.first_op, 0);
    EXPECT_EQ(span.op_count, static_cast<int>(program.streams(span.rank)[span.stream].ops.size()));
  }
  spec.chunks = 0;
  EXPECT_THROW(overlapped_allgather_matmul(program, spec), InvalidArgument);
}

}  // namespace
}  // namespace symmesh::strategies
