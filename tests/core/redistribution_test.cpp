// Redistribution planning (reference/dtensor-strategies.md §3, greedy planner) and the
// byte counts of each step as core/redistribution.hpp defines them: ring algorithms over
// padded, equal chunks; "bytes" is what the busiest rank sends, "buffer_bytes" the
// nccl-tests size of the step. Every byte count below is worked out by hand in a comment.
#include "core/redistribution.hpp"

#include <gtest/gtest.h>

#include "tests/thrown.hpp"

#include <string>
#include <vector>

#include "core/errors.hpp"

namespace symmesh {
namespace {

using testing::thrown;

Placements P(std::initializer_list<Placement> list) {
  return Placements(list);
}
const Placement R = Placement::replicate();
const Placement S0 = Placement::shard(0);
const Placement S1 = Placement::shard(1);
const Placement Psum = Placement::partial(ReduceOp::sum);
const Placement Pavg = Placement::partial(ReduceOp::avg);

using Kind = CollectiveKind;

// One expected step: mesh dim, from, to, collective.
struct Step {
  int mesh_dim;
  Placement from, to;
  Kind kind;
};

void expect_steps(const Redistribution& plan, const std::vector<Step>& expected) {
  ASSERT_EQ(plan.steps.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto& s = plan.steps[i];
    EXPECT_EQ(s.mesh_dim, expected[i].mesh_dim) << "step " << i;
    EXPECT_EQ(s.from, expected[i].from) << "step " << i << ": " << to_string(s.from);
    EXPECT_EQ(s.to, expected[i].to) << "step " << i << ": " << to_string(s.to);
    EXPECT_EQ(s.collective, expected[i].kind) << "step " << i << ": " << to_string(s.collective);
  }
}

void expect_transitions(const std::vector<Transition>& got, const std::vector<Step>& expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(got[i].mesh_dim, expected[i].mesh_dim) << "transition " << i;
    EXPECT_EQ(got[i].from, expected[i].from) << "transition " << i;
    EXPECT_EQ(got[i].to, expected[i].to) << "transition " << i;
  }
}

// The greedy planner on a mesh whose every dim has size 2: any Shard makes num_shards > 1,
// so the misalignment pass runs whenever the source is sharded.
std::vector<Transition> plan_on_2s(const Placements& src, const Placements& dst) {
  return plan_transitions(src, dst, std::vector<int>(src.size(), 2));
}

// 10x4 fp32 = 160 B, the running example.
TensorSpec ten_by_four(Placements placements) {
  return TensorSpec{{10, 4}, DType::fp32, std::move(placements)};
}

// ---- collective per transition ------------------------------------------------------

TEST(TransitionCollective, ShardToReplicateIsAllGather) {
  EXPECT_EQ(transition_collective(S0, R), Kind::all_gather);
  EXPECT_EQ(transition_collective(S1, R), Kind::all_gather);
}

TEST(TransitionCollective, ShardToOtherShardIsAllToAll) {
  EXPECT_EQ(transition_collective(S0, S1), Kind::all_to_all);
  EXPECT_EQ(transition_collective(S1, S0), Kind::all_to_all);
}

TEST(TransitionCollective, PartialToReplicateIsAllReduce) {
  EXPECT_EQ(transition_collective(Psum, R), Kind::all_reduce);
  EXPECT_EQ(transition_collective(Pavg, R), Kind::all_reduce);
}

TEST(TransitionCollective, PartialToShardIsReduceScatter) {
  EXPECT_EQ(transition_collective(Psum, S0), Kind::reduce_scatter);
  EXPECT_EQ(transition_collective(Pavg, S1), Kind::reduce_scatter);
}

TEST(TransitionCollective, ReplicateToShardIsALocalChunk) {
  EXPECT_EQ(transition_collective(R, S0), Kind::local_chunk);
}

TEST(TransitionCollective, ReplicateToPartialIsLocal) {
  EXPECT_EQ(transition_collective(R, Psum), Kind::local_partial);
  EXPECT_EQ(transition_collective(R, Pavg), Kind::local_partial);
}

TEST(TransitionCollective, ShardToPartialIsImpossible) {
  EXPECT_FALSE(transition_collective(S0, Psum).has_value());
  EXPECT_FALSE(transition_collective(S1, Pavg).has_value());
}

TEST(TransitionCollective, ChangingThePartialOpIsImpossible) {
  EXPECT_FALSE(transition_collective(Psum, Pavg).has_value());
  EXPECT_FALSE(transition_collective(Pavg, Psum).has_value());
}

TEST(CollectiveKind, Names) {
  EXPECT_EQ(to_string(Kind::all_gather), "all_gather");
  EXPECT_EQ(to_string(Kind::reduce_scatter), "reduce_scatter");
  EXPECT_EQ(to_string(Kind::all_reduce), "all_reduce");
  EXPECT_EQ(to_string(Kind::all_to_all), "all_to_all");
  EXPECT_EQ(to_string(Kind::local_chunk), "local_chunk");
  EXPECT_EQ(to_string(Kind::local_partial), "local_partial");
}

// ---- the greedy planner alone -------------------------------------------------------

TEST(PlanTransitions, OneDimIsOneDirectStep) {
  expect_transitions(plan_on_2s(P({S0}), P({S1})), {{0, S0, S1, {}}});
  expect_transitions(plan_on_2s(P({Psum}), P({R})), {{0, Psum, R, {}}});
}

TEST(PlanTransitions, SamePlacementsNeedNothing) {
  EXPECT_TRUE(plan_on_2s(P({S0}), P({S0})).empty());
  EXPECT_TRUE(plan_on_2s(P({S0, S1}), P({S0, S1})).empty());
  EXPECT_TRUE(plan_on_2s(P({R, Psum, S0}), P({R, Psum, S0})).empty());
}

TEST(PlanTransitions, ReferenceExampleNestedShardToOuterReplicate) {
  // dtensor-strategies.md §3: (S0,S0) -> (R,S0) is dim 1 S0->R, dim 0 S0->R, dim 1 R->S0.
  expect_transitions(plan_on_2s(P({S0, S0}), P({R, S0})),
                     {{1, S0, R, {}}, {0, S0, R, {}}, {1, R, S0, {}}});
}

TEST(PlanTransitions, UndoingOnlyTheInnerShardIsOneStep) {
  expect_transitions(plan_on_2s(P({S0, S0}), P({S0, R})), {{1, S0, R, {}}});
}

TEST(PlanTransitions, WithoutShardsDimsGoOuterToInner) {
  expect_transitions(plan_on_2s(P({R, R}), P({S0, S1})), {{0, R, S0, {}}, {1, R, S1, {}}});
  expect_transitions(plan_on_2s(P({Psum, Psum}), P({R, R})), {{0, Psum, R, {}}, {1, Psum, R, {}}});
}

TEST(PlanTransitions, WithShardsNonShardTargetsGoInnerToOuter) {
  // The inner-to-outer pass emits every dim whose target is not a misaligned shard.
  expect_transitions(plan_on_2s(P({S0, S1}), P({R, R})), {{1, S1, R, {}}, {0, S0, R, {}}});
}

TEST(PlanTransitions, MovingAShardInwardReplicatesFirst) {
  // (S0,R) -> (R,S0): dim 1's target S0 is misaligned (dim 0 shards tensor dim 0 now but
  // not in the target), so its interim target is R, which it already is: no step. Dim 0
  // S0->R; then outer-to-inner dim 1 R->S0.
  expect_transitions(plan_on_2s(P({S0, R}), P({R, S0})), {{0, S0, R, {}}, {1, R, S0, {}}});
}

TEST(PlanTransitions, NestingUnderAnOuterShardReplicatesTheInnerFirst) {
  // (R,S0) -> (S0,S0): dim 1 S0 is misaligned (dim 0 R vs S0) -> S0->R; dim 0 R->S0;
  // then dim 1 R->S0.
  expect_transitions(plan_on_2s(P({R, S0}), P({S0, S0})),
                     {{1, S0, R, {}}, {0, R, S0, {}}, {1, R, S0, {}}});
}

TEST(PlanTransitions, ThreeDimNestedShard) {
  // (S0,S0,S0) -> (S0,R,S0): dim 2 target S0, outer dims sharding tensor dim 0 differ
  // ({0,1} now vs {0} in the target) -> S0->R; dim 1 S0->R; dim 0 unchanged;
  // then dim 2 R->S0.
  expect_transitions(plan_on_2s(P({S0, S0, S0}), P({S0, R, S0})),
                     {{2, S0, R, {}}, {1, S0, R, {}}, {2, R, S0, {}}});
}

TEST(PlanTransitions, ShardOfADifferentTensorDimIsNotMisaligned) {
  // (S0,S0) -> (R,S1): dim 1 targets S1; no outer dim shards tensor dim 1 before or after,
  // so it goes S0->S1 directly; then dim 0 S0->R.
  expect_transitions(plan_on_2s(P({S0, S0}), P({R, S1})), {{1, S0, S1, {}}, {0, S0, R, {}}});
}

TEST(PlanTransitions, AShardOnlyOnSizeOneMeshDimsSkipsTheMisalignmentPass) {
  // PyTorch's _gen_transform_infos runs the inner-to-outer pass only when
  // src_spec.num_shards > 1. Mesh [1, 4], (S0, P) -> (R, S0): num_shards = 1 (the Shard
  // is on the size-1 dim), so only the outer-to-inner pass runs: dim 0 S0->R, then dim 1
  // P->S0 (a reduce-scatter).
  const std::vector<int> one_by_four{1, 4};
  expect_transitions(plan_transitions(P({S0, Psum}), P({R, S0}), one_by_four),
                     {{0, S0, R, {}}, {1, Psum, S0, {}}});
  // With dim 0 of size 2, num_shards = 2 and the pass runs: dim 1's target S0 is
  // misaligned (dim 0 shards tensor dim 0 now, not in the target), so dim 1 first goes
  // P->R (an all-reduce), then dim 0 S0->R, then dim 1 R->S0.
  expect_transitions(plan_transitions(P({S0, Psum}), P({R, S0}), std::vector<int>{2, 4}),
                     {{1, Psum, R, {}}, {0, S0, R, {}}, {1, R, S0, {}}});
  // num_shards multiplies the sharded dims' sizes: (S0, S0) on [1, 4] is 4 shards, so the
  // reference example's three steps stand.
  expect_transitions(plan_transitions(P({S0, S0}), P({R, S0}), one_by_four),
                     {{1, S0, R, {}}, {0, S0, R, {}}, {1, R, S0, {}}});
  // ... and on [1, 1] it is one shard: one step, dim 0 S0->R.
  expect_transitions(plan_transitions(P({S0, S0}), P({R, S0}), std::vector<int>{1, 1}),
                     {{0, S0, R, {}}});
}

TEST(PlanTransitions, ImpossibleTransitionsArePlannedNotThrown) {
  expect_transitions(plan_on_2s(P({S0}), P({Psum})), {{0, S0, Psum, {}}});
  expect_transitions(plan_on_2s(P({R, Psum}), P({R, Pavg})), {{1, Psum, Pavg, {}}});
}

// ---- plan_redistribution: steps -----------------------------------------------------

TEST(Redistribution, StepsOnSizeOneMeshDimsArePlannedButRunNoCollective) {
  // Mesh [1, 4], 10x4 fp32 (S0, P) -> (R, S0): num_shards is 1, so no misalignment pass
  // (PlanTransitions above): dim 0 S0->R, then dim 1 P->S0. Dim 0 has one rank: the step
  // stays in the plan (DTensor's cost model prices it) but is no collective and moves
  // nothing. Dim 1 is a reduce-scatter of the whole 160 B into 4 chunks of ceil(10/4) = 3
  // rows (48 B): the busiest rank sends 3 x 48 = 144 B of a 4 x 48 = 192 B buffer.
  const auto plan = plan_redistribution(ten_by_four(P({S0, Psum})), P({R, S0}), DeviceMesh({1, 4}));
  expect_steps(plan, {{0, S0, R, Kind::none}, {1, Psum, S0, Kind::reduce_scatter}});
  EXPECT_EQ(plan.steps[0].bytes, 0);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 0);
  EXPECT_EQ(plan.steps[1].bytes, 144);
  EXPECT_EQ(plan.steps[1].buffer_bytes, 192);
  EXPECT_EQ(to_string(Kind::none), "none");
}

