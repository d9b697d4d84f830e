// Layout search speed (strategies/layout_search.hpp): a training step of L two-matmul MLP
// layers (x[8192,4096] · a[4096,16384] · b[16384,4096], weights left to the planner,
// Adam) on mesh [dp 2, tp 4] of one shipped DGX H100 node, searched with the analytic
// model and the default beam. Only the search is timed (the graph is built once).
// Prints Google Benchmark's table with the graph's op count and the layouts priced.
#include <benchmark/benchmark.h>

#include <string>

#include "core/matmul_signature.hpp"
#include "scenario/scenario_loader.hpp"
#include "strategies/cost_model.hpp"
#include "strategies/dataflow_graph.hpp"
#include "strategies/layout_search.hpp"

namespace {

using namespace symmesh;
using namespace symmesh::strategies;

Scenario mlp_chain(int layers) {
  Scenario s;
  s.version = 2;
  s.cluster = load_cluster(std::string(SYMMESH_SOURCE_DIR) + "/scenarios/clusters/dgx-h100.yaml");
  s.mesh_shape = {2, 4};
  s.mesh_names = {"dp", "tp"};
  s.training = TrainingSpec{};
  s.tensors.push_back(
      {"x0", TensorDecl::Role::input, {8192, 4096}, parse_placements("S(0),R"), {}});
  for (int l = 0; l < layers; ++l) {
    const std::string n = std::to_string(l);
    s.tensors.push_back({"a" + n, TensorDecl::Role::parameter, {4096, 16384}, std::nullopt, {}});
    s.tensors.push_back({"b" + n, TensorDecl::Role::parameter, {16384, 4096}, std::nullopt, {}});
    WorkloadOp up;
    up.name = "l" + n + ".up";
    up.a_tensor = "x" + n, up.b_tensor = "a" + n, up.output_tensor = "h" + n;
    up.a = {8192, 4096}, up.b = {4096, 16384};
    WorkloadOp down;
    down.name = "l" + n + ".down";
    down.a_tensor = "h" + n, down.b_tensor = "b" + n,
    down.output_tensor = "x" + std::to_string(l + 1);
    down.a = {8192, 16384}, down.b = {16384, 4096};
    s.workload.push_back(up);
    s.workload.push_back(down);
  }
  return s;
}

void BM_search(benchmark::State& state) {
  const Scenario scenario = mlp_chain(static_cast<int>(state.range(0)));
  const DataflowGraph graph = build_dataflow_graph(scenario);
  const DeviceMesh mesh(scenario.mesh_shape, scenario.mesh_names);
  CostModelOptions options;
  options.cluster = scenario.cluster;
  const auto model = make_cost_model("analytic", options);
  LayoutSearchOptions search;
  search.memory_capacity_bytes = static_cast<int64_t>(scenario.cluster.gpu.memory_capacity_bytes);
  int64_t priced = 0;
  for (auto _ : state) {
    const StepLayout layout = search_layout(graph, mesh, *model, search);
    priced = layout.stats.layouts_priced;
    benchmark::DoNotOptimize(layout.serial_cost_us);
  }
  state.counters["graph_ops"] = static_cast<double>(graph.ops.size());
  state.counters["layouts_priced"] = static_cast<double>(priced);
}
BENCHMARK(BM_search)->Arg(1)->Arg(4)->Arg(16)->Arg(40)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
