// Steps with tensor ops (core/tensor_op.hpp) simulated end to end: a transformer block in
// Megatron's tensor-parallel layouts computes, shard by shard, what the unsharded ops compute
// (emulation, fp64), and a memory-bound op and the fused attention take their roofline times
// as worked out by hand in the comments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "evaluation/scenario_evaluation.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/evaluation/emulation_check.hpp"

namespace symmesh::evaluation {
namespace {

// One node of `gpus` H100s on NVSwitch: 450 GB/s and 1 us per GPU per direction.
std::string cluster_yaml(int gpus) {
  return "cluster: {name: test, nodes: 1, gpus_per_node: " + std::to_string(gpus) +
         ", gpu: {name: H100, peak: {bf16: 989.4 TFLOP/s, fp32: 67 TFLOP/s, fp64: 66.9 "
         "TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}, intra_node: {kind: "
         "nvswitch, bandwidth: 450 GB/s, latency: 1 us}}\n";
}

const OpReport& op_named(const SimulationReport& report, const std::string& name) {
  for (const OpReport& op : report.ops)
    if (op.name == name) return op;
  throw std::runtime_error("no op " + name);
}

Evaluation simulate(const std::string& yaml, bool emulate = false) {
  EvaluationOptions options;
  options.emulate = emulate;
  options.host_memory = HostMemory{int64_t{16} << 30, "test"};
  return evaluate_scenario(load_scenario_text(yaml, "step.yaml"), options);
}

using testing::expect_emulated_ops_exact;

// A pre-norm Llama block and the loss on mesh [dp 2, tp 2], fp64, every weight declared in
// Megatron-LM's tensor-parallel layout (so the step runs sharded, whatever the planner
// would choose): the vocabulary-parallel embedding [R, S(0)], column-parallel qkv, gate, up
// and output [R, S(1)], row-parallel out and down [R, S(0)]; the residual stream x0 split by
// tokens over dp and tp (sequence parallel). 2 sequences of 4 tokens (one per replica);
// attention with heads 4, kv_heads 2, head_dim 2: qkv (4 + 2 · 2) · 2 = 16 columns, two
// key/value groups, one per tp rank.
const std::string kBlock = R"yaml(name: block
mesh: {shape: [2, 2], names: [dp, tp]}
dtype: fp64
cost_model: analytic
training: {optimizer: sgd}
tensors:
  w_embed: {shape: [16, 8], parameter: true, placements: [R, "S(0)"]}
  x0:      {placements: ["S(0)", "S(0)"]}
  w_norm1: {shape: [8], parameter: true, placements: [R, R]}
  w_qkv:   {shape: [8, 16], parameter: true, placements: [R, "S(1)"]}
  w_o:     {shape: [8, 8], parameter: true, placements: [R, "S(0)"]}
  w_norm2: {shape: [8], parameter: true, placements: [R, R]}
  w_gate:  {shape: [8, 12], parameter: true, placements: [R, "S(1)"]}
  w_up:    {shape: [8, 12], parameter: true, placements: [R, "S(1)"]}
  w_down:  {shape: [12, 8], parameter: true, placements: [R, "S(0)"]}
  w_norm:  {shape: [8], parameter: true, placements: [R, R]}
  w_out:   {shape: [8, 16], parameter: true, placements: [R, "S(1)"]}
workload:
  - {name: embed, op: embedding, a: w_embed, output: x0, tokens: 8}
  - {name: norm1, op: rms_norm, a: x0, b: w_norm1, output: n1}
  - {name: qkv, op: mm, a: n1, b: w_qkv, output: qkv_out}
  - {name: attention, op: attention, a: qkv_out, output: ctx, heads: 4, kv_heads: 2, seq: 4}
  - {name: out, op: mm, a: ctx, b: w_o, output: attn_out}
  - {name: residual1, op: add, a: x0, b: attn_out, output: h}
  - {name: norm2, op: rms_norm, a: h, b: w_norm2, output: n2}
  - {name: gate, op: mm, a: n2, b: w_gate, output: gate_out}
  - {name: up, op: mm, a: n2, b: w_up, output: up_out}
  - {name: act, op: swiglu, a: gate_out, b: up_out, output: act_out}
  - {name: down, op: mm, a: act_out, b: w_down, output: mlp_out}
  - {name: residual2, op: add, a: h, b: mlp_out, output: x1}
  - {name: norm, op: rms_norm, a: x1, b: w_norm, output: xn}
  - {name: output, op: mm, a: xn, b: w_out, output: logits}
  - {name: loss, op: cross_entropy, a: logits, output: loss}
)yaml";

TEST(TensorOpStep, EmulatedBlockInMegatronLayoutsEqualsTheUnshardedOps) {
  const Evaluation e = simulate("version: 2\n" + cluster_yaml(4) + kBlock, true);
  const SimulationReport& r = e.report;
  const int checked = expect_emulated_ops_exact(r);
  // Forward 16 (the loss is two ops) and backward 22 planned ops, all checked.
  EXPECT_GE(checked, 38);
  // The layouts the declarations force on tp, so that the check above covers sharded
  // kernels (over dp the planner may replicate so small a step): the vocabulary-parallel
  // lookup leaves a Partial sum; attention runs on each rank's key/value group; SwiGLU on its
  // columns; the loss statistics of the vocabulary-split logits are Partial; the table's
  // gradient stays split by vocabulary.
  const auto on_tp = [&](const std::string& name) {
    const OpReport& op = op_named(r, name);
    return op.output_placements ? to_string(op.output_placements->at(1)) : std::string("-");
  };
  EXPECT_EQ(on_tp("embed"), "P(sum)");
  EXPECT_EQ(on_tp("attention"), "S(1)");
  EXPECT_EQ(on_tp("attention.dgrad"), "S(1)");
  EXPECT_EQ(on_tp("act"), "S(1)");
  EXPECT_EQ(on_tp("loss.stats"), "P(sum)");
  EXPECT_EQ(on_tp("loss.dgrad"), "S(1)");
  EXPECT_EQ(on_tp("embed.wgrad"), "S(0)");
}

// Tied embeddings (model_expansion.cpp): the block above with its output projection
// reading the embedding table, logits = xn · w_embedᵀ as `linear`, so the table's gradient
// is the sum of the projection's wgrad and the lookup's. The logits are declared split by
// vocabulary over tp, so the projection runs on the table's vocabulary shards. Every op, the
// sum included, checked against the unsharded op on the same inputs.
TEST(TensorOpStep, EmulatedTiedEmbeddingSumsBothGradientsOfTheTable) {
  std::string block = kBlock;
  const auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = block.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    block.replace(at, from.size(), to);
  };
  replace("  w_out:   {shape: [8, 16], parameter: true, placements: [R, \"S(1)\"]}\n",
          "  logits:  {placements: [\"S(0)\", \"S(1)\"]}\n");
  replace("{name: output, op: mm, a: xn, b: w_out, output: logits}",
          "{name: output, op: linear, a: xn, b: w_embed, output: logits}");
  const Evaluation e = simulate("version: 2\n" + cluster_yaml(4) + block, true);
  const SimulationReport& r = e.report;
  const int checked = expect_emulated_ops_exact(r);
  EXPECT_GE(checked, 38);
  EXPECT_NE(op_named(r, "output.wgrad").max_abs_error, std::nullopt);
  // The lookup's contribution is added to the projection's (the graph's `.acc` add, itself
  // checked above), and the one table has one gradient reduction; there is no w_out. Its
  // gradient, complete only after both contributions, is the backward's last: it closes its
  // bucket (strategies/gradient_buckets.hpp), named "<first>..w_embed.grad_<collective>".
  EXPECT_NE(op_named(r, "embed.wgrad.acc").max_abs_error, std::nullopt);
  int table_reductions = 0, w_out_ops = 0;
  std::string reductions;
  for (const OpReport& op : r.ops) {
    if (op.name.find(".grad_") != std::string::npos) reductions += op.name + " ";
    if (op.name.find("w_embed.grad_") != std::string::npos) ++table_reductions;
    if (op.name.rfind("w_out", 0) == 0) ++w_out_ops;
  }
  EXPECT_EQ(table_reductions, 1) << reductions;
  EXPECT_EQ(w_out_ops, 0);
}