TEST(Redistribution, RecordsEndpoints) {
  const DeviceMesh mesh({2, 2});
  const auto plan = plan_redistribution(ten_by_four(P({S0, S0})), P({R, S0}), mesh);
  EXPECT_EQ(plan.from, P({S0, S0}));
  EXPECT_EQ(plan.to, P({R, S0}));
}

TEST(Redistribution, NothingToDo) {
  const DeviceMesh mesh({2, 2});
  const auto plan = plan_redistribution(ten_by_four(P({S0, R})), P({S0, R}), mesh);
  EXPECT_TRUE(plan.steps.empty());
  EXPECT_EQ(plan.total_bytes(), 0);
}

TEST(Redistribution, OneDimAllGather) {
  // 10x4 fp32 S(0) over 4 ranks: chunks of ceil(10/4)=3 rows, padded shard 3*4*4 = 48 B.
  // Ring all-gather: the busiest rank sends (4-1)*48 = 144 B; gathered buffer 4*48 = 192 B.
  const auto plan = plan_redistribution(ten_by_four(P({S0})), P({R}), DeviceMesh({4}));
  expect_steps(plan, {{0, S0, R, Kind::all_gather}});
  EXPECT_EQ(plan.steps[0].bytes, 144);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 192);
  EXPECT_EQ(plan.total_bytes(), 144);
}

