// Version-2 training steps simulated end to end: gradient reductions sized from the mesh,
// overlapped with the backward compute they do not depend on, and steps refused for
// memory with their figures. Expectations are closed forms computed in the comments.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"
#include "core/redistribution.hpp"
#include "evaluation/backends.hpp"
#include "evaluation/dtype_values.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "scenario/scenario_loader.hpp"
#include "strategies/sharded_result.hpp"
#include "tests/llama70b_sized_step.hpp"

namespace symmesh::evaluation {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// One node of `gpus` H100s on NVSwitch: 450 GB/s and 1 us per GPU per direction.
std::string cluster_yaml(int gpus) {
  return "cluster: {name: test, nodes: 1, gpus_per_node: " + std::to_string(gpus) +
         ", gpu: {name: H100, peak: {bf16: 989.4 TFLOP/s, fp32: 67 TFLOP/s}, memory: {capacity: 80 "
         "GiB, "
         "bandwidth: 3.35 TB/s}}, intra_node: {kind: nvswitch, bandwidth: 450 GB/s, latency: "
         "1 us}}\n";
}

const OpReport& op_named(const SimulationReport& report, const std::string& name) {
  for (const OpReport& op : report.ops)
    if (op.name == name) return op;
  throw std::runtime_error("no op " + name);
}

Evaluation simulate(const std::string& yaml) {
  EvaluationOptions options;
  options.host_memory = HostMemory{int64_t{16} << 30, "test"};
  return evaluate_scenario(load_scenario_text(yaml, "dataflow.yaml"), options);
}

// Data parallel over `dp` GPUs: x [4096·dp, 1024] split by rows, w [1024, 4096] replicated.
std::string data_parallel_mm(int dp) {
  return "version: 2\nname: dp-mm\n" + cluster_yaml(dp) + "mesh: {shape: [" + std::to_string(dp) +
         "], names: [dp]}\ncost_model: analytic\n"
         "tensors:\n"
         "  x: {shape: [" +
         std::to_string(4096 * dp) +
         ", 1024], placements: [\"S(0)\"]}\n"
         "  w: {shape: [1024, 4096], parameter: true, placements: [R]}\n"
         "training: {optimizer: adam}\n"
         "workload:\n"
         "  - {name: proj, op: mm, a: x, b: w, output: y}\n";
}

TEST(DataflowEvaluation, GradientAllReduceIsTheClosedFormRingAtEveryMesh) {
  // The weight gradient xᵀ·dy contracts the split token dim, so it is Partial over dp and
  // all-reduced: an 8 MiB buffer (1024 x 4096 bf16 = 8,388,608 B), whatever the mesh.
  // Ring all-reduce: 2(p-1) steps of (1 us + (S/p) / 450 GB/s):
  //   p=2: 2 x (1e-6 + 4,194,304/450e9) = 20.64 us
  //   p=4: 6 x (1e-6 + 2,097,152/450e9) = 33.96 us
  //   p=8: 14 x (1e-6 + 1,048,576/450e9) = 46.62 us
  // (the simulator's one-sided rings agree with these forms within 2%:
  // tests/tools/cost_model_agreement_test.cpp).
  for (const auto& [dp, want_s] : {std::pair{2, 20.64e-6}, {4, 33.96e-6}, {8, 46.62e-6}}) {
    SCOPED_TRACE("dp " + std::to_string(dp));
    const Evaluation e = simulate(data_parallel_mm(dp));
    const OpReport& sync = op_named(e.report, "w.grad_all_reduce");
    EXPECT_EQ(sync.op, "all_reduce");
    EXPECT_EQ(sync.bytes, 8388608);
    EXPECT_NEAR(sync.time_s, want_s, 0.02 * want_s);
  }
}

TEST(DataflowEvaluation, AGradientReductionHiddenUnderIndependentComputeAddsNothing) {
  // Two layers on dp = 2, weights replicated, each 8192² = 67.1 M elements: more than a
  // gradient bucket over 2 ranks holds (max(40 M, 2 M), strategies/gradient_buckets.hpp), so
  // each is a bucket of its own, reduced as soon as it is made. Backward runs down.dgrad,
  // down.wgrad, up.dgrad, up.wgrad; w2's all-reduce (128 MiB: 2 x (1 us + 67,108,864 B /
  // 450 GB/s) = 300.3 us) starts when down.wgrad has made its gradient and runs on the
  // communication stream while up.dgrad and up.wgrad compute (each 2·4096·8192·8192 =
  // 5.5e11 FLOP on a rank, about 670 us at 0.83 x 989.4 TFLOP/s), so it is hidden; w1's
  // all-reduce comes after the last compute and is exposed. Then SGD updates both weights on
  // the main stream, as Megatron-LM steps its optimizer once every gradient is reduced:
  // 67,108,864 elements each, reading the bf16 gradient and weight and writing the weight
  // (6 B per element, core/optimizer_step.hpp): one copy of 201,326,592 B,
  // 2 x 201,326,592 / 3.35 TB/s + 5 us = 125.2 us each. The step therefore ends exactly when
  // w1's all-reduce does plus both updates, and is shorter than the serial sum of every op by
  // at least w2's all-reduce.
  const std::string yaml = "version: 2\nname: dp-mlp\n" + cluster_yaml(2) +
                           "mesh: {shape: [2], names: [dp]}\ncost_model: analytic\n"
                           "tensors:\n"
                           "  x: {shape: [8192, 8192], placements: [\"S(0)\"]}\n"
                           "  w1: {shape: [8192, 8192], parameter: true, placements: [R]}\n"
                           "  w2: {shape: [8192, 8192], parameter: true, placements: [R]}\n"
                           "training: {optimizer: sgd}\n"
                           "workload:\n"
                           "  - {name: up, op: mm, a: x, b: w1, output: h}\n"
                           "  - {name: down, op: mm, a: h, b: w2, output: y}\n";
  const Evaluation e = simulate(yaml);
  const OpReport& w2 = op_named(e.report, "w2.grad_all_reduce");
  const OpReport& w1 = op_named(e.report, "w1.grad_all_reduce");
  const OpReport& down_wgrad = op_named(e.report, "down.wgrad");
  const OpReport& up_wgrad = op_named(e.report, "up.wgrad");
  const OpReport& up_dgrad = op_named(e.report, "up.dgrad");
  // w2's reduction starts with its gradient and ends before the backward compute does.
  EXPECT_NEAR(w2.start_s, down_wgrad.end_s, 1e-9);
  EXPECT_LT(w2.end_s, up_wgrad.end_s);
  EXPECT_LT(w2.time_s, up_dgrad.compute_time_s + up_wgrad.compute_time_s);
  // The report says so: nothing of w2's reduction is exposed, all of w1's is.
  EXPECT_TRUE(w2.on_comm_stream);
  EXPECT_NEAR(w2.exposed_comm_s, 0.0, 1e-12);
  EXPECT_NEAR(w1.exposed_comm_s, w1.time_s, 1e-12);
  // The updates start once the last reduction is done, one after the other.
  const double update_s = 2 * 201'326'592 / 3.35e12 + 5e-6;
  const OpReport& w1_sgd = op_named(e.report, "w1.sgd");
  const OpReport& w2_sgd = op_named(e.report, "w2.sgd");
  EXPECT_EQ(w1_sgd.op, "optimizer_step");
  EXPECT_EQ(w1_sgd.bytes, 402'653'184);
  EXPECT_NEAR(w2.time_s, 2 * (1e-6 + 67'108'864 / 450e9), 0.02 * w2.time_s);
  EXPECT_NEAR(w1_sgd.time_s, update_s, 1e-9);
  EXPECT_NEAR(w2_sgd.time_s, update_s, 1e-9);
  EXPECT_NEAR(std::min(w1_sgd.start_s, w2_sgd.start_s), w1.end_s, 1e-9);
  // The step is the main stream plus the one exposed reduction and the two updates.
  EXPECT_NEAR(e.report.total_time_s, up_wgrad.end_s + w1.time_s + 2 * update_s, 1e-9);
  double serial_s = 0;
  for (const OpReport& op : e.report.ops) serial_s += op.time_s;
  EXPECT_LE(e.report.total_time_s, serial_s - w2.time_s + 1e-9);
  // The reduction on the comm stream and the main stream's collectives share the dp
  // group's counters; on different signal indices no wait takes the other's signal.
  EXPECT_TRUE(e.report.warnings.empty()) << ::testing::PrintToString(e.report.warnings);
}

TEST(DataflowEvaluation, GradientReductionsBesideTensorParallelCollectivesNeverCrossSignals) {
  // The quickstart's MLP on mesh [dp 1, tp 16] over two DGX H100 nodes: the backward's
  // tp collectives (main stream) and the weights' gradient reductions over tp (comm
  // stream) run at once on the same 16-rank group, whose signal counters every buffer of
  // it shares. Each stream signals on its own index, so no wait takes a signal meant for
  // the other; on one shared index the simulator reports 28 such waits (a race on GPUs).
  const std::string yaml =
      "version: 2\nname: crossing\ncluster: {base: " + std::string(SYMMESH_SOURCE_DIR) +
      "/scenarios/clusters/dgx-h100.yaml, nodes: 2}\n"
      "mesh: {shape: [1, 16], names: [dp, tp]}\ndtype: bf16\ncost_model: analytic\n"
      "tensors:\n"
      "  x: {shape: [32768, 4096], placements: [\"S(0)\", R]}\n"
      "  w_up: {shape: [4096, 14336], parameter: true}\n"
      "  w_down: {shape: [14336, 4096], parameter: true}\n"
      "  y: {placements: [\"S(0)\", R]}\n"
      "training: {optimizer: adam}\n"
      "workload:\n"
      "  - {name: up, op: mm, a: x, b: w_up, output: h}\n"
      "  - {name: down, op: mm, a: h, b: w_down, output: y}\n";
  const Evaluation e = simulate(yaml);
  bool overlapped = false;
  for (const OpReport& op : e.report.ops) overlapped = overlapped || op.on_comm_stream;
  EXPECT_TRUE(overlapped);
  for (const std::string& w : e.report.warnings) EXPECT_THAT(w, Not(HasSubstr("took a signal")));
}

TEST(DataflowEvaluation, PureDataParallel70BIsRefusedWithItsMemoryFigures) {
  // 70,464,307,200 parameters (8 x (8192x537600 + 537600x8192), the size of Llama 3 70B)
  // replicated on each of 8 GPUs, trained with Adam: per GPU
  //   parameters  70,464,307,200 x 2 B = 140,928,614,400 B = 131.25 GiB
  //   gradients   the same, 131.25 GiB
  //   Adam state  x 12 B = 845,571,686,400 B = 787.50 GiB
  // far over an H100's 80 GiB, whatever the activations.
  const std::string yaml = symmesh::testing::llama70b_sized_step(
      "version: 2\nname: dp-70b\n" + cluster_yaml(8) +
          "mesh: {shape: [8], names: [dp]}\ncost_model: analytic\n",
      ", placements: [R]");
  const Scenario scenario = load_scenario_text(yaml, "dp-70b.yaml");
  try {
    size_scenario(scenario, EvaluationOptions{});
    FAIL() << "a 1,050 GiB step was accepted on 80 GiB GPUs";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.where(), "dp-70b.yaml");
    EXPECT_THAT(e.message(), HasSubstr("parameters 131.25 GiB, gradients 131.25 GiB, "
                                       "optimizer state 787.50 GiB"));
    EXPECT_THAT(e.message(), HasSubstr("H100 has 80.00 GiB"));
  }
}

