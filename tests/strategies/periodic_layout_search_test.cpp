// The layout search planning a model's layers once (LayoutSearchOptions::periodic_layers):
// ops marked with their layer (`layer: k`, as a model's expansion marks them) share one plan
// per position in the layer. Expectations: Megatron-LM's layout of each MLP block (Shoeybi et
// al. 2019, §3: the first weight split by columns, the second by rows), the same in every
// layer; and that the later layers price one strategy, not all of them.
#include <gtest/gtest.h>

#include "strategies/cost_model.hpp"
#include "strategies/layout_search.hpp"
#include "tests/strategies/dataflow_test_support.hpp"

namespace symmesh::strategies {
namespace {

using testing::DataflowScenario;
using testing::tensor_named;

// `layers` Megatron MLP blocks in a chain on [tp 8], trained: x_k · w1 [4096, 16384] -> h,
// h · w2 [16384, 4096] -> x_(k+1); weights left to the planner. Ops named up<k> and down<k>,
// each marked `layer: k` when `marked`.
Scenario mlp_chain(int layers, bool marked) {
  DataflowScenario s({8}, {"tp"});
  s.input("x0", {4096, 4096}, "R");
  for (int l = 0; l < layers; ++l) {
    const std::string k = std::to_string(l);
    s.parameter("w1_" + k, {4096, 16384}).parameter("w2_" + k, {16384, 4096});
    s.op("up" + k, OpKind::mm, "x" + k, "w1_" + k, "h" + k);
    if (marked) s.in_layer(l);
    s.op("down" + k, OpKind::mm, "h" + k, "w2_" + k, "x" + std::to_string(l + 1));
    if (marked) s.in_layer(l);
  }
  s.output("x" + std::to_string(layers), "R");
  s.training();
  return s.build();
}

StepLayout searched(const Scenario& scenario, bool periodic) {
  const DataflowGraph g = build_dataflow_graph(scenario);
  CostModelOptions options;
  options.cluster = scenario.cluster;
  options.devices_per_host = scenario.cluster.gpus_per_node;
  const auto model = make_cost_model("analytic", options);
  LayoutSearchOptions search;
  search.periodic_layers = periodic;
  return search_layout(g, DeviceMesh({8}, {"tp"}), *model, search);
}

TEST(PeriodicLayoutSearch, EveryLayerGetsMegatronsPlanOnce) {
  constexpr int kLayers = 8;
  const Scenario scenario = mlp_chain(kLayers, true);
  const DataflowGraph g = build_dataflow_graph(scenario);
  const StepLayout periodic = searched(scenario, true);
  for (int l = 0; l < kLayers; ++l) {
    const std::string k = std::to_string(l);
    EXPECT_EQ(to_string(periodic.placements[tensor_named(g, "w1_" + k)]), "S(1)") << l;
    EXPECT_EQ(to_string(periodic.placements[tensor_named(g, "w2_" + k)]), "S(0)") << l;
  }
  // Every layer's ops run the strategy of layer 0's (forward) and of the last layer's
  // (backward, searched first there): same inputs and output placements per slot — the op
  // at the same position of its layer, and what the backward derives from it.
  const auto slot_of = [](const std::string& name) {  // "up3.dgrad.a" -> "up.dgrad.a"
    const size_t digits = name.find_first_of("0123456789");
    const size_t end = name.find_first_not_of("0123456789", digits);
    return name.substr(0, digits) + (end == std::string::npos ? "" : name.substr(end));
  };
  const auto layer_of = [](const std::string& name) {
    return std::stoi(name.substr(name.find_first_of("0123456789")));
  };
  int compared = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (!periodic.ops[i] || layer_of(g.ops[i].name) == 0) continue;
    for (size_t j = 0; j < g.ops.size(); ++j)
      if (periodic.ops[j] && layer_of(g.ops[j].name) == 0 &&
          slot_of(g.ops[j].name) == slot_of(g.ops[i].name)) {
        ++compared;
        EXPECT_EQ(periodic.ops[i]->candidate.input_placements,
                  periodic.ops[j]->candidate.input_placements)
            << g.ops[i].name;
        EXPECT_EQ(periodic.ops[i]->candidate.output_placements,
                  periodic.ops[j]->candidate.output_placements)
            << g.ops[i].name;
      }
  }
  // Layers 1..7: up and down, each forward, dgrad and wgrad (down's dgrad reads h, up's x).
  EXPECT_EQ(compared, 7 * 2 * 3);
  // Layers 1..7 price only the strategy their state holds them to, where the unconstrained
  // search prices every strategy of every layer: fewer pricings, though the periodic search
  // runs twice (its states merged with and without their slot choices).
  const StepLayout free = searched(scenario, false);
  EXPECT_LT(periodic.stats.layouts_priced, free.stats.layouts_priced);
  // And it finds a step no slower than the unconstrained beam's here: Megatron's blocks are
  // the best plan of each layer, so holding every layer to one loses nothing.
  EXPECT_LE(periodic.step_cost_us, free.step_cost_us * (1 + 1e-9));
}

// Named alike but not marked with their layer: nothing is held.
TEST(PeriodicLayoutSearch, OpsOfNoLayerAreSearchedFreely) {
  const Scenario scenario = mlp_chain(4, false);
  const StepLayout periodic = searched(scenario, true);
  const StepLayout free = searched(scenario, false);
  EXPECT_EQ(periodic.placements, free.placements);
  EXPECT_DOUBLE_EQ(periodic.step_cost_us, free.step_cost_us);
}

}  // namespace
}  // namespace symmesh::strategies
