// A training step simulated by its replica and data-parallel ring
// (evaluation/simulated_training_step.hpp), against the closed forms it must agree with
// where their assumptions hold.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "evaluation/simulated_training_step.hpp"
#include "scenario/scenario_loader.hpp"

namespace symmesh::evaluation {
namespace {

using strategies::TrainingLayout;

// A model whose stages are alike: 16 layers, and an embedding and output projection that
// are a fraction of a percent of a stage (vocabulary 64), so that each stage's work is its
// layers'. 1024 tokens per sequence.
TransformerSpec balanced_model() {
  TransformerSpec m;
  m.name = "balanced";
  m.layers = 16;
  m.hidden = 2048;
  m.heads = 16;
  m.kv_heads = 16;
  m.head_dim = 128;
  m.ffn = 8192;
  m.vocab = 64;
  m.seq = 1024;
  m.global_batch = 8;
  m.dtype = DType::bf16;
  return m;
}

ClusterSpec h100_nodes() {
  return load_cluster(shipped_scenarios_dir() + "/clusters/dgx-h100.yaml");
}

// Narayanan et al. (SC'21, "Efficient large-scale language model training on GPU clusters
// using Megatron-LM", §2.2): with p equal stages, m micro-batches and v chunks per stage, a
// 1F1B step takes (m + (p - 1)/v) x (t_f + t_b) — the closed form estimate_training_step
// prices. The simulation runs the schedule op by op; with stage-to-stage sends of ~4 MB over
// NVLink (microseconds against a stage's milliseconds) the two agree within 3 %.
void expect_pipeline_formula(const TrainingLayout& layout) {
  const TransformerSpec m = balanced_model();
  const SimulatedTrainingStep step =
      simulate_training_step(m, m.global_batch, h100_nodes(), layout);
  const double formula = step.estimate.step_s;
  EXPECT_NEAR(step.pipeline_s / formula, 1.0, 0.03)
      << to_string(layout) << ": simulated " << step.pipeline_s << " s, closed form " << formula;
  // Nothing of data parallelism: dp 1.
  EXPECT_EQ(step.data_parallel.exposed_s, 0.0);
  EXPECT_DOUBLE_EQ(step.step_s, step.pipeline_s);
}

TEST(SimulatedTrainingStep, StageZerosOptimizerStepFollowsItsLastBackward) {
  // balanced_model on pp 4, tp 1, dp 1: stage 0 holds 4 layers of 2048 x (6144 + 2048 +
  // 3 x 8192 + 2) = 67,112,960 parameters and the 64 x 2048 embedding: 268,582,912. Adam's
  // 28 B and the master-to-bf16 copy's 6 B per parameter (core/optimizer_step.hpp) are two
  // copies of 14 and 3 B per parameter, each reading and writing its bytes:
  // 9,131,819,008 B at dgx-h100.yaml's sustained HBM bandwidth, 2.97 TB/s (Azure's STREAM
  // triad) = 3.0746865 ms, plus two 5 us launches.
  const TransformerSpec m = balanced_model();
  const SimulatedTrainingStep step =
      simulate_training_step(m, m.global_batch, h100_nodes(), {1, 4, 1, 1, 1, Recompute::none, 0});
  EXPECT_NEAR(step.optimizer_s, 9'131'819'008 / 2.97e12 + 10e-6, 1e-9);
  // The closed form prices the fullest stage the same (its 4 layers and one table).
  EXPECT_NEAR(step.estimate.optimizer_s, step.optimizer_s, 1e-9);
}

TEST(SimulatedTrainingStep, OneF1BMatchesTheBubbleFormula) {
  // p 4, m 8: (8 + 3) x stage; the bubble is 3/8 of the ideal time.
  expect_pipeline_formula({1, 4, 1, 1, 1, Recompute::none, 0});
}

TEST(SimulatedTrainingStep, InterleavedMatchesTheBubbleFormula) {
  // p 4, m 8, v 2: (8 + 3/2) x stage, Megatron's interleaved schedule.
  expect_pipeline_formula({1, 4, 1, 1, 2, Recompute::none, 0});
}

TEST(SimulatedTrainingStep, FullRecomputationAddsTheForwardToTheBackward) {
  expect_pipeline_formula({1, 2, 1, 1, 1, Recompute::full, 0});
}

TEST(SimulatedTrainingStep, WithoutPipelineTheStepIsTheMicroBatchesInTurn) {
  // p 1: m x (t_f + t_b), no bubble.
  expect_pipeline_formula({1, 1, 1, 2, 1, Recompute::none, 0});
}

TEST(SimulatedTrainingStep, AReplicaOverTheCapIsPricedOnly) {
  // 16,384 micro-batches of one sequence on one GPU: each holds a forward and a backward of
  // 16 layers (hundreds of ops), so the replica is far over kMaxSimulatedStreamOps. It is
  // refused before anything is built or simulated, and says why.
  TransformerSpec m = balanced_model();
  m.global_batch = 16384;
  const SimulatedTrainingStep step =
      simulate_training_step(m, m.global_batch, h100_nodes(), {1, 1, 1, 1, 1, Recompute::none, 0});
  EXPECT_FALSE(step.simulated());
  EXPECT_GT(step.replica_stream_ops, kMaxSimulatedStreamOps);
  EXPECT_THAT(step.not_simulated, ::testing::HasSubstr("16384 micro-batches per replica"));
  EXPECT_EQ(step.step_s, 0.0);
  EXPECT_GT(step.estimate.step_s, 0.0);  // the closed form still prices it
}

TEST(SimulatedTrainingStep, DataParallelRingsMatchTheRingFormula) {
  // tp 8 fills a node, so each of the 8 rings of 4 replicas runs over the nodes' NICs, one
  // per GPU (400 Gb/s, 3 us: dgx-h100.yaml): a ring reduce-scatter or all-gather of chunk c
  // takes (p - 1)(a + c/b) (core/collectives.hpp), what the closed form prices. ZeRO-1:
  // one of each.
  TransformerSpec m = balanced_model();
  const TrainingLayout layout{8, 2, 4, 1, 1, Recompute::none, 1};
  const SimulatedTrainingStep step =
      simulate_training_step(m, m.global_batch, h100_nodes(), layout);
  EXPECT_EQ(step.data_parallel_ranks, 32);
  ASSERT_GT(step.gradients_s, 0);
  ASSERT_GT(step.weights_s, 0);
  EXPECT_NEAR((step.gradients_s + step.weights_s) / step.estimate.dp_comm_s, 1.0, 0.05)
      << "simulated " << step.gradients_s << " + " << step.weights_s << " s, closed form "
      << step.estimate.dp_comm_s << " s";
  // The fp32 gradients are twice the bf16 weights: the reduce-scatter takes about twice the
  // all-gather (the same ring, latency aside).
  EXPECT_NEAR(step.gradients_s / step.weights_s, 2.0, 0.1);
  // The step adds what of them the first forward and last backward do not hide.
  EXPECT_GT(step.first_forward_s, 0);
  EXPECT_GT(step.last_backward_s, step.first_forward_s);
  EXPECT_NEAR(step.data_parallel.exposed_s,
              std::max(0.0, step.gradients_s - step.last_backward_s) +
                  std::max(0.0, step.weights_s - step.first_forward_s),
              1e-12);
  EXPECT_LE(step.data_parallel.exposed_s, step.gradients_s + step.weights_s);
  EXPECT_DOUBLE_EQ(step.step_s, step.pipeline_s + step.data_parallel.exposed_s);
  // What the two simulations stand for: 4 replicas of 16 ranks.
  EXPECT_EQ(step.replica_ranks, 16);
  EXPECT_EQ(step.represented_ranks, 64);
}

}  // namespace
}  // namespace symmesh::evaluation