TEST(Redistribution, OneDimAllGatherEven) {
  // 8x4 fp32 S(0) over 4: shard 2*4*4 = 32 B; sends 3*32 = 96 B; buffer 128 B = the tensor.
  const TensorSpec spec{{8, 4}, DType::fp32, P({S0})};
  const auto plan = plan_redistribution(spec, P({R}), DeviceMesh({4}));
  EXPECT_EQ(plan.steps.at(0).bytes, 96);
  EXPECT_EQ(plan.steps.at(0).buffer_bytes, 128);
}

TEST(Redistribution, OneDimReduceScatter) {
  // 10x4 fp32 P -> S(0) over 4: output chunk padded to 3 rows = 48 B.
  // Ring reduce-scatter: sends (4-1)*48 = 144 B; input buffer (padded) 4*48 = 192 B.
  const auto plan = plan_redistribution(ten_by_four(P({Psum})), P({S0}), DeviceMesh({4}));
  expect_steps(plan, {{0, Psum, S0, Kind::reduce_scatter}});
  EXPECT_EQ(plan.steps[0].bytes, 144);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 192);
}

TEST(Redistribution, OneDimReduceScatterBf16Columns) {
  // 6x8 bf16 P(avg) -> S(1) over 2: output 6x4 bf16 = 48 B; sends 1*48 = 48; buffer 96.
  const TensorSpec spec{{6, 8}, DType::bf16, P({Pavg})};
  const auto plan = plan_redistribution(spec, P({S1}), DeviceMesh({2}));
  expect_steps(plan, {{0, Pavg, S1, Kind::reduce_scatter}});
  EXPECT_EQ(plan.steps[0].bytes, 48);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 96);
}