// Full recomputation (Megatron-LM's, a checkpoint segment per layer): the block's eleven
// ops in one segment. x0 (made by embed, outside) and x1 (read by the final norm, outside)
// are kept; the backward needs, of what only the block reads, act_out (down's wgrad), the
// gate and up outputs (SwiGLU's dgrad), n2, h (through norm2), ctx and qkv_out (out's
// wgrad, attention's dgrad), n1: so it recomputes norm1, qkv, attention, out, residual1,
// norm2, gate, up and act — nine ops, not down or residual2, whose outputs the backward
// never reads. Each recomputed op checked against the unsharded op like the others.
TEST(TensorOpStep, EmulatedFullRecomputationRecomputesTheLayerItNeeds) {
  std::string block;
  for (size_t at = 0, next; at < kBlock.size(); at = next + 1) {
    next = kBlock.find('\n', at);
    std::string line = kBlock.substr(at, next - at);
    for (const char* op : {"norm1", "qkv", "attention", "out", "residual1", "norm2", "gate", "up",
                           "act", "down", "residual2"})
      if (line.find(std::string("{name: ") + op + ",") != std::string::npos)
        line.insert(line.rfind('}'), ", checkpoint: block");
    block += line + "\n";
  }
  const Evaluation e = simulate("version: 2\n" + cluster_yaml(4) + block, true);
  const int checked = expect_emulated_ops_exact(e.report);
  std::vector<std::string> recomputed;
  for (const OpReport& op : e.report.ops)
    if (op.name.size() > 10 && op.name.substr(op.name.size() - 10) == ".recompute")
      recomputed.push_back(op.name.substr(0, op.name.size() - 10));
  EXPECT_THAT(recomputed,
              ::testing::UnorderedElementsAre("norm1", "qkv", "attention", "out", "residual1",
                                              "norm2", "gate", "up", "act"));
  for (const std::string& name : recomputed)
    EXPECT_NE(op_named(e.report, name + ".recompute").max_abs_error, std::nullopt) << name;
  EXPECT_GE(checked, 38 + 9);
}

