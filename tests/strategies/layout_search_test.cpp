// The layout search over a whole step. Expectations come from the published layouts
// (Megatron-LM, Shoeybi et al. 2019, §3 and Fig. 3: the first MLP weight split by columns,
// the second by rows, one all-reduce of the output forward and one of the input gradient
// backward) and from hand-computed byte counts.
#include "strategies/layout_search.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "core/errors.hpp"
#include "strategies/cost_model.hpp"
#include "tests/strategies/dataflow_test_support.hpp"

namespace symmesh::strategies {
namespace {

using testing::DataflowScenario;
using testing::tensor_named;

std::unique_ptr<CostModel> analytic(const ClusterSpec& cluster) {
  CostModelOptions options;
  options.cluster = cluster;
  options.devices_per_host = cluster.gpus_per_node;
  return make_cost_model("analytic", options);
}

// x[4096,4096] (R over tp) · w1[4096,16384] -> h;  h · w2[16384,4096] -> y, y wanted R.
// Weights are 128 MiB each in bf16, activations 32 MiB: replicating the weights would cost
// two 128 MiB gradient all-reduces, Megatron's pair two 32 MiB activation all-reduces.
Scenario megatron_mlp(bool place_weights) {
  DataflowScenario s({8}, {"tp"});
  s.input("x", {4096, 4096}, "R");
  if (place_weights)
    s.parameter("w1", {4096, 16384}, "R").parameter("w2", {16384, 4096}, "R");
  else
    s.parameter("w1", {4096, 16384}).parameter("w2", {16384, 4096});
  s.output("y", "R");
  s.op("up", OpKind::mm, "x", "w1", "h").op("down", OpKind::mm, "h", "w2", "y").training();
  return s.build();
}

TEST(LayoutSearch, FindsColumnThenRowParallelFromUnplacedWeights) {
  const Scenario scenario = megatron_mlp(false);
  const DataflowGraph g = build_dataflow_graph(scenario);
  const DeviceMesh mesh({8}, {"tp"});
  const auto model = analytic(scenario.cluster);
  const StepLayout layout = search_layout(g, mesh, *model);
  EXPECT_EQ(to_string(layout.placements[tensor_named(g, "w1")]), "S(1)");  // column-parallel
  EXPECT_EQ(to_string(layout.placements[tensor_named(g, "w2")]), "S(0)");  // row-parallel
  EXPECT_EQ(to_string(layout.placements[tensor_named(g, "h")]), "S(1)");
  EXPECT_EQ(to_string(layout.placements[tensor_named(g, "y")]), "R");
  // Sharded like their parameters, the weight gradients need no reduction.
  EXPECT_TRUE(layout.reductions.empty());
  // The down projection's output is Partial and is all-reduced to R at that op.
  const OpLayout& down = *layout.ops[1];
  EXPECT_EQ(to_string(down.candidate.output_placements), "P(sum)");
  ASSERT_TRUE(down.problem.output_target);
  EXPECT_EQ(to_string(*down.problem.output_target), "R");
  // Backward: x's gradient leaves up.dgrad Partial and is all-reduced (Megatron's f).
  const TensorId dx = tensor_named(g, "dx");
  EXPECT_EQ(to_string(layout.placements[dx]), "R");
  EXPECT_GT(layout.stats.layouts_priced, 0);
  EXPECT_TRUE(layout.fits);
}

TEST(LayoutSearch, ReplicatedWeightsPayTheirGradientAllReducesSizedFromTheTensor) {
  const Scenario scenario = megatron_mlp(true);
  const DataflowGraph g = build_dataflow_graph(scenario);
  const DeviceMesh mesh({8}, {"tp"});
  const StepLayout layout = search_layout(g, mesh, *analytic(scenario.cluster));
  // Each replicated weight's gradient is Partial or whole on every rank and must end R:
  // whichever strategy the wgrad takes, the gradient is reduced to R over tp.
  ASSERT_EQ(layout.reductions.size(), 2u);
  for (const GradientReduction& r : layout.reductions) {
    EXPECT_EQ(to_string(r.redistribution.to), "R");
    ASSERT_EQ(r.redistribution.steps.size(), 1u);
    const RedistributionStep& step = r.redistribution.steps[0];
    // 4096 x 16384 bf16 = 134,217,728 bytes: the all-reduce's (or all-gather's) buffer.
    EXPECT_EQ(step.buffer_bytes, 134217728);
  }
}

TEST(LayoutSearch, MemoryCountsParametersGradientsAndAdamState) {
  const Scenario scenario = megatron_mlp(true);
  const DataflowGraph g = build_dataflow_graph(scenario);
  const DeviceMesh mesh({8}, {"tp"});
  const StepLayout layout = search_layout(g, mesh, *analytic(scenario.cluster));
  // Two replicated 4096x16384 weights: 2 x 67,108,864 elements = 134,217,728 elements.
  // bf16 weights 268,435,456 B, bf16 gradients the same, Adam 12 B each: 1,610,612,736 B.
  EXPECT_EQ(layout.memory.parameters_bytes, 268435456);
  EXPECT_EQ(layout.memory.gradients_bytes, 268435456);
  EXPECT_EQ(layout.memory.optimizer_bytes, 1610612736);
  EXPECT_GT(layout.memory.activations_bytes, 0);
}

TEST(LayoutSearch, AStepThatCannotFitIsReportedWithItsNeed) {
  // Declared replicated weights of 2 x 134,217,728 elements with Adam need 16 B each
  // = 2 GiB static; a 1 GiB GPU cannot hold them whatever the strategies.
  const Scenario scenario = megatron_mlp(true);
  const DataflowGraph g = build_dataflow_graph(scenario);
  const DeviceMesh mesh({8}, {"tp"});
  LayoutSearchOptions options;
  options.memory_capacity_bytes = int64_t{1} << 30;
  const StepLayout layout = search_layout(g, mesh, *analytic(scenario.cluster), options);
  EXPECT_FALSE(layout.fits);
  // The need reported is the leanest layout's: the declared weights cannot move, so its
  // static part is exactly 134,217,728 x 16 B = 2,147,483,648 B.
  EXPECT_EQ(layout.memory.static_bytes(), 2147483648);
  EXPECT_GT(layout.memory.peak_bytes(), options.memory_capacity_bytes);
}

TEST(LayoutSearch, MemoryForcesShardedWeightsWhenReplicasDoNotFit) {
  // On a 2-D mesh [dp 2, tp 4], x split over dp by rows. Weights replicated over dp, at
  // best split 4 ways over tp, hold 67,108,864 / 4 elements x 16 B (bf16 weight and
  // gradient, 12 B of Adam state) = 268,435,456 B each: 512 MiB for the two, before any
  // activation. On a GPU of exactly 512 MiB no such layout fits, so the search must shard
  // a weight over dp too (FSDP/ZeRO-3 style), paying its all-gathers.
  DataflowScenario s({2, 4}, {"dp", "tp"});
  s.input("x", {4096, 4096}, "S(0),R")
      .parameter("w1", {4096, 16384})
      .parameter("w2", {16384, 4096});
  s.op("up", OpKind::mm, "x", "w1", "h").op("down", OpKind::mm, "h", "w2", "y").training();
  const Scenario scenario = s.build();
  const DataflowGraph g = build_dataflow_graph(scenario);
  const DeviceMesh mesh({2, 4}, {"dp", "tp"});
  const auto model = analytic(scenario.cluster);
  const StepLayout roomy = search_layout(g, mesh, *model);
  LayoutSearchOptions tight;
  tight.memory_capacity_bytes = 536870912;
  const StepLayout sharded = search_layout(g, mesh, *model, tight);
  ASSERT_TRUE(sharded.fits);
  EXPECT_LE(sharded.memory.peak_bytes(), tight.memory_capacity_bytes);
  EXPECT_LT(sharded.memory.static_bytes(), 536870912);
  const auto over_dp = [&](const char* name) {
    return sharded.placements[tensor_named(g, name)][0];
  };
  EXPECT_TRUE(over_dp("w1").is_shard() || over_dp("w2").is_shard());
  // Fitting costs time, never saves it.
  EXPECT_GE(sharded.step_cost_us, roomy.step_cost_us);
}

// The quickstart's MLP (x [32768, 4096] split by rows, two free 4096 x 14336 weights), a
// training step with Adam.
Scenario quickstart_mlp(std::vector<int> mesh, std::vector<std::string> names,
                        const std::string& x_placements, const std::string& y_placements) {
  DataflowScenario s(std::move(mesh), std::move(names));
  s.input("x", {32768, 4096}, x_placements)
      .parameter("w_up", {4096, 14336})
      .parameter("w_down", {14336, 4096})
      .output("y", y_placements);
  s.op("up", OpKind::mm, "x", "w_up", "h").op("down", OpKind::mm, "h", "w_down", "y").training();
  return s.build();
}

TEST(LayoutSearch, AMeshDimOfSizeOneChangesNothing) {
  // A dim of one GPU splits nothing: S(d), R and P(sum) over it hold the same data, so
  // [8 dp] and [8 dp, 1 tp] are the same step and must be searched to the same layout.
  // (The beam used to fill with copies of one layout differing on the size-1 dim, and on
  // [8, 1] lost the pure data-parallel layout that [8] finds.)
  const Scenario flat = quickstart_mlp({8}, {"dp"}, "S(0)", "S(0)");
  const Scenario with_one = quickstart_mlp({8, 1}, {"dp", "tp"}, "S(0),R", "S(0),R");
  const auto model = analytic(flat.cluster);
  const StepLayout a = search_layout(build_dataflow_graph(flat), DeviceMesh({8}, {"dp"}), *model);
  const StepLayout b =
      search_layout(build_dataflow_graph(with_one), DeviceMesh({8, 1}, {"dp", "tp"}), *model);
  EXPECT_NEAR(b.step_cost_us, a.step_cost_us, 1e-9 * a.step_cost_us);
  EXPECT_NEAR(b.serial_cost_us, a.serial_cost_us, 1e-9 * a.serial_cost_us);
  const DataflowGraph g = build_dataflow_graph(with_one);
  for (const char* w : {"w_up", "w_down"})
    EXPECT_EQ(b.placements[tensor_named(g, w)][0],
              a.placements[tensor_named(build_dataflow_graph(flat), w)][0])
        << w;
}

// An MLP under pure data parallelism over 8 GPUs: x [32768, 4096] split by rows,
// w_up [4096, 14336] and w_down [14336, 4096] replicated.
Scenario data_parallel_mlp() {
  DataflowScenario s({8}, {"dp"});
  s.input("x", {32768, 4096}, "S(0)")
      .parameter("w_up", {4096, 14336}, "R")
      .parameter("w_down", {14336, 4096}, "R")
      .output("y", "S(0)");
  s.op("up", OpKind::mm, "x", "w_up", "h").op("down", OpKind::mm, "h", "w_down", "y").training();
  return s.build();
}

TEST(LayoutSearch, ZeroShardsTheOptimizerStateAndSplitsTheAllReduce) {
  // Pure data parallelism over 8 GPUs (as above), with ZeRO. Each weight is 4096 x 14336 =
  // 58,720,256 elements (117,440,512 B in bf16), replicated on the 8 GPUs.
  //   stage 0: weights 2 x 117,440,512 B, gradients the same, Adam 12 B x 2 x 58,720,256;
  //   stage 1: Adam's state sharded 8 ways: 12 x 2 x 58,720,256 / 8 = 176,160,768 B;
  //   stage 2: the gradient buffers too: 2 x 117,440,512 / 8 = 29,360,128 B.
  // Each reduction becomes a reduce-scatter of the gradient to the state's shard and an
  // all-gather of the updated weight: ring RS + AG move what a ring all-reduce moves, so
  // the priced time is the same (ZeRO §7.2.1: "no additional communication").
  for (int stage : {0, 1, 2}) {
    Scenario scenario = data_parallel_mlp();
    scenario.training->zero_stage = stage;
    const DataflowGraph g = build_dataflow_graph(scenario);
    const StepLayout layout =
        search_layout(g, DeviceMesh({8}, {"dp"}), *analytic(scenario.cluster));
    SCOPED_TRACE("stage " + std::to_string(stage));
    EXPECT_EQ(layout.memory.parameters_bytes, 2 * 117440512);
    EXPECT_EQ(layout.memory.gradients_bytes, stage >= 2 ? 29360128 : 2 * 117440512);
    EXPECT_EQ(layout.memory.optimizer_bytes, stage >= 1 ? 176160768 : 1409286144);
    ASSERT_EQ(layout.reductions.size(), 2u);
    for (const GradientReduction& r : layout.reductions) {
      ASSERT_EQ(r.redistribution.steps.size(), 1u);
      if (stage == 0) {
        EXPECT_EQ(r.redistribution.steps[0].collective, CollectiveKind::all_reduce);
        EXPECT_FALSE(r.parameter_gather);
        continue;
      }
      // The state is split along the weight's longer dim (14336): w_up's columns, w_down's rows.
      const int dim = g.tensors[r.parameter].name == "w_up" ? 1 : 0;
      EXPECT_EQ(to_string(r.redistribution.to), "S(" + std::to_string(dim) + ")");
      EXPECT_EQ(r.redistribution.steps[0].collective, CollectiveKind::reduce_scatter);
      ASSERT_TRUE(r.parameter_gather);
      ASSERT_EQ(r.parameter_gather->steps.size(), 1u);
      EXPECT_EQ(r.parameter_gather->steps[0].collective, CollectiveKind::all_gather);
      EXPECT_EQ(to_string(r.parameter_gather->to), "R");
      EXPECT_EQ(r.parameter_gather->steps[0].buffer_bytes, 117440512);  // the whole weight
    }
  }
}

TEST(LayoutSearch, ZeroThreeKeepsTheShardAndGathersItForEveryReader) {
  // The data-parallel MLP above with ZeRO-3: the weights too are kept as the state's shard,
  // 2 x 117,440,512 / 8 = 29,360,128 B, and the gradients; Adam's state as with ZeRO-1.
  // The forward ops read the weights as declared, whole: each waits for its weight's
  // all-gather from the shard, the bytes ZeRO-1 gathers once after the update, and holds it
  // with the next one's arriving, 2 x 117,440,512 B. A backward op that reads a weight
  // pays the same gather, unless its strategy reads the shard as it is (none then). Each op
  // is an FSDP unit of its own (no layers here), and a unit's gather is one flat buffer, as
  // ZeRO-1's bucketed gather is (strategies/gradient_buckets.hpp): the two weights' gathers,
  // equal in bytes, cost the same, whether split by columns (w_up) or by rows (w_down), and
  // what ZeRO-1 pays for each.
  Scenario scenario = data_parallel_mlp();
  scenario.training->zero_stage = 1;
  const DeviceMesh mesh({8}, {"dp"});
  const DataflowGraph g1 = build_dataflow_graph(scenario);
  const StepLayout one = search_layout(g1, mesh, *analytic(scenario.cluster));
  std::map<std::string, double> gather_us;  // by weight, as ZeRO-1 prices it
  for (const GradientReduction& r : one.reductions)
    gather_us[g1.tensors[r.parameter].name] = std::accumulate(
        r.gather_step_cost_us.begin(), r.gather_step_cost_us.end(), 0.0);
  ASSERT_EQ(gather_us.size(), 2u);
  scenario.training->zero_stage = 3;
  const DataflowGraph g = build_dataflow_graph(scenario);
  const StepLayout three = search_layout(g, mesh, *analytic(scenario.cluster));
  EXPECT_EQ(three.memory.parameters_bytes, 29360128);
  EXPECT_EQ(three.memory.gradients_bytes, 29360128);
  EXPECT_EQ(three.memory.optimizer_bytes, 176160768);
  for (const GradientReduction& r : three.reductions) EXPECT_FALSE(r.parameter_gather);
  std::vector<std::string> readers;
  std::set<double> flat_us;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (three.timings[i].gather_us() <= 0) continue;
    readers.push_back(g.ops[i].name);
    SCOPED_TRACE(g.ops[i].name);
    std::string weight;
    for (const GraphInput& in : g.ops[i].inputs)
      if (g.tensors[in.tensor].kind == GraphTensor::Kind::parameter)
        weight = g.tensors[in.tensor].name;
    EXPECT_DOUBLE_EQ(three.timings[i].gather_us(), gather_us.at(weight));
    EXPECT_DOUBLE_EQ(three.timings[i].gather_link_us[0], three.timings[i].gather_us());  // NVLink
    EXPECT_GE(three.transient_bytes[i], 2 * 117440512);
    flat_us.insert(three.timings[i].gather_us());
  }
  EXPECT_THAT(readers, ::testing::IsSupersetOf({"up", "down"}));
  EXPECT_EQ(flat_us.size(), 1u);  // every weight's gather alike
  EXPECT_DOUBLE_EQ(gather_us.at("w_up"), gather_us.at("w_down"));
}

TEST(LayoutSearch, ZeroSplitsATensorParallelShardInPlace) {
  // Megatron's MLP on [dp 2, tp 4] with ZeRO-1: w_up [4096, 14336] declared column-parallel
  // [R, S(1)], w_down [14336, 4096] row-parallel [R, S(0)]. The state must not split the dim
  // tp already splits (nested shards of one dim would have the gradient gathered whole over
  // tp before its reduce-scatter over dp): w_up's state is [S(0), S(1)], w_down's [S(1), S(0)],
  // and each reduction is one reduce-scatter over dp of the tp shard, 58,720,256 / 4 elements
  // in bf16 = 29,360,128 B, gathered back by one all-gather of the same bytes. (A bug before:
  // both took their longer dim, 14336, the one tp splits, and the gradient of w_down went
  // through a 117 MB all-gather over tp first.)
  DataflowScenario s({2, 4}, {"dp", "tp"});
  s.input("x", {8192, 4096}, "S(0), R")
      .parameter("w_up", {4096, 14336}, "R, S(1)")
      .parameter("w_down", {14336, 4096}, "R, S(0)")
      .output("y", "S(0), R");
  s.op("up", OpKind::mm, "x", "w_up", "h").op("down", OpKind::mm, "h", "w_down", "y").training();
  Scenario scenario = s.build();
  scenario.training->zero_stage = 1;
  const DataflowGraph g = build_dataflow_graph(scenario);
  const DeviceMesh mesh({2, 4}, {"dp", "tp"});
  const StepLayout layout = search_layout(g, mesh, *analytic(scenario.cluster));
  ASSERT_EQ(layout.reductions.size(), 2u);
  for (const GradientReduction& r : layout.reductions) {
    const bool up = g.tensors[r.parameter].name == "w_up";
    SCOPED_TRACE(g.tensors[r.parameter].name);
    EXPECT_EQ(to_string(r.redistribution.to), up ? "S(0),S(1)" : "S(1),S(0)");
    ASSERT_EQ(r.redistribution.steps.size(), 1u);
    EXPECT_EQ(r.redistribution.steps[0].collective, CollectiveKind::reduce_scatter);
    EXPECT_EQ(r.redistribution.steps[0].mesh_dim, 0);
    EXPECT_EQ(r.redistribution.steps[0].buffer_bytes, 29360128);
    ASSERT_TRUE(r.parameter_gather);
    ASSERT_EQ(r.parameter_gather->steps.size(), 1u);
    EXPECT_EQ(r.parameter_gather->steps[0].collective, CollectiveKind::all_gather);
  }
}

TEST(LayoutSearch, ObjectiveOverlapsGradientReductionsWithTheBackward) {
  // Pure data parallelism over 8 GPUs: every matmul splits the tokens, nothing moves but
  // the two weight gradients, each all-reduced on the comm stream after its wgrad. w_down's
  // (made first) runs under up's dgrad and wgrad; w_up's, made last, is all exposed. So
  // the overlapped step is the 6 matmuls plus one reduction, the serial one plus both:
  // serial - overlapped = w_down's reduction.
  const Scenario scenario = quickstart_mlp({8}, {"dp"}, "S(0)", "S(0)");
  const DataflowGraph g = build_dataflow_graph(scenario);
  const StepLayout layout = search_layout(g, DeviceMesh({8}, {"dp"}), *analytic(scenario.cluster));
  ASSERT_EQ(layout.reductions.size(), 2u);
  for (const char* w : {"w_up", "w_down"})
    EXPECT_EQ(to_string(layout.placements[tensor_named(g, w)]), "R") << w;
  const GradientReduction& first = layout.reductions[0];
  EXPECT_EQ(g.tensors[first.parameter].name, "w_down");
  // Reductions of the same bytes over the same group: one price each.
  EXPECT_NEAR(layout.reductions[1].cost_us(), first.cost_us(), 1e-9 * first.cost_us());
  double matmuls_us = 0;
  for (const auto& op : layout.ops) matmuls_us += op->candidate.cost_us;
  // w_down's reduction hides only if up's dgrad and wgrad (graph ops 4 and 5) outlast it.
  ASSERT_EQ(g.ops[4].name + " " + g.ops[5].name, "up.dgrad up.wgrad");
  ASSERT_LT(first.cost_us(), layout.ops[4]->candidate.cost_us + layout.ops[5]->candidate.cost_us);
  EXPECT_NEAR(layout.serial_cost_us, matmuls_us + 2 * first.cost_us(), 1e-6 * matmuls_us);
  EXPECT_NEAR(layout.step_cost_us, matmuls_us + first.cost_us(), 1e-6 * matmuls_us);
}

}  // namespace
}  // namespace symmesh::strategies