TEST(Redistribution, OneDimAllReduce) {
  // 10x4 fp32 P -> R over 4: buffer 160 B, ring RS+AG sends 2(4-1)*ceil(160/4) = 6*40 = 240.
  const auto plan = plan_redistribution(ten_by_four(P({Psum})), P({R}), DeviceMesh({4}));
  expect_steps(plan, {{0, Psum, R, Kind::all_reduce}});
  EXPECT_EQ(plan.steps[0].bytes, 240);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 160);
}

TEST(Redistribution, OneDimAllReduceRoundsChunksUp) {
  // 5x5 fp32 = 100 B over 3: ceil(100/3) = 34 B chunks; sends 2*(3-1)*34 = 136 B.
  const TensorSpec spec{{5, 5}, DType::fp32, P({Pavg})};
  const auto plan = plan_redistribution(spec, P({R}), DeviceMesh({3}));
  EXPECT_EQ(plan.steps.at(0).bytes, 136);
  EXPECT_EQ(plan.steps.at(0).buffer_bytes, 100);
}

TEST(Redistribution, OneDimAllToAll) {
  // 8x12 fp32 S(0) -> S(1) over 4: local 2x12; each peer gets a 2 x ceil(12/4)=3 block =
  // 6*4 = 24 B; sends (4-1)*24 = 72 B; buffer 4*24 = 96 B (= the local piece).
  const TensorSpec spec{{8, 12}, DType::fp32, P({S0})};
  const auto plan = plan_redistribution(spec, P({S1}), DeviceMesh({4}));
  expect_steps(plan, {{0, S0, S1, Kind::all_to_all}});
  EXPECT_EQ(plan.steps[0].bytes, 72);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 96);
}