TEST(TensorOpStep, AMemoryBoundOpTakesItsHbmTime) {
  // rms_norm of x [4096, 8192] bf16 with w [8192] on one GPU reads x and w, writes y and the
  // fp32 reciprocal RMS of each row:
  //   2 B · (4096 · 8192 · 2 + 8192) + 4 B · 4096 = 134,250,496 B
  // at 3.35 TB/s = 40.0748 us, plus one 5 us launch = 45.0748 us.
  const Evaluation e = simulate("version: 2\nname: norm\n" + cluster_yaml(1) +
                                "mesh: {shape: [1]}\n"
                                "tensors:\n"
                                "  x: {shape: [4096, 8192], placements: [R]}\n"
                                "  w: {shape: [8192], parameter: true, placements: [R]}\n"
                                "workload:\n"
                                "  - {name: norm, op: rms_norm, a: x, b: w, output: y}\n");
  const OpReport& norm = op_named(e.report, "norm");
  EXPECT_NEAR(norm.time_s, 45.0748e-6, 1e-10);
  EXPECT_NEAR(norm.compute_time_s, norm.time_s, 1e-12);
}

TEST(TensorOpStep, AttentionTakesItsProductsAtTheGemmRoofline) {
  // Causal attention of one 8192-token sequence, Llama 3 8B's heads 32, kv_heads 8, head_dim
  // 128 (qkv [8192, 6144]), on one H100: per head, scores [8192, 128] · [128, 8192] and
  // context [8192, 8192] · [8192, 128], half of each (the causal mask):
  //   flops = 0.5 · 32 · (2 · 8192 · 8192 · 128 · 2) = 549,755,813,888
  // at the GEMM efficiency of core/roofline.hpp, 0.85 · s(m) s(n) s(k), s(x) = x / (x + 64):
  //   scores  s(8192)² s(128)   context  s(8192) s(128) s(8192)  (the same product)
  // so time = flops / (989.4e12 · 0.85 · s(8192)² · s(128)) + two 5 us launches (rotary, then
  // the fused kernel). HBM traffic (q, k, v, the output, the log-sum-exp, rotary's read and
  // write of q and k: under 0.4 GB, about 0.1 ms) is below the compute time.
  const double s8192 = 8192.0 / (8192 + 64), s128 = 128.0 / (128 + 64);
  const double want_s =
      549755813888.0 / (989.4e12 * 0.85 * s8192 * s8192 * s128) + 2 * 5e-6;  // 1.3147 ms
  const Evaluation e = simulate(
      "version: 2\nname: attention\n" + cluster_yaml(1) +
      "mesh: {shape: [1]}\n"
      "tensors:\n"
      "  qkv: {shape: [8192, 6144], placements: [R]}\n"
      "workload:\n"
      "  - {name: attn, op: attention, a: qkv, output: ctx, heads: 32, kv_heads: 8, seq: 8192}\n");
  EXPECT_NEAR(op_named(e.report, "attn").time_s, want_s, 1e-4 * want_s);
}

