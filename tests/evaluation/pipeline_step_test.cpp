// Pipeline stages in the dataflow (a pp mesh dim, docs/scenario-format.md "Pipeline
// stages"): each stage runs its ops on its own ranks in 1F1B order and sends what the next
// needs with put_signal; the simulated step keeps the 1F1B bubble's closed form, each stage
// holds the micro-batches in flight that 1F1B keeps, and the values of every op stay exact.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "scenario/scenario_loader.hpp"
#include "strategies/analytic_cost_model.hpp"
#include "strategies/dataflow_graph.hpp"
#include "strategies/pipeline_transfers.hpp"
#include "strategies/planned_step_price.hpp"
#include "strategies/step_memory.hpp"
#include "strategies/workload_lowering.hpp"
#include "tests/evaluation/emulation_check.hpp"

namespace symmesh::evaluation {
namespace {

using testing::expect_emulated_ops_exact;
using ::testing::HasSubstr;

Evaluation simulate(const std::string& yaml, bool emulate = false) {
  EvaluationOptions options;
  options.emulate = emulate;
  options.host_memory = HostMemory{int64_t{16} << 30, "test"};
  return evaluate_scenario(load_scenario_text(yaml, "pipeline.yaml"), options);
}

// Two layers y0 = x·w0, y1 = y0·w1 (x [128, 8192], w [8192, 8192], bf16), trained with SGD
// over `micro_batches`; with `pipelined` each layer is a stage of one GPU (mesh [pp 2, tp 1]),
// else both run on one GPU. HBM at 100 TB/s makes the updates (8192² · 6 B) negligible.
std::string two_layers(int micro_batches, bool pipelined, const std::string& capacity = "80 GiB") {
  const std::string gpus = pipelined ? "2" : "1";
  return "version: 2\nname: chain\n"
         "cluster: {nodes: 1, gpus_per_node: " +
         gpus + ", gpu: {peak: {bf16: 100 TFLOP/s}, memory: {capacity: " + capacity +
         ", bandwidth: 100 TB/s}}, "
         "intra_node: {kind: nvswitch, bandwidth: 100 GB/s, latency: 1 us}}\n" +
         (pipelined ? "mesh: {shape: [2, 1], names: [pp, tp]}\n"
                    : "mesh: {shape: [1], names: [tp]}\n") +
         "cost_model: analytic\n"
         "tensors:\n"
         "  x: {shape: [128, 8192], placements: [R]}\n"
         "  w0: {shape: [8192, 8192], parameter: true}\n"
         "  w1: {shape: [8192, 8192], parameter: true}\n"
         "workload:\n"
         "  - {name: layer0, op: mm, a: x, b: w0, output: y0" +
         (pipelined ? ", stage: 0" : "") +
         "}\n"
         "  - {name: layer1, op: mm, a: y0, b: w1, output: y1" +
         (pipelined ? ", stage: 1" : "") +
         "}\n"
         "training: {optimizer: sgd, micro_batches: " +
         std::to_string(micro_batches) + "}\n";
}

TEST(PipelineStep, OneF1BTakesTheBubbleOfItsClosedForm) {
  // Each layer's forward is one GEMM of 2·128·8192² FLOPs (time t), its backward two (dx and
  // dw: 2t), the same on both stages. One GPU runs both layers' m micro-batches in series:
  // T1 = m · 2 · 3t. Two stages under 1F1B finish after (m + p − 1) · (t_f + t_b) = (m + 1) · 3t
  // (Narayanan et al., SC'21, §2.2: the bubble is (p − 1) of the m + p − 1 slots), so
  // T_pp / T1 = (m + 1) / (2m). What the closed form leaves out: two 2 MiB sends (y0 forward,
  // dy0 backward, 21 us each at 100 GB/s) on the critical path, and the updates; 3 % covers
  // them (2.1 % at m = 8, 1.8 % at m = 4).
  for (int m : {4, 8}) {
    const double pipelined = simulate(two_layers(m, true)).report.total_time_s;
    const double serial = simulate(two_layers(m, false)).report.total_time_s;
    const double want = (m + 1.0) / (2.0 * m);
    EXPECT_NEAR(pipelined / serial, want, 0.03 * want) << "m = " << m;
    EXPECT_GT(pipelined / serial, want) << "the sends cannot make it faster, m = " << m;
  }
}

TEST(PipelineStep, TheFirstStageHoldsTheMicroBatchesInFlight) {
  // Per stage (tp 1, so every piece is whole), x, y0, dy0, dx, y1, dy1 are 128·8192·2 B =
  // 2 MiB each. Graph order: layer0 (0), layer1 (1), layer1.dgrad (2), layer1.wgrad (3),
  // layer0.dgrad (4), layer0.wgrad (5).
  //   stage 0: x is read by layer0 and layer0.wgrad, kept into the backward; at layer0.dgrad
  //            x, dy0 (received) and dx are alive: 3 tensors, x counted once per micro-batch
  //            in flight, min(p − 0, m) = min(2, m).
  //   stage 1: y0 (received) kept for layer1.wgrad, in flight min(p − 1, m) = 1; at
  //            layer1.dgrad y0, dy1 and dy0 are alive: 6 MiB whatever m.
  // Each stage holds its own weight, 8192² · 2 B = 128 MiB (and its gradient; SGD no state).
  constexpr int64_t kMiB = int64_t{1} << 20;
  for (int m : {1, 4}) {
    const Scenario s = load_scenario_text(two_layers(m, true), "pipeline.yaml");
    const strategies::AnalyticCostModel model(s.cluster);
    const strategies::PlannedWorkload planned = strategies::plan_workload(s, model);
    const strategies::DataflowGraph graph = strategies::build_dataflow_graph(s);
    const auto stages = strategies::stage_memories(graph, planned.layout->placements,
                                                   planned.layout->transient_bytes, planned.mesh);
    ASSERT_EQ(stages.size(), 2u);
    const int64_t in_flight = m == 1 ? 1 : 2;
    EXPECT_EQ(stages[0].activations_bytes, (2 * in_flight + 4) * kMiB) << "m = " << m;
    EXPECT_EQ(stages[1].activations_bytes, 6 * kMiB) << "m = " << m;
    EXPECT_EQ(stages[0].parameters_bytes, 128 * kMiB);
    EXPECT_EQ(stages[1].parameters_bytes, 128 * kMiB);
    EXPECT_EQ(stages[0].gradients_bytes, 128 * kMiB);
    // The step's memory is the busiest stage's.
    EXPECT_EQ(planned.layout->memory.peak_bytes(),
              std::max(stages[0].peak_bytes(), stages[1].peak_bytes()));
  }
}

TEST(PipelineStep, EachStageFitsOnItsOwn) {
  // With Adam at m = 4 stage 0 holds its weight (8192² · 2 B = 128 MiB), its gradient (128 MiB),
  // Adam's 12 B per element (768 MiB) and 8 MiB of activations (above): 1032 MiB; stage 1
  // 1030 MiB. One GPU holding both layers would need 2048 MiB of weights, gradients and state
  // alone: a search counting the whole step on one rank would drop every layout here.
  constexpr int64_t kMiB = int64_t{1} << 20;
  const auto adam = [](const std::string& capacity) {
    std::string yaml = two_layers(4, true, capacity);
    yaml.replace(yaml.find("optimizer: sgd"), 14, "optimizer: adam");
    return load_scenario_text(yaml, "pipeline.yaml");
  };
  const Scenario fits = adam("1032 MiB");
  const strategies::PlannedWorkload planned =
      strategies::plan_workload(fits, strategies::AnalyticCostModel(fits.cluster));
  EXPECT_EQ(planned.layout->memory.peak_bytes(), 1032 * kMiB);
  EXPECT_EQ(planned.layout->memory.stage, 0);
  ASSERT_EQ(planned.layout->stage_memory.size(), 2u);
  EXPECT_EQ(planned.layout->stage_memory[1].peak_bytes(), 1030 * kMiB);

  const Scenario tight = adam("1031 MiB");
  try {
    strategies::plan_workload(tight, strategies::AnalyticCostModel(tight.cluster));
    FAIL() << "a stage of 1032 MiB accepted on 1031 MiB";
  } catch (const DoesNotFit& e) {
    EXPECT_THAT(e.message(), HasSubstr("optimizer state 768.00 MiB"));
    EXPECT_THAT(e.message(), HasSubstr("on pipeline stage 0"));
  }
}

// A generated model's step that fits in no layout is reported at the model: block that
// generated it (line 5, its map at column 8): a tiny Llama-shaped model on GPUs of 1 MiB,
// whose fp32 Adam state alone (12 B a parameter, tens of thousands of parameters) is more.
TEST(PipelineStep, AModelStepThatDoesNotFitIsReportedAtItsModelBlock) {
  const Scenario s = load_scenario_text(
      "version: 2\nname: tiny\ncluster: {nodes: 1, gpus_per_node: 2, gpu: {peak: {bf16: "
      "989.4 TFLOP/s}, memory: {capacity: 1 MiB, bandwidth: 3.35 TB/s}}, intra_node: {kind: "
      "nvswitch, bandwidth: 450 GB/s, latency: 1 us}}\nmesh: {shape: [1, 2], names: [dp, tp]}\n"
      "model: {layers: 1, hidden: 64, heads: 4, ffn: 128, vocab: 4096, seq: 24}\n"
      "training: {optimizer: adam}\n",
      "tiny.yaml");
  try {
    strategies::plan_workload(s, strategies::AnalyticCostModel(s.cluster));
    FAIL() << "a step of more than 1 MiB accepted on 1 MiB";
  } catch (const DoesNotFit& e) {
    EXPECT_EQ(e.where(), "tiny.yaml:5:8");
    EXPECT_THAT(e.message(), HasSubstr("has 1.00 MiB"));
  }
}

// Four layers y_k = y_(k-1)·w_k (y_-1 = x; x [128, 8192], w [8192, 8192], bf16), SGD, over
// `micro_batches`. `stages` gives each layer's `stage:`; `virtual_stages` the chunks per
// stage; without stages all four run on one GPU.
std::string four_layers(int micro_batches, const std::vector<int>& stages, int virtual_stages) {
  const bool pipelined = !stages.empty();
  std::string yaml =
      "version: 2\nname: chain4\ncluster: {nodes: 1, gpus_per_node: " +
      std::string(pipelined ? "2" : "1") +
      ", gpu: {peak: {bf16: 100 TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 100 TB/s}}, "
      "intra_node: {kind: nvswitch, bandwidth: 100 GB/s, latency: 1 us}}\n" +
      (pipelined ? "mesh: {shape: [2, 1], names: [pp, tp]}\n"
                 : "mesh: {shape: [1], names: [tp]}\n") +
      "cost_model: analytic\ntensors:\n  x: {shape: [128, 8192], placements: [R]}\n";
  for (int k = 0; k < 4; ++k)
    yaml += "  w" + std::to_string(k) + ": {shape: [8192, 8192], parameter: true}\n";
  yaml += "workload:\n";
  for (int k = 0; k < 4; ++k)
    yaml += "  - {name: layer" + std::to_string(k) +
            ", op: mm, a: " + (k == 0 ? std::string("x") : "y" + std::to_string(k - 1)) + ", b: w" +
            std::to_string(k) + ", output: y" + std::to_string(k) +
            (pipelined ? ", stage: " + std::to_string(stages[k]) : "") + "}\n";
  yaml += "training: {optimizer: sgd, micro_batches: " + std::to_string(micro_batches) +
          (virtual_stages > 1 ? ", virtual_stages: " + std::to_string(virtual_stages) : "") + "}\n";
  return yaml;
}

TEST(PipelineStep, InterleavingShrinksTheBubbleByItsChunks) {
  // Each layer is one forward GEMM (t) and two backward (2t). On one GPU the four layers take
  // T1 = m · 4 · 3t. Two stages of two layers under 1F1B: (m + p − 1) · 6t, T/T1 =
  // (m + 1)/(2m). Interleaved, each stage holding two chunks of one layer (layers 0 and 2 on
  // stage 0, 1 and 3 on stage 1): the bubble is (p − 1)/(v·m) of the useful time (Narayanan et
  // al., SC'21, §2.2), T = m · 6t · (1 + 1/(2m)), T/T1 = (1 + 1/(2m))/2. The sends (2 MiB,
  // 21 us each; three boundaries each way interleaved) and the updates are left out: 3 %.
  for (int m : {4, 8}) {
    const double one_gpu = simulate(four_layers(m, {}, 1)).report.total_time_s;
    const Evaluation plain = simulate(four_layers(m, {0, 0, 1, 1}, 1));
    const Evaluation interleaved = simulate(four_layers(m, {0, 1, 2, 3}, 2));
    const double want_plain = (m + 1.0) / (2.0 * m);
    const double want_interleaved = (1.0 + 1.0 / (2.0 * m)) / 2.0;
    EXPECT_NEAR(plain.report.total_time_s / one_gpu, want_plain, 0.03 * want_plain) << m;
    EXPECT_NEAR(interleaved.report.total_time_s / one_gpu, want_interleaved,
                0.03 * want_interleaved)
        << m;
    // The sends of each kind are waited for in the order they were sent: a crossed signal
    // would be a warning.
    EXPECT_TRUE(interleaved.report.warnings.empty()) << interleaved.report.warnings.front();
    ASSERT_TRUE(interleaved.report.step.has_value());
    EXPECT_DOUBLE_EQ(interleaved.report.step->bubble_fraction, 1.0 / (2.0 * m));
  }
}

TEST(PipelineStep, AnInterleavedStageHoldsItsWarmUpsChunks) {
  // p = 2, v = 2, m = 4: stage 0 runs (p − 1)·2 + (v − 1)·p = 4 chunk-forwards before its first
  // backward, so 5 chunks are in flight: 5/2 micro-batches' worth of what its two chunks
  // keep (x for layer0.wgrad, the received y1 for layer2.wgrad: 2 MiB each, 5 MiB each
  // weighted). Graph order: layer0 (0), layer1 (1), layer2 (2), layer3 (3), layer3.dgrad (4),
  // layer3.wgrad (5), layer2.dgrad (6), layer2.wgrad (7), layer1.dgrad (8), layer1.wgrad (9),
  // layer0.dgrad (10), layer0.wgrad (11). At layer2.dgrad stage 0 holds x, y1, the received
  // dy2 and the dy1 it makes: 5 + 5 + 2 + 2 = 14 MiB, its peak (layer0 7, layer2 12,
  // layer2.wgrad 12, layer0.dgrad 9 MiB).
  constexpr int64_t kMiB = int64_t{1} << 20;
  const Scenario s = load_scenario_text(four_layers(4, {0, 1, 2, 3}, 2), "pipeline.yaml");
  const strategies::PlannedWorkload planned =
      strategies::plan_workload(s, strategies::AnalyticCostModel(s.cluster));
  ASSERT_EQ(planned.layout->stage_memory.size(), 2u);
  EXPECT_EQ(planned.layout->stage_memory[0].activations_bytes, 14 * kMiB);
  // Two weights and their gradients on each stage.
  EXPECT_EQ(planned.layout->stage_memory[0].parameters_bytes, 256 * kMiB);
}

TEST(PipelineStep, InterleavingNeedsMicroBatchesInWholePasses) {
  // Megatron-LM's interleaved schedule runs micro-batches in groups of p.
  try {
    simulate(four_layers(3, {0, 1, 2, 3}, 2));
    FAIL() << "3 micro-batches over 2 stages accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.message(), HasSubstr("the interleaved schedule needs the 3 micro-batches to "
                                       "be a multiple of the 2 pipeline stages"));
  }
}