TEST(Redistribution, OneDimAllToAllUneven) {
  // 10x6 fp32 S(0) -> S(1) over 4: local (padded) 3x6; block 3 x ceil(6/4)=2 = 24 B;
  // sends 3*24 = 72 B; buffer 4*24 = 96 B.
  const TensorSpec spec{{10, 6}, DType::fp32, P({S0})};
  const auto plan = plan_redistribution(spec, P({S1}), DeviceMesh({4}));
  EXPECT_EQ(plan.steps.at(0).bytes, 72);
  EXPECT_EQ(plan.steps.at(0).buffer_bytes, 96);
}

TEST(Redistribution, LocalChunkMovesNothing) {
  const auto plan = plan_redistribution(ten_by_four(P({R})), P({S0}), DeviceMesh({4}));
  expect_steps(plan, {{0, R, S0, Kind::local_chunk}});
  EXPECT_EQ(plan.steps[0].bytes, 0);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 0);
  EXPECT_EQ(plan.total_bytes(), 0);
}

TEST(Redistribution, LocalPartialMovesNothing) {
  const auto plan = plan_redistribution(ten_by_four(P({R})), P({Pavg}), DeviceMesh({4}));
  expect_steps(plan, {{0, R, Pavg, Kind::local_partial}});
  EXPECT_EQ(plan.steps[0].bytes, 0);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 0);
}

TEST(Redistribution, ReferenceExampleThreeSteps) {
  // 2x2 mesh, 10x4 fp32, (S0,S0) -> (R,S0):
  //  1. dim 1 S0->R all-gather: rank 0 holds ceil(ceil(10/2)/2)=3 rows = 48 B; n=2:
  //     sends 1*48 = 48 B, buffer 2*48 = 96 B.
  //  2. dim 0 S0->R all-gather of (S0,R): 5 rows = 80 B; sends 80 B, buffer 160 B.
  //  3. dim 1 R->S0 local chunk: 0 B.
  const auto plan = plan_redistribution(ten_by_four(P({S0, S0})), P({R, S0}), DeviceMesh({2, 2}));
  expect_steps(
      plan,
      {{1, S0, R, Kind::all_gather}, {0, S0, R, Kind::all_gather}, {1, R, S0, Kind::local_chunk}});
  EXPECT_EQ(plan.steps[0].bytes, 48);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 96);
  EXPECT_EQ(plan.steps[1].bytes, 80);
  EXPECT_EQ(plan.steps[1].buffer_bytes, 160);
  EXPECT_EQ(plan.steps[2].bytes, 0);
  EXPECT_EQ(plan.total_bytes(), 128);
}

TEST(Redistribution, InnerAllGatherOfNestedShard) {
  // 2x4 mesh, 10x4 fp32, (S0,S0) -> (S0,R): one all-gather on dim 1. Rank 0 holds
  // ceil(ceil(10/2)/4) = 2 rows = 32 B; sends (4-1)*32 = 96 B; buffer 4*32 = 128 B.
  const auto plan = plan_redistribution(ten_by_four(P({S0, S0})), P({S0, R}), DeviceMesh({2, 4}));
  expect_steps(plan, {{1, S0, R, Kind::all_gather}});
  EXPECT_EQ(plan.steps[0].bytes, 96);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 128);
}

TEST(Redistribution, ReplicateToTwoShardsIsTwoLocalChunks) {
  const TensorSpec spec{{6, 8}, DType::fp32, P({R, R})};
  const auto plan = plan_redistribution(spec, P({S0, S1}), DeviceMesh({2, 4}));
  expect_steps(plan, {{0, R, S0, Kind::local_chunk}, {1, R, S1, Kind::local_chunk}});
  EXPECT_EQ(plan.total_bytes(), 0);
}

TEST(Redistribution, TwoPartialsToReplicateIsTwoAllReduces) {
  // 2x2 mesh, 10x4 fp32 (160 B, unsharded): each all-reduce over 2 ranks sends
  // 2*(2-1)*ceil(160/2) = 160 B; total 320 B.
  const auto plan =
      plan_redistribution(ten_by_four(P({Psum, Psum})), P({R, R}), DeviceMesh({2, 2}));
  expect_steps(plan, {{0, Psum, R, Kind::all_reduce}, {1, Psum, R, Kind::all_reduce}});
  EXPECT_EQ(plan.steps[0].bytes, 160);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 160);
  EXPECT_EQ(plan.steps[1].bytes, 160);
  EXPECT_EQ(plan.total_bytes(), 320);
}

