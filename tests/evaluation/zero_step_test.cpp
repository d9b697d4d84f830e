// ZeRO-2 and 3 in the planned step (docs/scenario-format.md, training.zero). ZeRO-2: every
// micro-batch's gradients reduce-scattered, the updated shards gathered once. ZeRO-3: the
// weights kept as
// their optimizer state's shard over dp, each reader's weights gathered before it in every
// micro-batch (prefetched one unit ahead, as FSDP does), every micro-batch's gradients
// reduce-scattered, and no gather after the updates. Counts are worked by hand from the
// two-layer step below; times are checked as the planned step's two readings (simulated and
// priced, strategies/planned_step_price.hpp) agreeing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "core/errors.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "scenario/scenario_loader.hpp"
#include "strategies/analytic_cost_model.hpp"
#include "strategies/workload_lowering.hpp"
#include "tests/evaluation/emulation_check.hpp"

namespace symmesh::evaluation {
namespace {

using ::testing::HasSubstr;

// y0 = x·w0, y1 = y0·w1 (x [rows, width] split by rows over dp, w [width, width]
// replicated), trained with Adam over `micro_batches` on [dp 4] of one node, ZeRO stage
// `zero`, in `dtype`.
std::string two_layers(int zero, int micro_batches, const std::string& mesh = "[4], names: [dp]",
                       int rows = 16384, int width = 4096, const std::string& dtype = "bf16") {
  const std::string w = std::to_string(width);
  return "version: 2\nname: zero3\n"
         "cluster: {nodes: 1, gpus_per_node: 4, gpu: {peak: {bf16: 989 TFLOP/s, fp64: 67 "
         "TFLOP/s}, memory: {capacity: 80 GiB, bandwidth: 3.35 TB/s}}, "
         "intra_node: {kind: nvswitch, bandwidth: 450 GB/s, latency: 1 us}}\n"
         "mesh: {shape: " +
         mesh + "}\ndtype: " + dtype +
         "\ncost_model: analytic\n"
         "tensors:\n"
         "  x: {shape: [" +
         std::to_string(rows) + ", " + w +
         "], placements: [S(0)]}\n"
         "  w0: {shape: [" +
         w + ", " + w +
         "], placements: [R], parameter: true}\n"
         "  w1: {shape: [" +
         w + ", " + w +
         "], placements: [R], parameter: true}\n"
         "workload:\n"
         "  - {name: layer0, op: mm, a: x, b: w0, output: y0}\n"
         "  - {name: layer1, op: mm, a: y0, b: w1, output: y1}\n"
         "training: {optimizer: adam, zero: " +
         std::to_string(zero) + ", micro_batches: " + std::to_string(micro_batches) + "}\n";
}

Evaluation simulate(const std::string& yaml, bool emulate = false) {
  EvaluationOptions options;
  options.emulate = emulate;
  options.host_memory = HostMemory{int64_t{16} << 30, "test"};
  return evaluate_scenario(load_scenario_text(yaml, "zero3.yaml"), options);
}

// The weight gathers and gradient reductions the lowered step runs in the micro-batches
// before the last (its "mb k: …" labels).
struct EarlierComm {
  int gathers = 0;
  int reductions = 0;
};
EarlierComm earlier_comm(const Scenario& s,
                         const std::shared_ptr<const strategies::PlannedWorkload>& planned) {
  const strategies::LoweredWorkload lowered =
      strategies::lower_workload(s, planned, {}, Program(planned->world_size()));
  EarlierComm out;
  for (const auto& label : lowered.earlier_labels) {
    out.gathers += label.name.find(".param_") != std::string::npos;
    out.reductions += label.name.find(".grad_") != std::string::npos;
  }
  return out;
}

TEST(ZeroThreeStep, EachReaderGathersItsWeightsInEveryMicroBatch) {
  // Four ops read a weight: layer0 (w0), layer1 (w1), and in the backward layer1.dgrad
  // (w1: dy0 = dy1 · w1ᵀ) and layer0.dgrad (w0: the step input's gradient, which the graph
  // derives too). Each waits for an all-gather over dp of its whole weight, 4096² · 2 B =
  // 32 MiB, in each of the m = 3 micro-batches: 4 gathers planned, lowered 4 · 3 = 12
  // times. Both gradients, 4096² = 16.8 M elements each and 33.6 M together, fill less than
  // one bucket over dp 4 (max(40 M, 4 M) elements, strategies/gradient_buckets.hpp): one
  // reduce-scatter of both, 2 x 32 MiB, in every micro-batch (1 planned, 3 lowered), named by
  // the first gradient made (w1's) and the last (w0's); nothing is gathered after the
  // updates.
  const Scenario s = load_scenario_text(two_layers(3, 3), "zero3.yaml");
  const strategies::AnalyticCostModel model(s.cluster);
  auto planned =
      std::make_shared<const strategies::PlannedWorkload>(strategies::plan_workload(s, model));
  std::vector<std::string> gathers, reductions;
  for (size_t i = 0; i < planned->ops.size(); ++i) {
    const WorkloadOp& op = planned->ops[i];
    if (op.name.find(".param_") != std::string::npos) {
      EXPECT_TRUE(planned->every_micro_batch[i]) << op.name;
      EXPECT_NE(planned->phase[i], strategies::StepPhase::after) << op.name;
      EXPECT_EQ(op.kind, OpKind::all_gather) << op.name;
      EXPECT_EQ(op.bytes, 4096 * 4096 * 2) << op.name;
      const int reader = planned->gather_reader[i];
      ASSERT_GT(reader, static_cast<int>(i)) << op.name;
      gathers.push_back(op.name + " -> " + planned->ops[reader].name);
    }
    if (op.name.find(".grad_") != std::string::npos) {
      EXPECT_TRUE(planned->every_micro_batch[i]) << op.name;
      EXPECT_EQ(op.kind, OpKind::reduce_scatter) << op.name;
      EXPECT_EQ(op.bytes, 2 * 4096 * 4096 * 2) << op.name;
      reductions.push_back(op.name);
    }
  }
  EXPECT_THAT(gathers, ::testing::UnorderedElementsAre(
                           "w0.param_all_gather.layer0 -> layer0",
                           "w1.param_all_gather.layer1 -> layer1",
                           "w1.param_all_gather.layer1.dgrad -> layer1.dgrad",
                           "w0.param_all_gather.layer0.dgrad -> layer0.dgrad"));
  EXPECT_THAT(reductions, ::testing::ElementsAre("w1..w0.grad_reduce_scatter"));
  // Lowered: the last micro-batch's under their own names, the two before it labelled by
  // micro-batch ("mb 0: …", "mb 1: …").
  const EarlierComm earlier = earlier_comm(s, planned);
  EXPECT_EQ(earlier.gathers, 2 * 4);
  EXPECT_EQ(earlier.reductions, 2 * 1);
  // The memory: each weight kept as its quarter, 8 MiB, as is its gradient.
  EXPECT_EQ(planned->layout->memory.parameters_bytes, 2 * (int64_t{8} << 20));
  EXPECT_EQ(planned->layout->memory.gradients_bytes, 2 * (int64_t{8} << 20));
}

TEST(ZeroThreeStep, AUnitsWeightsAreGatheredInOneCollective) {
  // The same two ops marked as one decoder layer (`layer: 0`): one FSDP unit in the forward
  // and one in the backward (strategies/step_streams.hpp), each gathering both weights in
  // one all-gather of 2 x 32 MiB before its first reader, as FSDP gathers a unit's flat
  // parameter: 2 gathers planned (4 before), lowered 2 x 2 in the two earlier micro-batches.
  std::string yaml = two_layers(3, 3);
  yaml.replace(yaml.find("output: y0}"), 11, "output: y0, layer: 0}");
  yaml.replace(yaml.find("output: y1}"), 11, "output: y1, layer: 0}");
  const Scenario s = load_scenario_text(yaml, "zero3.yaml");
  const strategies::AnalyticCostModel model(s.cluster);
  auto planned =
      std::make_shared<const strategies::PlannedWorkload>(strategies::plan_workload(s, model));
  std::vector<std::string> gathers;
  for (size_t i = 0; i < planned->ops.size(); ++i) {
    const WorkloadOp& op = planned->ops[i];
    if (op.name.find(".param_") == std::string::npos) continue;
    EXPECT_EQ(op.bytes, 2 * 4096 * 4096 * 2) << op.name;
    gathers.push_back(op.name + " -> " + planned->ops[planned->gather_reader[i]].name);
  }
  // Named by the first and last weight read, in the order the unit reads them.
  EXPECT_THAT(gathers, ::testing::ElementsAre("w0..w1.param_all_gather.layer0 -> layer0",
                                              "w1..w0.param_all_gather.layer1.dgrad -> "
                                              "layer1.dgrad"));
  EXPECT_EQ(earlier_comm(s, planned).gathers, 2 * 2);
  // The price waits for the whole unit's gather before its first op, as the simulator does.
  const Evaluation e = simulate(yaml);
  ASSERT_TRUE(e.report.step);
  EXPECT_NEAR(e.report.step->priced_step_s / e.report.total_time_s, 1.0, 0.07);
}

TEST(ZeroThreeStep, ItsTwoReadingsAgreeAndItsValuesStayExact) {
  // The simulated step and its price through the schedule, for m = 1 and 3. Both run the
  // same rule (the gathers prefetched one unit ahead, the reduce-scatters queued before
  // the next gather), so they differ by what the cost model and the simulator give each
  // op: here the 32 MiB all-gather over 4 GPUs, priced about 74 us (the search's serial sum
  // less its matmuls and updates) against 59 us simulated, on
  // the exposed gathers (the first of each task, and those queued behind a reduce-scatter).
  // Measured: +5.5 % (m = 1) and +5.8 % (m = 3); 7 % bounds it. ZeRO-3 moves more than
  // ZeRO-1 (a gather per reader and micro-batch against one per weight): it cannot be
  // faster in simulation.
  for (int m : {1, 3}) {
    SCOPED_TRACE("m = " + std::to_string(m));
    const Evaluation three = simulate(two_layers(3, m));
    const Evaluation one = simulate(two_layers(1, m));
    const double simulated = three.report.total_time_s;
    ASSERT_TRUE(three.report.step);
    const double priced = three.report.step->priced_step_s;
    EXPECT_NEAR(priced / simulated, 1.0, 0.07) << priced << " s against " << simulated << " s";
    EXPECT_GT(simulated, one.report.total_time_s);
  }
  // Emulated in fp64: every op's sharded result against the unsharded product, exact but
  // for the summation order.
  const Evaluation emulated =
      simulate(two_layers(3, 2, "[4], names: [dp]", 256, 128, "fp64"), true);
  EXPECT_GT(testing::expect_emulated_ops_exact(emulated.report), 0);
}

TEST(ZeroTwoStep, ReduceScattersEveryMicroBatchAndGathersOnce) {
  // The same two layers with ZeRO-2 over m = 3 micro-batches: both gradients, one bucket
  // (as above), reduce-scattered in every micro-batch (1 planned, 1 · 2 in the micro-batches
  // before the last), so each rank accumulates its shard only: 2 x 32 MiB / 4 = 16 MiB of
  // gradients, beside the whole weights (2 x 32 MiB). The updated shards are gathered once,
  // by the same bucket (one all-gather), as the step starts, never in an earlier
  // micro-batch.
  const Scenario s = load_scenario_text(two_layers(2, 3), "zero2.yaml");
  const strategies::AnalyticCostModel model(s.cluster);
  auto planned =
      std::make_shared<const strategies::PlannedWorkload>(strategies::plan_workload(s, model));
  int reductions = 0, gathers = 0;
  for (size_t i = 0; i < planned->ops.size(); ++i) {
    const std::string& name = planned->ops[i].name;
    if (name.find(".grad_") != std::string::npos) {
      ++reductions;
      EXPECT_TRUE(planned->every_micro_batch[i]) << name;
    }
    if (name.find(".param_") != std::string::npos) {
      ++gathers;
      EXPECT_FALSE(planned->every_micro_batch[i]) << name;
      EXPECT_EQ(planned->phase[i], strategies::StepPhase::after) << name;
    }
  }
  EXPECT_EQ(reductions, 1);
  EXPECT_EQ(gathers, 1);
  const EarlierComm earlier = earlier_comm(s, planned);
  EXPECT_EQ(earlier.reductions, 1 * 2);
  EXPECT_EQ(earlier.gathers, 0);
  EXPECT_EQ(planned->layout->memory.gradients_bytes, 2 * (int64_t{8} << 20));
  EXPECT_EQ(planned->layout->memory.parameters_bytes, 2 * (int64_t{32} << 20));
  // Its two readings agree as ZeRO-3's do (the gap is the cost model's collectives against
  // the simulator's), and three reduce-scatters of each gradient cannot be faster than
  // ZeRO-1's one.
  const Evaluation two = simulate(two_layers(2, 3));
  ASSERT_TRUE(two.report.step);
  EXPECT_NEAR(two.report.step->priced_step_s / two.report.total_time_s, 1.0, 0.07);
  EXPECT_GE(two.report.total_time_s, simulate(two_layers(1, 3)).report.total_time_s);
}

TEST(ZeroThreeStep, IsNotPlannedWithPipelineStages) {
  // A stage would hold its gathered weights across the micro-batches its schedule
  // interleaves; the closed form refuses the pair too (check_training_layout).
  std::string yaml = two_layers(3, 2, "[2, 2], names: [pp, dp]");
  yaml.replace(yaml.find("output: y0}"), 11, "output: y0, stage: 0}");
  yaml.replace(yaml.find("output: y1}"), 11, "output: y1, stage: 1}");
  try {
    simulate(yaml);
    FAIL() << "ZeRO-3 with pipeline stages was planned";
  } catch (const InvalidArgument& e) {
    EXPECT_THAT(e.message(), HasSubstr("training.zero 3 with 2 pipeline stages is not modelled"));
    EXPECT_THAT(e.where(), HasSubstr("zero3.yaml:"));
  }
}

}  // namespace
}  // namespace symmesh::evaluation
