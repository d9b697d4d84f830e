// The closed-form training step (strategies/training_step_estimate.hpp), its parts worked by
// hand: the memory of the fullest stage, the pipeline bubble, sequence parallelism's
// collectives, ZeRO's divisions, the layouts refused, and the search's order.
#include "strategies/training_step_estimate.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"

namespace symmesh::strategies {
namespace {

// Round figures so that hand computation is easy: 1000 TFLOP/s bf16, 2 TB/s HBM, 80 GiB;
// 100 GB/s inside a node, 50 GB/s per NIC between nodes (one per GPU), no latencies.
ClusterSpec round_cluster() {
  ClusterSpec c;
  c.name = "round";
  c.nodes = 1;
  c.gpus_per_node = 8;
  c.gpu.name = "gpu";
  c.gpu.peak_flops_per_s["bf16"] = 1e15;
  c.gpu.memory_capacity_bytes = 80.0 * (1 << 30);
  c.gpu.memory_bandwidth_bytes_per_s = 2e12;
  c.intra_node = {"nvswitch", 100e9, 0};
  c.inter_node = {"rail", 8, 50e9, 0};
  return c;
}

// Llama 3.1 405B (scenarios/models/llama3.1-405b.json).
TransformerSpec llama405b() {
  TransformerSpec s;
  s.layers = 126;
  s.hidden = 16384;
  s.heads = 128;
  s.kv_heads = 8;
  s.head_dim = 128;
  s.ffn = 53248;
  s.vocab = 128256;
  s.seq = 8192;
  return s;
}

TEST(TrainingStepEstimate, MemoryOfTheFullestStageByHand) {
  // Meta's 8,192-GPU layout: TP 8, PP 16, DP 64, one sequence per micro-batch, ZeRO-1.
  const TrainingLayout l{8, 16, 64, 1, 1, Recompute::none, 1};
  const TrainingEstimate e = estimate_training_step(llama405b(), 2048, round_cluster(), l);
  // Parameters on a GPU of a middle-sized stage: ceil(126/16) = 8 layers of 3,187,703,808
  // over tp 8 = 3,187,703,808, plus a vocabulary table 128256 x 16384 / 8 = 262,668,288:
  // 3,450,372,096. Bf16 weights 2 B each, fp32 gradients 4 B, Adam's 12 B over dp 64.
  EXPECT_DOUBLE_EQ(e.memory.weights_bytes, 6'900'744'192.0);
  EXPECT_DOUBLE_EQ(e.memory.gradients_bytes, 13'801'488'384.0);
  EXPECT_DOUBLE_EQ(e.memory.optimizer_bytes, 646'944'768.0);
  // Activations. One layer of one micro-batch (s 8192, b 1) on one of tp 8 ranks, sequence
  // parallel, FlashAttention (Korthikanti's selective count): the norms' inputs and outputs
  // 4 x 134,217,728 x 2 B / 8 = 134,217,728; Q and W_o's input 2 x 134,217,728, K and V
  // 2 x 8,388,608, SwiGLU 3 x 436,207,616 elements, x 2 B / 8 = 398,458,880; softmax
  // statistics 8192 x 128 / 8 x 4 B = 524,288. Sum 533,200,896 B.
  // The first stage has 7 layers (16 stages x 8 = 128: the first and last give one up) and
  // min(m = 2048 / 64 = 32, p = 16) = 16 micro-batches in flight: x 112 = 59,718,500,352.
  // Logits 8192 x 128256 / 8 in bf16 and fp32: 788,004,864. Total 60,506,505,216 B.
  EXPECT_DOUBLE_EQ(e.memory.activations_bytes, 60'506'505'216.0);
  // 6.90 + 13.80 + 0.65 + 60.51 = 81.86e9 B = 76.2 GiB: within 80 GiB.
  EXPECT_TRUE(e.fits);
  EXPECT_EQ(e.micro_batches, 32);
}

TEST(TrainingStepEstimate, ZeroStagesDivideWhatTheyShard) {
  TransformerSpec s = llama405b();
  s.layers = 8;
  const ClusterSpec c = round_cluster();
  const auto at = [&](int zero) {
    return estimate_training_step(s, 64, c, {8, 1, 4, 1, 1, Recompute::full, zero}).memory;
  };
  const TrainingMemory z0 = at(0), z1 = at(1), z2 = at(2), z3 = at(3);
  EXPECT_DOUBLE_EQ(z1.optimizer_bytes, z0.optimizer_bytes / 4);
  EXPECT_DOUBLE_EQ(z1.gradients_bytes, z0.gradients_bytes);
  EXPECT_DOUBLE_EQ(z2.gradients_bytes, z0.gradients_bytes / 4);
  EXPECT_DOUBLE_EQ(z2.weights_bytes, z0.weights_bytes);
  EXPECT_DOUBLE_EQ(z3.weights_bytes, z0.weights_bytes / 4);
  EXPECT_DOUBLE_EQ(z3.activations_bytes, z0.activations_bytes);
}

TEST(TrainingStepEstimate, TheOptimizerStepMovesAdamsBytesByHand) {
  // 8 layers of 405B on tp 8, pp 1. A layer holds h·(q + 2k) + q·h + 3·h·f + 2h =
  // 16384 x (18432 + 16384 + 159744 + 2) = 3,187,703,808 parameters; 8 of them 25,501,630,464,
  // with the embedding and the (untied) output projection, 2 x 128256 x 16384 =
  // 4,202,692,608: 29,704,323,072, of which a tensor rank holds 3,713,040,384.
  // Mixed-precision Adam reads the fp32 gradient, master weight, momentum and variance and
  // writes the last three (28 B), then copies the master into the bf16 weight (6 B): 34 B
  // per parameter, 126,243,373,056 B at 2 TB/s = 63.121686528 ms, and two launches of 5 us.
  TransformerSpec s = llama405b();
  s.layers = 8;
  const ClusterSpec c = round_cluster();
  const TrainingEstimate z0 = estimate_training_step(s, 64, c, {8, 1, 4, 1, 1, Recompute::full, 0});
  EXPECT_NEAR(z0.optimizer_s, 0.063121686528 + 10e-6, 1e-12);
  // ZeRO-1 over dp 4: each rank updates a quarter, 15.780421632 ms of traffic.
  const TrainingEstimate z1 = estimate_training_step(s, 64, c, {8, 1, 4, 1, 1, Recompute::full, 1});
  EXPECT_NEAR(z1.optimizer_s, 0.015780421632 + 10e-6, 1e-12);
  // It is not hidden: the step is the pipeline, the exposed data-parallel time and it.
  const double stage = z1.stage_compute_s + z1.stage_tp_comm_s + z1.stage_p2p_s;
  EXPECT_NEAR(z1.step_s, z1.micro_batches * stage + z1.dp_exposed_s + z1.optimizer_s,
              1e-12 * z1.step_s);
}

TEST(TrainingStepEstimate, DataParallelOverlapByHand) {
  // One gradient collective of 3 s, one weight gather of 2 s, a micro-batch's forward of
  // 1 s and backward of 4 s, m = 5 micro-batches.
  //   ZeRO 0: one all-reduce under the last backward: 3 s, none exposed.
  //   ZeRO-1: one reduce-scatter (3 s, hidden) and one gather under the first forward
  //           (2 - 1 = 1 s exposed): 5 s moved, 1 s exposed.
  //   ZeRO-2: a reduce-scatter per micro-batch (5 x 3 s, hidden) and the gather: 17 s, 1 s.
  //   ZeRO-3: per micro-batch a gather under the forward (2 - 1 = 1 s exposed) and, under
  //           the backward, a gather and the reduce-scatter one after the other on the same
  //           links (2 + 3 - 4 = 1 s exposed): 5 x (2 + 2 + 3) = 35 s moved, 5 x 2 = 10 s
  //           exposed. (Against the whole backward each, the 1 s would have been hidden.)
  const auto dp = [](int zero) { return data_parallel_time(zero, 5, 3, 2, 1, 4); };
  EXPECT_DOUBLE_EQ(dp(0).comm_s, 3);
  EXPECT_DOUBLE_EQ(dp(0).exposed_s, 0);
  EXPECT_DOUBLE_EQ(dp(1).comm_s, 5);
  EXPECT_DOUBLE_EQ(dp(1).exposed_s, 1);
  EXPECT_DOUBLE_EQ(dp(2).comm_s, 17);
  EXPECT_DOUBLE_EQ(dp(2).exposed_s, 1);
  EXPECT_DOUBLE_EQ(dp(3).comm_s, 35);
  EXPECT_DOUBLE_EQ(dp(3).exposed_s, 10);
}

TEST(TrainingStepEstimate, TheBubbleIsPMinusOneOverVM) {
  TransformerSpec s = llama405b();
  s.layers = 16;
  const ClusterSpec c = round_cluster();
  // 64 sequences over dp 1 at micro-batch 1: m = 64. p = 4: bubble 3/64; v = 2: 3/128.
  const TrainingEstimate plain =
      estimate_training_step(s, 64, c, {2, 4, 1, 1, 1, Recompute::full, 0});
  const TrainingEstimate two =
      estimate_training_step(s, 64, c, {2, 4, 1, 1, 2, Recompute::full, 0});
  EXPECT_DOUBLE_EQ(plain.bubble_fraction, 3.0 / 64);
  EXPECT_DOUBLE_EQ(two.bubble_fraction, 3.0 / 128);
  // The pipeline's time is (m + (p-1)/v) stage times, the bubble its (p-1)/v of them; dp 1
  // has nothing to reduce; the optimizer step follows.
  const double stage = plain.stage_compute_s + plain.stage_tp_comm_s + plain.stage_p2p_s;
  EXPECT_NEAR(plain.step_s, (64 + 3.0) * stage + plain.optimizer_s, 1e-12 * plain.step_s);
  EXPECT_NEAR(plain.bubble_s, 3.0 * stage, 1e-12 * plain.step_s);
  EXPECT_DOUBLE_EQ(plain.dp_exposed_s, 0.0);
  // Interleaving sends twice as often between stages.
  EXPECT_DOUBLE_EQ(two.stage_p2p_s, 2 * plain.stage_p2p_s);
  // No pipeline, no bubble.
  EXPECT_DOUBLE_EQ(
      estimate_training_step(s, 64, c, {2, 1, 4, 1, 1, Recompute::full, 0}).bubble_fraction, 0.0);
}

TEST(TrainingStepEstimate, SequenceParallelCollectivesByHand) {
  // 4 layers, hidden 1024, seq 1024, one sequence: T = 1024 tokens. With tp 2 each layer
  // all-gathers twice and reduce-scatters twice the [T, h] activation forward, and as many
  // backward; a ring step moves the chunk T·h/t x 2 B = 1,048,576 B once over 100 GB/s:
  // 10.48576 us, x 8 per layer, x 4 layers = 335.54432 us. Full recomputation gathers
  // twice more per layer: x 10 per layer = 419.4304 us.
  TransformerSpec s;
  s.layers = 4;
  s.hidden = 1024;
  s.heads = 8;
  s.kv_heads = 8;
  s.head_dim = 128;
  s.ffn = 4096;
  s.vocab = 1000;
  s.seq = 1024;
  const ClusterSpec c = round_cluster();
  EXPECT_NEAR(estimate_training_step(s, 4, c, {2, 1, 4, 1, 1, Recompute::none, 0}).stage_tp_comm_s,
              335.54432e-6, 1e-12);
  EXPECT_NEAR(estimate_training_step(s, 4, c, {2, 1, 4, 1, 1, Recompute::full, 0}).stage_tp_comm_s,
              419.4304e-6, 1e-12);
  EXPECT_DOUBLE_EQ(
      estimate_training_step(s, 8, c, {1, 1, 8, 1, 1, Recompute::none, 0}).stage_tp_comm_s, 0.0);
}

TEST(TrainingStepEstimate, RefusesLayoutsThatCannotRun) {
  const ClusterSpec c = round_cluster();
  const TransformerSpec s = llama405b();
  const auto message = [&](const TrainingLayout& l) {
    try {
      estimate_training_step(s, 2048, c, l);
    } catch (const InvalidArgument& e) {
      return e.message();
    }
    return std::string("accepted");
  };
  EXPECT_NE(message({8, 16, 3, 1, 1, Recompute::none, 1}).find("does not divide the global batch"),
            std::string::npos);
  EXPECT_NE(message({3, 16, 64, 1, 1, Recompute::none, 1}).find("tp 3 does not divide"),
            std::string::npos);
  ClusterSpec four = c;  // 4 GPUs per node: tp 8 would span two
  four.gpus_per_node = 4;
  four.inter_node.nics_per_node = 4;
  try {
    estimate_training_step(s, 2048, four, {8, 16, 64, 1, 1, Recompute::none, 1});
    ADD_FAILURE() << "tp 8 over 4-GPU nodes accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(e.message().find("tp 8 spans nodes (4 GPUs per node)"), std::string::npos)
        << e.message();
  }
  EXPECT_NE(message({8, 16, 64, 1, 8, Recompute::none, 1}).find("more than the 126 layers"),
            std::string::npos);
  EXPECT_NE(message({8, 16, 64, 1, 1, Recompute::none, 2}).find("ZeRO-2 with pipeline"),
            std::string::npos);
}

TEST(TrainingStepEstimate, TheSearchReturnsFittingLayoutsFastestFirst) {
  TransformerSpec s = llama405b();
  s.layers = 16;
  const LayoutSearchResult r = search_training_layouts(s, 256, round_cluster(), 64);
  ASSERT_FALSE(r.fitting.empty());
  EXPECT_EQ(r.priced, static_cast<int64_t>(r.fitting.size()) + r.too_big);
  for (size_t i = 0; i < r.fitting.size(); ++i) {
    EXPECT_TRUE(r.fitting[i].fits);
    EXPECT_EQ(r.fitting[i].layout.gpus(), 64);
    if (i > 0) {
      EXPECT_LE(r.fitting[i - 1].step_s, r.fitting[i].step_s);
    }
  }
  // Restricted to tp 8 and pp 4: only those.
  TrainingSearchOptions only;
  only.tps = {8};
  only.pps = {4};
  for (const auto& e : search_training_layouts(s, 256, round_cluster(), 64, only).fitting) {
    EXPECT_EQ(e.layout.tp, 8);
    EXPECT_EQ(e.layout.pp, 4);
  }
}

}  // namespace
}  // namespace symmesh::strategies