TEST(Redistribution, ShardDimChangeOnOuterMeshDimIsAllToAll) {
  // 2x2 mesh, 10x4 fp32, (S0,R) -> (S1,R): dim 0 all-to-all over 2 ranks. Local 5x4;
  // block 5 x ceil(4/2)=2 = 40 B; sends 1*40 = 40 B; buffer 2*40 = 80 B.
  const auto plan = plan_redistribution(ten_by_four(P({S0, R})), P({S1, R}), DeviceMesh({2, 2}));
  expect_steps(plan, {{0, S0, S1, Kind::all_to_all}});
  EXPECT_EQ(plan.steps[0].bytes, 40);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 80);
}

TEST(Redistribution, TwoShardsToReplicateGathersInnerFirst) {
  // 2x4 mesh, 6x8 fp32, (S0,S1) -> (R,R):
  //  dim 1 S1->R: rank 0 holds 3x2 = 24 B; sends 3*24 = 72 B, buffer 96 B.
  //  dim 0 S0->R: rank 0 holds 3x8 = 96 B; sends 1*96 = 96 B, buffer 192 B. Total 168 B.
  const TensorSpec spec{{6, 8}, DType::fp32, P({S0, S1})};
  const auto plan = plan_redistribution(spec, P({R, R}), DeviceMesh({2, 4}));
  expect_steps(plan, {{1, S1, R, Kind::all_gather}, {0, S0, R, Kind::all_gather}});
  EXPECT_EQ(plan.steps[0].bytes, 72);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 96);
  EXPECT_EQ(plan.steps[1].bytes, 96);
  EXPECT_EQ(plan.steps[1].buffer_bytes, 192);
  EXPECT_EQ(plan.total_bytes(), 168);
}

TEST(Redistribution, PartialToNestedShard) {
  // 2x2 mesh, 10x4 fp32, (P,S0) -> (S0,S0):
  //  dim 1 S0->R (misaligned: dim 0 P now, S0 in the target): dim 0 does not shard, so
  //    rank 0 holds ceil(10/2) = 5 rows = 80 B; sends 1*80 = 80 B, buffer 160 B.
  //  dim 0 P->S0 reduce-scatter: output (S0,R) 5 rows = 80 B; sends 80 B, buffer 160 B.
  //  dim 1 R->S0: local. Total 160 B.
  const auto plan =
      plan_redistribution(ten_by_four(P({Psum, S0})), P({S0, S0}), DeviceMesh({2, 2}));
  expect_steps(plan, {{1, S0, R, Kind::all_gather},
                      {0, Psum, S0, Kind::reduce_scatter},
                      {1, R, S0, Kind::local_chunk}});
  EXPECT_EQ(plan.steps[0].bytes, 80);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 160);
  EXPECT_EQ(plan.steps[1].bytes, 80);
  EXPECT_EQ(plan.steps[1].buffer_bytes, 160);
  EXPECT_EQ(plan.total_bytes(), 160);
}

TEST(Redistribution, PartialsWithoutShardsGoOuterToInner) {
  // 2x2 mesh, 10x4 fp32, (R,P) -> (S0,S0): no Shard in the source, so only the
  // outer-to-inner pass: dim 0 R->S0 (local), dim 1 P->S0 reduce-scatter whose output is
  // (S0,S0): 3 rows = 48 B; sends 48 B, buffer 96 B.
  const auto plan = plan_redistribution(ten_by_four(P({R, Psum})), P({S0, S0}), DeviceMesh({2, 2}));
  expect_steps(plan, {{0, R, S0, Kind::local_chunk}, {1, Psum, S0, Kind::reduce_scatter}});
  EXPECT_EQ(plan.steps[1].bytes, 48);
  EXPECT_EQ(plan.steps[1].buffer_bytes, 96);
}

