// The layout search (strategies/layout_search.hpp) on a model scenario's generated step,
// searched as plan_workload searches it (layout_search_options: periodic layers, the GPU's
// memory, the analytic model pricing compute). In tests/evaluation because it loads a
// model: scenario (the strategies tests link no scenario reader).
#include <gtest/gtest.h>

#include <string>

#include "scenario/scenario_loader.hpp"
#include "strategies/cost_model.hpp"
#include "strategies/dataflow_graph.hpp"
#include "strategies/layout_search.hpp"
#include "strategies/workload_lowering.hpp"
#include "tests/strategies/dataflow_test_support.hpp"

namespace symmesh::strategies {
namespace {

using testing::op_index;

// Llama 3.1 8B cut to `layers` layers on 32 DGX H100 nodes, [dp 32, tp 8], one 8192-token
// sequence per replica, trained with Adam.
Scenario llama_8b_over_32_nodes(int layers) {
  return load_scenario_text(R"yaml(version: 2
cluster: {base: clusters/dgx-h100.yaml, nodes: 32}
mesh: {shape: [32, 8], names: [dp, tp]}
dtype: bf16
cost_model: analytic
model: {hf_config: models/llama3.1-8b.json, layers: )yaml" + std::to_string(layers) +
                                R"yaml(, seq: 8192, global_batch: 32}
training: {optimizer: adam}
)yaml",
                            shipped_scenarios_dir() + "/over-nodes.yaml");
}

// Searched as plan_workload searches a model's step.
StepLayout searched(const Scenario& scenario, const DataflowGraph& g) {
  CostModelOptions options;
  options.cluster = scenario.cluster;
  options.devices_per_host = scenario.cluster.gpus_per_node;
  const auto model = make_cost_model("analytic", options);
  const LayoutSearchOptions search = layout_search_options(scenario, *model);
  EXPECT_TRUE(search.periodic_layers);  // the expansion marks every decoder-layer op
  return search_layout(g, DeviceMesh({32, 8}, {"dp", "tp"}), *model, search);
}

// Bug: over 32 nodes the weights' gradient all-reduces over dp keep the comm stream behind
// the main one through the backward, so the overlapped step (the beam's rank) hides extra
// main-stream work, and equally ranked states were kept in arbitrary order. The last
// layer's backward, searched first, all-gathered each weight over tp and recomputed the
// whole input gradient on every tp rank, and every layer was then held to that choice:
// Llama 3.1 8B on [dp 32, tp 8], one 8192-token sequence per replica, simulated 366 ms a
// step (64.1 ms with 4 layers; 212 and 44.0 ms with the tie broken by the main stream's
// time). Expected, as Megatron-LM's backward runs (Shoeybi et al. 2019, §3, the f and g
// operators): each matmul's input gradient is computed from the weight's own tp shard;
// no weight is gathered over tp.
TEST(ModelLayoutSearch, EqualRanksKeepTheStateWithTheLessBusyMainStream) {
  const Scenario scenario = llama_8b_over_32_nodes(4);
  const DataflowGraph g = build_dataflow_graph(scenario);
  const StepLayout layout = searched(scenario, g);
  constexpr int kTp = 1;  // the mesh dim
  int weights_read = 0;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const std::string& name = g.ops[i].name;
    if (g.ops[i].pass != Pass::dgrad || !layout.ops[i] || name.rfind("l", 0) != 0) continue;
    for (size_t k = 0; k < g.ops[i].inputs.size(); ++k) {
      const TensorId t = g.ops[i].inputs[k].tensor;
      if (g.tensors[t].kind != GraphTensor::Kind::parameter || g.tensors[t].shape.size() != 2)
        continue;
      ++weights_read;
      EXPECT_TRUE(layout.ops[i]->candidate.input_placements[k][kTp].is_shard())
          << name << " reads " << g.tensors[t].name << " as "
          << to_string(layout.ops[i]->candidate.input_placements[k]);
    }
  }
  // Per layer: qkv, out, gate, up and down's input gradients each read their weight.
  EXPECT_EQ(weights_read, 4 * 5);
}

// Bug: the output projection ([tokens, 4096] x [4096, 128256]) was placed with the
// vocabulary split over dp and its input whole there (x: R,S(1); w_out: S(1),S(0)), which
// spares w_out's gradient all-reduce over dp but makes the input's gradient Partial over
// dp: the backward reduce-scattered a whole [262144, 4096] activation over the 32 nodes
// (norm.dgrad, 50 ms of a 99 ms step with 2 layers; 31.9 ms once foreseen). The forward
// saw the weight's reduction (foreseen when placed) but not the input gradient's, which
// came only in the backward. Expected, as data parallelism runs (each replica its own
// tokens, only parameter gradients cross the replicas): the projection reads its input
// split over dp and its weight whole there.
TEST(ModelLayoutSearch, AnInputGradientsReductionIsForeseenInTheForward) {
  const Scenario scenario = llama_8b_over_32_nodes(2);
  const DataflowGraph g = build_dataflow_graph(scenario);
  const StepLayout layout = searched(scenario, g);
  constexpr int kDp = 0;  // the mesh dim
  const int output = op_index(g, "output");
  ASSERT_TRUE(layout.ops[output]);
  const auto& reads = layout.ops[output]->candidate.input_placements;
  EXPECT_TRUE(reads[0][kDp].is_shard(0)) << to_string(reads[0]);
  EXPECT_TRUE(reads[1][kDp].is_replicate()) << to_string(reads[1]);
}

}  // namespace
}  // namespace symmesh::strategies