TEST(PipelineStep, WhatCrossesAStageIsSentEachWay) {
  const Scenario s = load_scenario_text(two_layers(2, true), "pipeline.yaml");
  const strategies::AnalyticCostModel model(s.cluster);
  const strategies::PlannedWorkload planned = strategies::plan_workload(s, model);
  // y0 goes forward from stage 0 to stage 1, its gradient dy0 back: 2 MiB per rank each.
  ASSERT_EQ(planned.transfers.size(), 2u);
  EXPECT_EQ(planned.transfers[0].tensor, "y0");
  EXPECT_EQ(planned.transfers[0].from_stage, 0);
  EXPECT_EQ(planned.transfers[0].to_stage, 1);
  EXPECT_TRUE(planned.transfers[0].sent_in_forward);
  EXPECT_EQ(planned.transfers[1].tensor, "dy0");
  EXPECT_EQ(planned.transfers[1].from_stage, 1);
  EXPECT_EQ(planned.transfers[1].to_stage, 0);
  EXPECT_FALSE(planned.transfers[1].sent_in_forward);
  for (const auto& t : planned.transfers) EXPECT_EQ(t.bytes, 128 * 8192 * 2);
  // The simulated step sends them: one row per tensor in the trace labels, no warning (a
  // crossed signal would be one).
  const Evaluation e = simulate(two_layers(2, true));
  EXPECT_TRUE(e.report.warnings.empty()) << e.report.warnings.front();
  EXPECT_EQ(e.report.mesh, "2x1 (pp,tp)");
}