TEST(Redistribution, AllReduceOfAShardedPartial) {
  // 2x2 mesh, 10x4 fp32, (S0,P) -> (R,R):
  //  dim 1 P->R all-reduce of the 5x4 = 80 B piece: 2*(2-1)*40 = 80 B, buffer 80 B.
  //  dim 0 S0->R all-gather of 80 B: sends 80 B, buffer 160 B.
  const auto plan = plan_redistribution(ten_by_four(P({S0, Psum})), P({R, R}), DeviceMesh({2, 2}));
  expect_steps(plan, {{1, Psum, R, Kind::all_reduce}, {0, S0, R, Kind::all_gather}});
  EXPECT_EQ(plan.steps[0].bytes, 80);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 80);
  EXPECT_EQ(plan.steps[1].bytes, 80);
  EXPECT_EQ(plan.steps[1].buffer_bytes, 160);
  EXPECT_EQ(plan.total_bytes(), 160);
}

TEST(Redistribution, BytesScaleWithDtype) {
  // Same all-gather as OneDimAllGather in bf16: shard 3*4*2 = 24 B; sends 72 B.
  const TensorSpec spec{{10, 4}, DType::bf16, P({S0})};
  EXPECT_EQ(plan_redistribution(spec, P({R}), DeviceMesh({4})).total_bytes(), 72);
}

TEST(Redistribution, TotalBytesSumsSteps) {
  Redistribution plan{P({R}), P({R}), {}};
  EXPECT_EQ(plan.total_bytes(), 0);
  plan.steps.push_back({0, S0, R, Kind::all_gather, 100, 200});
  plan.steps.push_back({1, Psum, R, Kind::all_reduce, 7, 8});
  plan.steps.push_back({1, R, S0, Kind::local_chunk, 0, 0});
  EXPECT_EQ(plan.total_bytes(), 107);
}

TEST(Redistribution, ThreeDimNestedShardBytes) {
  // 2x2x2 mesh, 16x4 fp32, (S0,S0,S0) -> (S0,R,S0):
  //  dim 2 S0->R all-gather: rank 0 holds 16/2/2/2 = 2 rows = 32 B; sends 32 B, buffer 64 B.
  //  dim 1 S0->R all-gather of (S0,S0,R): 4 rows = 64 B; sends 64 B, buffer 128 B.
  //  dim 2 R->S0: local. Total 96 B.
  const TensorSpec spec{{16, 4}, DType::fp32, P({S0, S0, S0})};
  const auto plan = plan_redistribution(spec, P({S0, R, S0}), DeviceMesh({2, 2, 2}));
  expect_steps(
      plan,
      {{2, S0, R, Kind::all_gather}, {1, S0, R, Kind::all_gather}, {2, R, S0, Kind::local_chunk}});
  EXPECT_EQ(plan.steps[0].bytes, 32);
  EXPECT_EQ(plan.steps[0].buffer_bytes, 64);
  EXPECT_EQ(plan.steps[1].bytes, 64);
  EXPECT_EQ(plan.steps[1].buffer_bytes, 128);
  EXPECT_EQ(plan.total_bytes(), 96);
}