TEST(DataflowEvaluation, Llama405bWithMegatronSpLayoutsPaysExactlyItsFourCollectives) {
  // Sequence parallelism's forward (Korthikanti et al. 2023, §4.2.2): the attention and
  // MLP blocks each all-gather their input over tp and reduce-scatter their output. Every
  // buffer is one dp rank's 8192 tokens x 16384 features x 2 B = 268,435,456 B: the
  // gathered input, or the Partial output before it is scattered. The MLP's second
  // projection reads the gather its first one made; nothing else moves.
  const Scenario scenario =
      load_scenario(std::string(SYMMESH_SOURCE_DIR) + "/scenarios/llama3-405b-layer-tp.yaml");
  const auto model = scenario_cost_model(scenario, true);
  const strategies::PlannedWorkload planned = strategies::plan_workload(scenario, *model);
  std::vector<std::string> paid;
  for (size_t i = 0; i < planned.ops.size(); ++i) {
    const auto& plan = *planned.plans[i];
    auto record = [&](const strategies::PlannedRedistribution& r) {
      for (const RedistributionStep& step : r.redistribution.steps)
        paid.push_back(planned.ops[i].name + " " + to_string(step.collective) + " dim " +
                       std::to_string(step.mesh_dim) + " " + std::to_string(step.buffer_bytes));
    };
    for (const auto& r : plan.redistributions) record(r);
    if (plan.output_redistribution) record(*plan.output_redistribution);
  }
  EXPECT_THAT(paid, ::testing::ElementsAre("qkv all_gather dim 1 268435456",
                                           "attn_out reduce_scatter dim 1 268435456",
                                           "mlp_gate all_gather dim 1 268435456",
                                           "mlp_down reduce_scatter dim 1 268435456"));
}