// A Llama-style model of 4 layers on mesh [pp 2, dp 2, tp 2], fp64: the generator puts the
// embedding and layers 0-1 on stage 0, layers 2-3, the final norm, output and loss on stage 1.
const std::string kModel = R"yaml(version: 2
name: tiny-pipeline
cluster: {nodes: 1, gpus_per_node: 8, gpu: {peak: {bf16: 1 TFLOP/s, fp64: 1 TFLOP/s}, memory: {capacity: 1 GiB, bandwidth: 1 TB/s}}, intra_node: {kind: nvswitch, bandwidth: 1 GB/s, latency: 1 us}}
mesh: {shape: [2, 2, 2], names: [pp, dp, tp]}
dtype: fp64
model: {layers: 4, hidden: 16, heads: 4, kv_heads: 2, ffn: 32, activation: swiglu, vocab: 64, seq: 8, micro_batch: 1, global_batch: 4}
training: {optimizer: sgd}
)yaml";

TEST(PipelineStep, TheGeneratorSplitsTheModelOverTheStages) {
  const Scenario s = load_scenario_text(kModel, "model.yaml");
  const auto stage_of = [&](const std::string& name) {
    for (const WorkloadOp& op : s.workload)
      if (op.name == name) return op.stage;
    throw std::runtime_error("no op " + name);
  };
  EXPECT_EQ(stage_of("embed"), 0);
  EXPECT_EQ(stage_of("l1_residual2"), 0);
  EXPECT_EQ(stage_of("l2_norm1"), 1);
  EXPECT_EQ(stage_of("loss"), 1);
  // global_batch 4 over dp 2 replicas of micro_batch 1: 2 micro-batches per replica.
  EXPECT_EQ(s.training->micro_batch_count(), 2);
}

