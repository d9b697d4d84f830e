// The layout search planning a model's layers once (LayoutSearchOptions::periodic_layers):
// alike layers named "l<k>_<op>" share one plan. Expectations: Megatron-LM's layout of each
// MLP block (Shoeybi et al. 2019, §3: the first weight split by columns, the second by rows),
// the same in every layer; and that the later layers price one strategy, not all of them.
#include <gtest/gtest.h>

#include "strategies/cost_model.hpp"
#include "strategies/layout_search.hpp"
#include "tests/strategies/dataflow_test_support.hpp"

namespace symmesh::strategies {
namespace {

using testing::DataflowScenario;
using testing::tensor_named;

// `layers` Megatron MLP blocks in a chain on [tp 8], trained: x_k · w1 [4096, 16384] -> h,
// h · w2 [16384, 4096] -> x_(k+1); weights left to the planner. Ops named as a model's
// expansion names them ("l3_up") when `model_names`, else without the layer prefix ("up3").
Scenario mlp_chain(int layers, bool model_names) {
  DataflowScenario s({8}, {"tp"});
  s.input("x0", {4096, 4096}, "R");
  for (int l = 0; l < layers; ++l) {
    const std::string k = std::to_string(l);
    s.parameter("w1_" + k, {4096, 16384}).parameter("w2_" + k, {16384, 4096});
    const std::string up = model_names ? "l" + k + "_up" : "up" + k;
    const std::string down = model_names ? "l" + k + "_down" : "down" + k;
    s.op(up, OpKind::mm, "x" + k, "w1_" + k, "h" + k)
        .op(down, OpKind::mm, "h" + k, "w2_" + k, "x" + std::to_string(l + 1));
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
  // (backward, searched first there): same inputs and output placements per slot.
  for (size_t i = 0; i < g.ops.size(); ++i) {
    if (!periodic.ops[i]) continue;
    const std::string& name = g.ops[i].name;
    if (name.rfind("l", 0) != 0 || name.rfind("l0_", 0) == 0) continue;
    const std::string slot = name.substr(name.find('_'));
    for (size_t j = 0; j < g.ops.size(); ++j)
      if (g.ops[j].name == "l0" + slot && periodic.ops[j]) {
        EXPECT_EQ(periodic.ops[i]->candidate.input_placements,
                  periodic.ops[j]->candidate.input_placements)
            << name;
        EXPECT_EQ(periodic.ops[i]->candidate.output_placements,
                  periodic.ops[j]->candidate.output_placements)
            << name;
      }
  }
  // Layers 1..7 price only the strategy their state holds them to, where the unconstrained
  // search prices every strategy of every layer: fewer pricings, though the periodic search
  // runs twice (its states merged with and without their slot choices).
  const StepLayout free = searched(scenario, false);
  EXPECT_LT(periodic.stats.layouts_priced, free.stats.layouts_priced);
  // And it finds a step no slower than the unconstrained beam's here: Megatron's blocks are
  // the best plan of each layer, so holding every layer to one loses nothing.
  EXPECT_LE(periodic.step_cost_us, free.step_cost_us * (1 + 1e-9));
}

TEST(PeriodicLayoutSearch, OpsNotNamedByLayerAreSearchedFreely) {
  const Scenario scenario = mlp_chain(4, false);
  const StepLayout periodic = searched(scenario, true);
  const StepLayout free = searched(scenario, false);
  EXPECT_EQ(periodic.placements, free.placements);
  EXPECT_DOUBLE_EQ(periodic.step_cost_us, free.step_cost_us);
}

}  // namespace
}  // namespace symmesh::strategies