TEST(DataflowEvaluation, ABarrierOpHoldsEveryRankUntilAllArrive) {
  // A version-2 step has no barrier between ops, so a put from GPU 2 to 3 starts at 0
  // beside a 64 MiB put from 0 to 1 (1 us + 67,108,864 B / 450 GB/s = 150.13 us); with a
  // barrier op between them it starts when the big put has landed.
  const std::string head = "version: 2\nname: barrier\n" + cluster_yaml(4) +
                           "mesh: {shape: [4]}\nworkload:\n"
                           "  - {name: big, op: put_signal, bytes: 64 MiB, src: 0, dst: 1}\n";
  const std::string small = "  - {name: small, op: put_signal, bytes: 1 KiB, src: 2, dst: 3}\n";
  const Evaluation free = simulate(head + small);
  EXPECT_NEAR(op_named(free.report, "small").start_s, 0.0, 1e-9);
  const Evaluation held = simulate(head + "  - {name: sync, op: barrier}\n" + small);
  EXPECT_NEAR(op_named(held.report, "big").end_s, 150.13e-6, 0.01e-6);
  EXPECT_GE(op_named(held.report, "small").start_s, op_named(held.report, "big").end_s - 1e-12);
  EXPECT_EQ(op_named(held.report, "sync").op, "barrier");
}