TEST(PipelineStep, ThePipelinedSearchTakesTheFinalistWhoseScheduleEndsFirst) {
  // The objective adds the stages in series; given the cluster, the search prices the first
  // kScheduledFinalists fitting layouts of its final beam through their schedule
  // (planned_step_price.hpp) and takes the one that ends first. So the layout taken is
  // priced as planning prices the step, and no later than the objective's own first (one
  // of the finalists), which the search without the cluster takes.
  const Scenario s = load_scenario_text(kModel, "model.yaml");
  const strategies::AnalyticCostModel model(s.cluster);
  const strategies::DataflowGraph graph = strategies::build_dataflow_graph(s);
  const DeviceMesh mesh(s.stage_mesh_shape(), s.stage_mesh_names());
  strategies::LayoutSearchOptions options = strategies::layout_search_options(s, model);
  ASSERT_TRUE(options.cluster);
  const strategies::StepLayout scheduled = strategies::search_layout(graph, mesh, model, options);
  options.cluster.reset();
  const strategies::StepLayout in_series = strategies::search_layout(graph, mesh, model, options);
  EXPECT_EQ(in_series.scheduled_us, 0);
  const auto price = [&](const strategies::StepLayout& layout) {
    return strategies::price_planned_step(
               graph, layout, strategies::stage_transfers(graph, layout.placements, mesh), mesh,
               s.cluster)
        .step_us;
  };
  EXPECT_DOUBLE_EQ(scheduled.scheduled_us, price(scheduled));
  EXPECT_LE(scheduled.scheduled_us, price(in_series));
  // Planning takes it: the plan's price is that layout's.
  const strategies::PlannedWorkload planned = strategies::plan_workload(s, model);
  ASSERT_TRUE(planned.price);
  EXPECT_DOUBLE_EQ(planned.price->step_us, scheduled.scheduled_us);
}