TEST(TensorOpStep, GradientAccumulationRunsTheStepOnceAMicroBatchAndReducesOnce) {
  // One GPU, x [4096, 4096] @ w [4096, 4096] (bf16, SGD), three micro-batches: the forward
  // mm, its dgrad and wgrad run three times; the SGD update (6 B per element: 96 MiB at
  // 3.35 TB/s + 5 us) once, after the last. Each mm: 2 · 4096³ flops at 0.85 · s(4096)³ of
  // 989.4 TFLOP/s, s(x) = x / (x + 64), plus its 5 us launch (HBM traffic is below it):
  //   137,438,953,472 / (989.4e12 · 0.85 · 0.984615³) + 5e-6 = 0.17228 ms
  // so the step is 9 such mms and the update: 1.55052 + 0.03504 = 1.5856 ms, and the row of
  // the two earlier micro-batches spans 6 of the mms, 1.03368 ms.
  const std::string step = "version: 2\nname: accumulate\n" + cluster_yaml(1) +
                           "mesh: {shape: [1]}\ncost_model: analytic\n"
                           "tensors:\n"
                           "  x: {shape: [4096, 4096], placements: [R]}\n"
                           "  w: {shape: [4096, 4096], parameter: true, placements: [R]}\n"
                           "training: {optimizer: sgd, micro_batches: 3}\n"
                           "workload:\n"
                           "  - {name: proj, op: mm, a: x, b: w, output: y}\n";
  const Evaluation e = simulate(step);
  const double s = 4096.0 / (4096 + 64);
  const double mm_s = 2.0 * 4096 * 4096 * 4096 / (989.4e12 * 0.85 * s * s * s) + 5e-6;
  const double update_s = 6.0 * 4096 * 4096 / 3.35e12 + 5e-6;
  EXPECT_NEAR(e.report.total_time_s, 9 * mm_s + update_s, 1e-3 * e.report.total_time_s);
  const OpReport& earlier = op_named(e.report, "earlier micro-batches");
  EXPECT_EQ(earlier.op, "micro_batches");
  EXPECT_EQ(earlier.micro_batches, 2);
  EXPECT_NEAR(earlier.time_s, 6 * mm_s, 1e-3 * earlier.time_s);
  // The last micro-batch's ops follow it; the update comes once, at the end.
  EXPECT_NEAR(op_named(e.report, "proj").start_s, earlier.end_s, 1e-9);
  EXPECT_NEAR(op_named(e.report, "w.sgd").time_s, update_s, 1e-3 * update_s);
  // The layout search's estimate counts the micro-batches the same way.
  ASSERT_TRUE(e.report.step.has_value());
  EXPECT_NEAR(e.report.step->overlapped_estimate_s, 9 * mm_s + update_s, 1e-3 * 9 * mm_s);
}

TEST(TensorOpStep, AModelsMicroBatchesFollowFromItsGlobalBatch) {
  // global_batch 8 on dp 2 in micro-batches of 1: 8 / (2 · 1) = 4 micro-batches per replica
  // of one 512-token sequence each; the step's tokens are 8 · 512 = 4,096.
  const Evaluation e = simulate("version: 2\nname: model\n" + cluster_yaml(2) +
                                "mesh: {shape: [2, 1], names: [dp, tp]}\n"
                                "cost_model: analytic\n"
                                "model: {layers: 1, hidden: 256, heads: 4, ffn: 512, vocab: 1024, "
                                "seq: 512, micro_batch: 1, global_batch: 8}\n");
  EXPECT_EQ(op_named(e.report, "earlier micro-batches").micro_batches, 3);
  ASSERT_TRUE(e.report.model.has_value());
  EXPECT_EQ(e.report.model->tokens_per_step, 4096);
}

}  // namespace
}  // namespace symmesh::evaluation