// Over every pair of placement lists drawn from {R, S0, S1, P(sum), P(avg)}: the steps
// chain (each starts where the previous change on that mesh dim left it), never repeat a
// placement, end at the target, touch a mesh dim at most twice, and the plan is
// impossible exactly when some mesh dim asks for S -> P or P(a) -> P(b) (the infinite
// rows of the reference's transition table).
TEST(Redistribution, EveryPairOnTwoAndThreeDimMeshes) {
  const std::vector<Placement> options = {R, S0, S1, Psum, Pavg};
  for (const DeviceMesh& mesh : {DeviceMesh({2, 2}), DeviceMesh({2, 3}), DeviceMesh({2, 2, 2}),
                                 DeviceMesh({1, 2}), DeviceMesh({2, 1, 2})}) {
    const int nd = mesh.ndim();
    int combos = 1;
    for (int d = 0; d < nd; ++d) combos *= static_cast<int>(options.size());
    const auto decode = [&](int code) {
      Placements out;
      for (int d = 0; d < nd; ++d, code /= static_cast<int>(options.size()))
        out.push_back(options[code % options.size()]);
      return out;
    };
    for (int a = 0; a < combos; ++a) {
      for (int b = 0; b < combos; ++b) {
        const Placements src = decode(a), dst = decode(b);
        const std::string label = to_string(src) + " -> " + to_string(dst);
        bool impossible = false;
        for (int d = 0; d < nd; ++d) {
          impossible |= src[d].is_shard() && dst[d].is_partial();
          impossible |= src[d].is_partial() && dst[d].is_partial() && src[d] != dst[d];
        }
        const TensorSpec spec{{12, 12}, DType::fp32, src};
        if (impossible) {
          EXPECT_THROW(plan_redistribution(spec, dst, mesh), InvalidArgument) << label;
          continue;
        }
        Redistribution plan;
        ASSERT_NO_THROW(plan = plan_redistribution(spec, dst, mesh)) << label;
        Placements current = src;
        std::vector<int> touched(nd, 0);
        for (const auto& step : plan.steps) {
          ASSERT_GE(step.mesh_dim, 0) << label;
          ASSERT_LT(step.mesh_dim, nd) << label;
          EXPECT_EQ(step.from, current[step.mesh_dim]) << label;
          EXPECT_NE(step.from, step.to) << label;
          if (mesh.size(step.mesh_dim) == 1)
            EXPECT_EQ(step.collective, Kind::none) << label;
          else
            EXPECT_EQ(transition_collective(step.from, step.to), step.collective) << label;
          const bool local = step.collective == Kind::local_chunk ||
                             step.collective == Kind::local_partial ||
                             step.collective == Kind::none;
          EXPECT_EQ(local, step.bytes == 0) << label;
          EXPECT_EQ(local, step.buffer_bytes == 0) << label;
          current[step.mesh_dim] = step.to;
          ++touched[step.mesh_dim];
        }
        EXPECT_EQ(current, dst) << label;
        for (int d = 0; d < nd; ++d) EXPECT_LE(touched[d], 2) << label << " mesh dim " << d;
        if (src == dst) {
          EXPECT_TRUE(plan.steps.empty()) << label;
        }
      }
    }
  }
}

// ---- plan_redistribution: errors ----------------------------------------------------

TEST(Redistribution, ShardToPartialThrowsNamingTheMeshDim) {
  const auto e = thrown<InvalidArgument>(
      [] { plan_redistribution(ten_by_four(P({S0})), P({Psum}), DeviceMesh({4})); });
  EXPECT_NE(e.message().find("mesh dim 0"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("S(0)"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("P(sum)"), std::string::npos) << e.message();
}

TEST(Redistribution, ChangingPartialOpThrowsNamingTheMeshDim) {
  const auto e = thrown<InvalidArgument>([] {
    plan_redistribution(ten_by_four(P({R, Psum})), P({R, Pavg}), DeviceMesh({2, 2}));
  });
  EXPECT_NE(e.message().find("mesh dim 1"), std::string::npos) << e.message();
  EXPECT_NE(e.message().find("P(avg)"), std::string::npos) << e.message();
}

TEST(Redistribution, ShardToPartialOnInnerDimOfTwoDimMesh) {
  const auto e = thrown<InvalidArgument>([] {
    plan_redistribution(ten_by_four(P({R, S0})), P({R, Pavg}), DeviceMesh({2, 2}));
  });
  EXPECT_NE(e.message().find("mesh dim 1"), std::string::npos) << e.message();
}

TEST(Redistribution, ReplicateToPartialIsAllowed) {
  EXPECT_NO_THROW(plan_redistribution(ten_by_four(P({S0, R})), P({S0, Psum}), DeviceMesh({2, 2})));
}

TEST(Redistribution, SourceWithWrongPlacementCountThrows) {
  const auto e = thrown<InvalidArgument>([] {
    plan_redistribution(ten_by_four(P({S0})), P({R, R}), DeviceMesh({2, 2}));
  });
  EXPECT_NE(e.where().find("source"), std::string::npos) << e.where();
}

TEST(Redistribution, TargetWithWrongPlacementCountThrows) {
  const auto e = thrown<InvalidArgument>([] {
    plan_redistribution(ten_by_four(P({S0, R})), P({R}), DeviceMesh({2, 2}));
  });
  EXPECT_NE(e.where().find("target"), std::string::npos) << e.where();
}

TEST(Redistribution, TargetShardBeyondRankThrows) {
  const auto e = thrown<InvalidArgument>([] {
    plan_redistribution(ten_by_four(P({S0, R})), P({S0, Placement::shard(2)}), DeviceMesh({2, 2}));
  });
  EXPECT_NE(e.where().find("target"), std::string::npos) << e.where();
}

}  // namespace
}  // namespace symmesh