TEST(PipelineStep, TheGeneratorSplitsTheModelOverVirtualStages) {
  // pp 2 × 2 chunks: 4 virtual stages of one layer each; stage 0 holds chunks 0 and 2.
  std::string yaml = kModel;
  yaml.replace(yaml.find("training: {optimizer: sgd}"), 26,
               "training: {optimizer: sgd, virtual_stages: 2}");
  const Scenario s = load_scenario_text(yaml, "model.yaml");
  std::vector<int> layer_stage;
  for (int l = 0; l < 4; ++l)
    for (const WorkloadOp& op : s.workload)
      if (op.name == "l" + std::to_string(l) + "_qkv") layer_stage.push_back(op.stage);
  EXPECT_EQ(layer_stage, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(s.workload.back().name, "loss");
  EXPECT_EQ(s.workload.back().stage, 3);
  // And its emulated step is exact too.
  const Evaluation e = simulate(yaml, true);
  EXPECT_GT(expect_emulated_ops_exact(e.report), 100);
  EXPECT_TRUE(e.report.warnings.empty()) << e.report.warnings.front();
}

TEST(PipelineStep, EveryOpOfAPipelinedModelStepIsExact) {
  const Evaluation e = simulate(kModel, true);
  // Every matrix and tensor op of the last micro-batch, on both stages, checked.
  EXPECT_GT(expect_emulated_ops_exact(e.report), 100);
  EXPECT_TRUE(e.report.warnings.empty()) << e.report.warnings.front();
}

// Two stages of one GPU, x and w declared; the ops follow from line 9.
const std::string kTwoStagesHead = R"yaml(version: 2
cluster: {nodes: 1, gpus_per_node: 2, gpu: {peak: {bf16: 1 TFLOP/s}, memory: {capacity: 1 GiB, bandwidth: 1 TB/s}}, intra_node: {kind: nvswitch, bandwidth: 1 GB/s, latency: 1 us}}
mesh: {shape: [2, 1], names: [pp, tp]}
cost_model: analytic
tensors:
  x: {shape: [8, 8], placements: [R]}
  w: {shape: [8, 8], parameter: true}
workload:
)yaml";

TEST(PipelineStep, AForwardOpReadingALaterStageIsRefused) {
  const std::string yaml =
      kTwoStagesHead + R"yaml(  - {name: first, op: mm, a: x, b: w, output: y, stage: 1}
  - {name: second, op: gelu, a: y, output: z, stage: 0}
)yaml";
  try {
    simulate(yaml);
    FAIL() << "accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.message(), HasSubstr("op 'second' on stage 0 reads 'y', which op 'first' "
                                       "makes on stage 1"));
    EXPECT_EQ(e.where(), "pipeline.yaml:10:5");
  }
}

TEST(PipelineStep, AWeightReadOnTwoStagesIsRefused) {
  const std::string yaml =
      kTwoStagesHead + R"yaml(  - {name: first, op: mm, a: x, b: w, output: y, stage: 0}
  - {name: second, op: mm, a: y, b: w, output: z, stage: 1}
)yaml";
  try {
    simulate(yaml);
    FAIL() << "accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.message(), HasSubstr("parameter 'w' is read on stage 0 (op 'first') and on "
                                       "stage 1 (op 'second')"));
  }
}

}  // namespace
}  // namespace symmesh::evaluation