// Row-major [r, k] x [k, c] in double: the test's own unsharded arithmetic.
std::vector<double> matmul(const std::vector<double>& a, const std::vector<double>& b, int r, int k,
                           int c) {
  std::vector<double> out(static_cast<size_t>(r) * c, 0.0);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j)
      for (int l = 0; l < k; ++l) out[i * c + j] += a[i * k + l] * b[l * c + j];
  return out;
}

std::vector<double> transpose(const std::vector<double>& a, int r, int c) {
  std::vector<double> out(a.size());
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) out[j * r + i] = a[i * c + j];
  return out;
}

TEST(DataflowEvaluation, EmulatedForwardAndBackwardOfAnMlpEqualTheUnshardedComputation) {
  // x [8, 6] (rows over dp) through w1 [6, 12] and w2 [12, 6], weights placed by the
  // planner on mesh [dp 2, tp 2], fp32. Values flow through the step; the test recomputes
  // the whole forward and backward itself from the step's seeded inputs (x, w1, w2 and
  // the loss gradient dy) and compares every op's sharded result, gathered from the
  // simulated ranks, with it:
  //   h = x w1, y = h w2, dh = dy w2ᵀ, dw2 = hᵀ dy, dx = dh w1ᵀ, dw1 = xᵀ dh.
  const std::string yaml = "version: 2\nname: mlp-emulated\n" + cluster_yaml(4) +
                           "mesh: {shape: [2, 2], names: [dp, tp]}\ndtype: fp32\n"
                           "cost_model: analytic\n"
                           "tensors:\n"
                           "  x: {shape: [8, 6], placements: [\"S(0)\", R]}\n"
                           "  w1: {shape: [6, 12], parameter: true}\n"
                           "  w2: {shape: [12, 6], parameter: true}\n"
                           "training: {optimizer: sgd}\n"
                           "workload:\n"
                           "  - {name: up, op: mm, a: x, b: w1, output: h}\n"
                           "  - {name: down, op: mm, a: h, b: w2, output: y}\n";
  EvaluationOptions options;
  options.emulate = true;
  options.host_memory = HostMemory{int64_t{16} << 30, "test"};
  const auto prepared = prepare_scenario(load_scenario_text(yaml, "mlp.yaml"), options);
  const auto backend = make_backend("sim", &prepared->scenario.cluster);
  const RunResult result = backend->run(prepared->workload.program, prepared->request);
  const auto& ops = prepared->workload.ops;
  const auto lowered = [&](const std::string& name) -> const strategies::LoweredOp& {
    for (const auto& op : ops)
      if (op.op->name == name) return op;
    throw std::runtime_error("no op " + name);
  };
  const auto& x = lowered("up").global_inputs.at(0);
  const auto& w1 = lowered("up").global_inputs.at(1);
  const auto& w2 = lowered("down").global_inputs.at(1);
  const auto& dy = lowered("down.dgrad").global_inputs.at(0);  // the seed
  const auto h = matmul(x, w1, 8, 6, 12);
  const auto y = matmul(h, w2, 8, 12, 6);
  const auto dh = matmul(dy, transpose(w2, 12, 6), 8, 6, 12);
  const auto dw2 = matmul(transpose(h, 8, 12), dy, 12, 8, 6);
  const auto dx = matmul(dh, transpose(w1, 6, 12), 8, 12, 6);
  const auto dw1 = matmul(transpose(x, 8, 6), dh, 6, 8, 12);
  const std::vector<std::pair<std::string, const std::vector<double>*>> expected{
      {"up", &h},           {"down", &y},      {"down.dgrad", &dh},
      {"down.wgrad", &dw2}, {"up.dgrad", &dx}, {"up.wgrad", &dw1}};
  for (const auto& [name, want] : expected) {
    SCOPED_TRACE(name);
    const auto& op = lowered(name);
    std::vector<std::vector<double>> pieces;
    for (int r = 0; r < 4; ++r)
      pieces.push_back(decode_values(result.output(name, r).bytes, DType::fp32));
    const TensorSpec out{op.lowered->output_shape, DType::fp32, op.lowered->output_placements};
    const auto got = strategies::assemble_global(out, prepared->workload.mesh, pieces);
    ASSERT_EQ(got.values.size(), want->size());
    EXPECT_LT(got.max_replica_mismatch, 1e-4);
    for (size_t i = 0; i < want->size(); ++i) EXPECT_NEAR(got.values[i], (*want)[i], 1e-4) << i;
  }
  // Gradient reductions overlap the backward's collectives on the same groups: each
  // stream has its own signal index, so no wait took another's signal (sim/).
  EXPECT_TRUE(result.warnings.empty()) << ::testing::PrintToString(result.warnings);
  // The report's own per-op check agrees.
  const Evaluation e = report_evaluation(*prepared, result);
  for (const OpReport& op : e.report.ops)
    if (op.max_abs_error) {
      EXPECT_LT(*op.max_abs_error, 1e-4) << op.name;
    }
}

}  // namespace
}  // namespace symmesh::evaluation
