// The closed-form training step's MFU (strategies/training_step_estimate.hpp) on a step
// small enough to work entirely by hand: the model FLOPs from the model's shape (PaLM's
// 6·N plus the attention term), the step's time from each GEMM of the forward and backward
// passes, the peak from the cluster. Nothing below is read back from the estimate or from
// TransformerSpec's own counts; the test asserts that the estimate arrives at the same
// numbers.
#include <gtest/gtest.h>

#include "strategies/training_step_estimate.hpp"

namespace symmesh::strategies {
namespace {

// One GPU whose only cost is GEMM arithmetic: 1e15 bf16 FLOP/s, large GEMMs at 100 % of it
// (gemm_efficiency 1), no waves (no sm_count), no launch overhead, and an HBM so fast
// (1e30 B/s) that every memory-bound term (norms, residuals, the optimizer step, a GEMM's
// loads and stores) is below 1e-22 s, 1e-15 of the step: nothing a 1e-12 comparison sees.
ClusterSpec gemm_only_cluster() {
  ClusterSpec c;
  c.name = "gemm-only";
  c.nodes = 1;
  c.gpus_per_node = 8;
  c.gpu.name = "gpu";
  c.gpu.peak_flops_per_s["bf16"] = 1e15;
  c.gpu.gemm_efficiency["bf16"] = 1.0;
  c.gpu.launch_overhead_s = 0.0;
  c.gpu.memory_capacity_bytes = 80.0 * (1 << 30);
  c.gpu.memory_bandwidth_bytes_per_s = 1e30;
  c.intra_node = {"nvswitch", 100e9, 0};
  c.inter_node = {"rail", 8, 50e9, 0};
  return c;
}

// 2 layers, hidden 64, one attention head of 64 (one key/value head), a GELU MLP of width
// 64, vocabulary 64, sequences of 64 tokens, bf16, untied embeddings.
TransformerSpec tiny() {
  TransformerSpec s;
  s.name = "tiny";
  s.layers = 2;
  s.hidden = 64;
  s.heads = 1;
  s.kv_heads = 1;
  s.head_dim = 64;
  s.ffn = 64;
  s.activation = MlpActivation::gelu;
  s.vocab = 64;
  s.seq = 64;
  return s;
}

TEST(TrainingMfu, TwoLayerStepOnOneGpuWorkedByHand) {
  // A global batch of 2 sequences on one GPU (tp = pp = dp = 1) in micro-batches of 1: 2
  // micro-batches of 64 tokens, 128 tokens per step.
  const TrainingLayout one_gpu{1, 1, 1, 1, 1, Recompute::none, 0};
  const TrainingEstimate e = estimate_training_step(tiny(), 2, gemm_only_cluster(), one_gpu);
  ASSERT_EQ(e.micro_batches, 2);

  // Model FLOPs per token (PaLM, Chowdhery et al. 2022, appendix B): 6·N for the N
  // parameters that multiply, plus 12·L·(heads · head_dim)·seq for attention.
  //   per layer: W_qkv 64 x (64 + 2 x 64) = 12,288, W_o 64 x 64 = 4,096, W_up and W_down
  //   2 x 64 x 64 = 8,192, two norms 2 x 64 = 128: 24,704; two layers 49,408; the final
  //   norm 64 and the output projection 64 x 64 = 4,096 (the embedding table does not
  //   multiply): N = 53,568.
  //   6 x 53,568 = 321,408; 12 x 2 x 64 x 64 = 98,304; 419,712 FLOPs per token, and
  //   128 x 419,712 = 53,723,136 model FLOPs per step.
  constexpr double kModelFlopsPerStep = 128.0 * 419'712;

  // The step's time. At efficiency 1 a GEMM (m, n, k) costs the roofline's
  // 2mnk / (s(m) s(n) s(k)) = 2 (m + 64)(n + 64)(k + 64) FLOPs at the peak
  // (s(x) = x / (x + 64), core/roofline.hpp), with the 64 tokens of a micro-batch as m:
  //   qkv (64, 192, 64): 2 x 128 x 256 x 128 = 8,388,608;
  //   out, up and down (64, 64, 64) each: 2 x 128 x 128 x 128 = 4,194,304;
  //   a layer's forward GEMMs G = 8,388,608 + 3 x 4,194,304 = 20,971,520;
  //   causal attention, q·kᵀ (64, 64, 64) and p·v (64, 64, 64) at half the work:
  //   A = 0.5 x 2 x 4,194,304 = 4,194,304;
  //   the logits (64, 64, 64): O = 4,194,304.
  // A layer's backward is twice its GEMMs and 2.5 x its attention (FlashAttention redoes
  // the scores), the logits' backward twice theirs: per micro-batch
  //   2 x (3G + 3.5A) + 3O = 2 x (62,914,560 + 14,680,064) + 12,582,912 = 167,772,160;
  // two micro-batches with no pipeline, no tp or dp communication, an optimizer step
  // costing nothing: 335,544,320 FLOPs' worth of peak, i.e. 3.3554432e-7 s at 1e15 FLOP/s.
  constexpr double kPeak = 1e15;
  constexpr double kStepS = 335'544'320.0 / kPeak;
  EXPECT_NEAR(e.step_s, kStepS, 1e-12 * kStepS);

  // Hence 128 / 3.3554432e-7 s = 381,469,726.5625 tokens/s on the one GPU, and
  //   MFU = 53,723,136 / 335,544,320 = 0.160107421875
  // (model FLOPs per step over the peak's FLOPs in the step: the peak cancels).
  EXPECT_NEAR(e.tokens_per_s_per_gpu, 381'469'726.5625, 1e-12 * 381'469'726.5625);
  EXPECT_NEAR(e.model_flops_per_s_per_gpu, kModelFlopsPerStep / kStepS,
              1e-12 * kModelFlopsPerStep / kStepS);
  EXPECT_NEAR(e.mfu, 0.160107421875, 1e-12);
}

}  // namespace
}  // namespace symmesh::strategies
