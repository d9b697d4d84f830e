// Overlapped collective matmuls against collective-then-mm, in the simulator: the table of
// the issue that built them (sizes × group sizes × NVLink and InfiniBand), with the
// analytic model's price and choice beside the simulated times.
//
//   usage: bench_fused_matmul [symmesh source dir]   (default: the one it was built from)
//
// ag+mm: a column-parallel linear with sequence-parallel input, a [m, 8192] sharded by
// rows over a group of p GPUs, b [8192, 8192] by columns; the strategy that all-gathers a
// (out S(1)) is simulated unfused and fused at the chunk count the analytic model chose.
// mm+rs: a row-parallel linear, a [m, 8192] and b [8192, 8192] sharded along k, output
// wanted as rows (out_placements S(0)); the strategy with the Partial(sum) output and its
// reduce-scatter, likewise.
//   NVLink  dgx-h100.yaml: the p GPUs of one node, mesh [p].
//   IB      ib-rail-4node.yaml resized to p nodes: mesh [p, 8], the gather on mesh dim 0
//           (one GPU per node per ring, 8 rails in parallel), b's columns over dim 1.
// Overlap efficiency = (unfused − fused) / min(collective, matmul): the share of the
// smaller of the two that fusing hid (1 = perfect overlap), with the collective and matmul
// times the analytic model's parts of the unfused candidate.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "scenario/scenario_loader.hpp"
#include "sim/forked_run.hpp"
#include "strategies/analytic_cost_model.hpp"
#include "strategies/plan.hpp"
#include "strategies/plan_lowering.hpp"

namespace {

using namespace symmesh;
using strategies::Implementation;

double simulate_us(strategies::Plan plan, Implementation implementation, int chunks,
                   const ClusterSpec& cluster) {
  plan.candidates[plan.chosen].implementation = implementation;
  plan.candidates[plan.chosen].chunks = chunks;
  Program program(cluster.nodes * cluster.gpus_per_node);
  strategies::lower_plan(plan, program, {});
  sim::SimOptions options;
  options.record_timeline = false;
  return sim::run_simulation(program, cluster, options).makespan_s * 1e6;
}

void row(const std::string& fabric, const ClusterSpec& cluster, std::vector<int> mesh, int64_t m,
         bool scatter) {
  const bool two_d = mesh.size() == 2;
  const int64_t k = 8192, n = 8192;
  // The group is mesh dim 0; on IB, dim 1 (the 8 GPUs of a node) shards b's columns.
  strategies::OpProblem p;
  p.op = OpKind::mm;
  p.mesh = DeviceMesh(mesh);
  if (!scatter) {
    p.inputs = {{{m, k}, DType::bf16, parse_placements(two_d ? "S(0),R" : "S(0)")},
                {{k, n}, DType::bf16, parse_placements(two_d ? "R,S(1)" : "S(1)")}};
  } else {
    p.inputs = {{{m, k}, DType::bf16, parse_placements(two_d ? "S(1),R" : "S(1)")},
                {{k, n}, DType::bf16, parse_placements(two_d ? "S(0),S(1)" : "S(0)")}};
    p.output_target = parse_placements(two_d ? "S(0),S(1)" : "S(0)");
  }
  const strategies::AnalyticCostModel model(cluster);
  const strategies::Plan all = strategies::build_plan(p, model);
  const Implementation kind =
      scatter ? Implementation::fused_mm_reducescatter : Implementation::fused_allgather_mm;
  // The strategy the fusion applies to: a gathered (R on the group's dim) with b as it is,
  // or both inputs as they are with the Partial(sum) output reduce-scattered.
  const std::string a_target = scatter ? (two_d ? "S(1),R" : "S(1)") : (two_d ? "R,R" : "R");
  const std::string b_target = to_string(p.inputs[1].placements);
  int site = -1;
  for (const auto& c : all.candidates)
    if (c.kept() && to_string(c.input_placements[0]) == a_target &&
        to_string(c.input_placements[1]) == b_target && c.fused_implementation == kind)
      site = c.index;
  if (site < 0) {
    std::fprintf(stderr, "no %s candidate\n", to_string(kind).c_str());
    return;
  }
  const strategies::Plan plan = strategies::build_plan_for(p, model, site);
  const auto& c = plan.chosen_candidate();
  const double unfused = simulate_us(plan, Implementation::unfused, 1, cluster);
  const double fused = simulate_us(plan, kind, c.fused_chunks, cluster);
  const double collective_us = scatter ? c.output_cost_us : c.input_cost_us[0];
  const double matmul_us = c.compute_us;
  const double efficiency = (unfused - fused) / std::min(collective_us, matmul_us);
  std::printf(
      "| %-5s | %-6s | %2d | %6lld | %9.1f | %9.1f | %11.1f | %9.1f | %6d | %9.1f | %10.2f | %-7s "
      "|\n",
      scatter ? "mm+rs" : "ag+mm", fabric.c_str(), mesh[0], static_cast<long long>(m),
      collective_us, matmul_us, unfused, fused, c.fused_chunks, c.fused_cost_us, efficiency,
      c.implementation == kind ? "fused" : "unfused");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root = argc > 1 ? argv[1] : SYMMESH_SOURCE_DIR;
  try {
    const ClusterSpec nvlink = load_cluster(root + "/scenarios/clusters/dgx-h100.yaml");
    ClusterSpec ib = load_cluster(root + "/scenarios/clusters/ib-rail-4node.yaml");
    std::printf(
        "| fusion | fabric | p  |      m | coll. us  | matmul us | unfused sim | fused sim | "
        "chunks | fused ana | efficiency | analytic picks |\n"
        "|-------|--------|----|--------|-----------|-----------|-------------|-----------|"
        "--------|-----------|------------|---------|\n");
    for (bool scatter : {false, true}) {
      for (int p : {2, 4, 8})
        for (int64_t m : {512, 2048, 8192, 32768}) row("NVLink", nvlink, {p}, m, scatter);
      for (int p : {2, 4, 8}) {
        ib.nodes = p;
        for (int64_t m : {512, 2048, 8192, 32768}) row("IB", ib, {p, 8}, m, scatter);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_fused_matmul: %s\n", e.what());
    return 1;
  }
  return 0;
}
