// The replica and data-parallel Programs of a training step
// (strategies/training_step_program.hpp): their ops counted by hand, where their ranks sit,
// and what they refuse.
#include "strategies/training_step_program.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"

namespace symmesh::strategies {
namespace {

// The model of tests/evaluation/model_throughput_test.cpp with 4 layers: a layer has
// 36,992 parameters (worked there), the embedding and output projection 256 x 64 each.
TransformerSpec small_model() {
  TransformerSpec m;
  m.layers = 4;
  m.hidden = 64;
  m.heads = 4;
  m.kv_heads = 2;
  m.head_dim = 16;
  m.ffn = 128;
  m.vocab = 256;
  m.seq = 32;
  m.global_batch = 8;
  return m;
}

// Nodes of 8 GPUs: all the programs take from a cluster.
ClusterSpec h100_nodes() {
  ClusterSpec c;
  c.name = "eight per node";
  c.nodes = 1;
  c.gpus_per_node = 8;
  return c;
}

int64_t stream_ops(const Program& p, int rank, const std::string& name) {
  for (const Stream& s : p.streams(rank))
    if (s.name == name) return static_cast<int64_t>(s.ops.size());
  return 0;
}

int64_t matmuls_on(const Program& p, int rank) {
  int64_t n = 0;
  for (const Stream& s : p.streams(rank))
    for (const StreamOp& op : s.ops) n += op.kind() == StreamOp::Kind::matmul ? 1 : 0;
  return n;
}

TEST(TrainingStepProgram, TwentyTwoMatmulsPerLayerAndMicroBatch) {
  // tp 2, pp 2, dp 4, micro-batch 1: 8 / 4 = 2 micro-batches, 2 layers per stage. A layer's
  // forward has 7 GEMMs (qkv, scores, context, out, gate, up, down) and its backward 15
  // (a data and a weight gradient for each of the 5 linears, FlashAttention's 5 products):
  // the 22 per layer the issue counts. The last stage adds the logits and their 2 gradients.
  const TrainingLayout layout{2, 2, 4, 1, 1, Recompute::none, 1};
  const ReplicaProgram r = replica_program(small_model(), 8, h100_nodes(), layout);
  EXPECT_EQ(r.micro_batches, 2);
  EXPECT_EQ(r.chunk_layers, (std::vector<int64_t>{2, 2}));
  // Stage blocks of tp·dp = 8 ranks fill a node: stage 1's first rank starts node 1.
  EXPECT_EQ(r.stage_first_rank, (std::vector<int>{0, 8}));
  EXPECT_EQ(r.program.world_size(), 10);
  EXPECT_EQ(r.nodes, 2);
  for (int rank : {0, 1}) EXPECT_EQ(matmuls_on(r.program, rank), 2 * 2 * 22);
  for (int rank : {8, 9}) EXPECT_EQ(matmuls_on(r.program, rank), 2 * 2 * 22 + 2 * 3);
  // Tensor-parallel collectives per layer and micro-batch: 2 all-gathers and 2
  // reduce-scatters each way (8); the last stage's logits add one each way per micro-batch.
  EXPECT_EQ(r.program.collectives().size(), static_cast<size_t>(2 * (2 * 2 * 8) + 2 * 2));
  // Sends: each micro-batch's activations forward from stage 0, its gradients back from
  // stage 1 (an event wait and a put each).
  for (int rank : {0, 1, 8, 9}) EXPECT_EQ(stream_ops(r.program, rank, "send"), 2 * 2);
}

TEST(TrainingStepProgram, FullRecomputationRunsTheForwardAgain) {
  const TrainingLayout layout{2, 2, 4, 1, 1, Recompute::full, 1};
  const ReplicaProgram r = replica_program(small_model(), 8, h100_nodes(), layout);
  // 7 more GEMMs per layer and micro-batch, and its 2 all-gathers.
  for (int rank : {0, 1}) EXPECT_EQ(matmuls_on(r.program, rank), 2 * 2 * 29);
  EXPECT_EQ(r.program.collectives().size(), static_cast<size_t>(2 * (2 * 2 * 10) + 2 * 2));
}

TEST(TrainingStepProgram, StagesShareANodeWhenTheirBlocksDo) {
  // tp 2, dp 1: Megatron's stage s of replica 0 starts at rank 2·s, on the same node.
  const TrainingLayout layout{2, 4, 1, 2, 1, Recompute::none, 0};
  const ReplicaProgram r = replica_program(small_model(), 8, h100_nodes(), layout);
  EXPECT_EQ(r.stage_first_rank, (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(r.nodes, 1);
  EXPECT_EQ(r.micro_batches, 4);
}

TEST(TrainingStepProgram, InterleavedChunksSendAroundTheRing) {
  // pp 2, v 2: model chunks 0..3 on stages 0, 1, 0, 1. With m = 2 micro-batches, stage 0
  // sends forward chunk 0 and (as stage 0 of chunk 2) chunk 2: 4 activations; backward it
  // sends chunk 2's gradients to stage 1's chunk 1: 2. Stage 1 sends chunk 1 forward (2) and
  // chunks 3 and 1 backward (4).
  const TrainingLayout layout{1, 2, 4, 1, 2, Recompute::none, 1};
  const ReplicaProgram r = replica_program(small_model(), 8, h100_nodes(), layout);
  EXPECT_EQ(r.chunk_layers, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(r.stage_first_rank, (std::vector<int>{0, 4}));  // tp·dp = 4 < 8: stride 4
  EXPECT_EQ(stream_ops(r.program, 0, "send"), 2 * (4 + 2));
  EXPECT_EQ(stream_ops(r.program, 4, "send"), 2 * (2 + 4));
}

TEST(TrainingStepProgram, DataParallelRingOfTheFullestStage) {
  // pp 2, tp 2: 2 layers x 36,992 / 2 + the 256 x 64 / 2 table = 45,184 parameters per rank;
  // fp32 gradients 180,736 bytes, bf16 weights 90,368. Tensor rank t's ring is Megatron's
  // ranks t + 2·d: two rings of 4 on one node.
  const TrainingLayout layout{2, 2, 4, 1, 1, Recompute::none, 1};
  const DataParallelProgram d = data_parallel_program(small_model(), 8, layout);
  EXPECT_DOUBLE_EQ(d.parameters, 45'184);
  EXPECT_EQ(d.gradient_bytes, 180'736);
  EXPECT_EQ(d.weight_bytes, 90'368);
  EXPECT_EQ(d.nodes, 1);
  ASSERT_EQ(d.program.collectives().size(), 4u);
  EXPECT_EQ(d.program.collectives()[0].op, CollectiveOp::reduce_scatter);
  EXPECT_EQ(d.program.collectives()[1].op, CollectiveOp::all_gather);
  EXPECT_EQ(d.program.group(d.program.collectives()[0].group).ranks,
            (std::vector<int>{0, 2, 4, 6}));
  EXPECT_EQ(d.program.group(d.program.collectives()[2].group).ranks,
            (std::vector<int>{1, 3, 5, 7}));
  // ZeRO 0 all-reduces the gradients, and gathers nothing.
  const DataParallelProgram plain =
      data_parallel_program(small_model(), 8, {2, 2, 4, 1, 1, Recompute::none, 0});
  ASSERT_EQ(plain.program.collectives().size(), 2u);
  EXPECT_EQ(plain.program.collectives()[0].op, CollectiveOp::all_reduce);
  EXPECT_EQ(plain.weight_bytes, 0);
}

TEST(TrainingStepProgram, OpCountScalesFromTheSmallestSchedule) {
  // replica_stream_ops counts a schedule of pp micro-batches and scales it: it must equal the
  // ops of the whole Program written out. Here 8 micro-batches on 2 stages; 8 on 2 stages of
  // 2 chunks with recomputation; 4 on 1 stage (dp 2); 8 on 3 stages (not a multiple of 3).
  for (const TrainingLayout& layout : {TrainingLayout{2, 2, 1, 1, 1, Recompute::none, 0},
                                       TrainingLayout{1, 2, 1, 1, 2, Recompute::full, 0},
                                       TrainingLayout{2, 1, 2, 1, 1, Recompute::none, 1},
                                       TrainingLayout{1, 3, 1, 1, 1, Recompute::none, 0}}) {
    const ReplicaProgram whole = replica_program(small_model(), 8, h100_nodes(), layout);
    EXPECT_EQ(replica_stream_ops(small_model(), 8, h100_nodes(), layout),
              whole.program.counts().stream_ops)
        << to_string(layout);
  }
}

TEST(TrainingStepProgram, RefusesLayoutsTheClosedFormRefuses) {
  const TransformerSpec m = small_model();
  // Virtual stages without a pipeline.
  EXPECT_THROW(replica_program(m, 8, h100_nodes(), {1, 1, 1, 1, 2, Recompute::none, 0}),
               InvalidArgument);
  // dp x micro-batch not dividing the batch; tp not dividing the kv heads.
  EXPECT_THROW(replica_program(m, 8, h100_nodes(), {1, 1, 3, 1, 1, Recompute::none, 0}),
               InvalidArgument);
  EXPECT_THROW(replica_program(m, 8, h100_nodes(), {4, 1, 1, 1, 1, Recompute::none, 0}),
               InvalidArgument);
}

}  // namespace
}  // namespace symmesh::strategies
