// Overlapped all-gather + mm against all-gather then mm, in the simulator: the table of the
// issue that built it (sizes × group sizes × NVLink and InfiniBand), with the analytic
// model's price and choice beside the simulated times.
//
//   usage: bench_fused_matmul [symmesh source dir]   (default: the one it was built from)
//
// The op is a tensor-parallel linear with sequence-parallel input: a [m, 8192] sharded by
// rows over a group of p GPUs, b [8192, 8192] by columns; the strategy that all-gathers a
// (out S(1)) is simulated unfused and fused at the chunk count the analytic model chose.
//   NVLink  dgx-h100.yaml: the p GPUs of one node, mesh [p].
//   IB      ib-rail-4node.yaml resized to p nodes: mesh [p, 8], the gather on mesh dim 0
//           (one GPU per node per ring, 8 rails in parallel), b's columns over dim 1.
// Overlap efficiency = (unfused − fused) / min(gather, matmul): the share of the smaller
// of the two that fusing hid (1 = perfect overlap), with the gather and matmul times the
// analytic model's parts of the unfused candidate.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "sim/forked_run.hpp"
#include "strategies/analytic_cost_model.hpp"
#include "strategies/plan.hpp"
#include "strategies/plan_lowering.hpp"
#include "tools/scenario/scenario_loader.hpp"

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

void row(const std::string& fabric, const ClusterSpec& cluster, std::vector<int> mesh, int64_t m) {
  const bool two_d = mesh.size() == 2;
  const int64_t k = 8192, n = 8192;
  strategies::OpProblem p;
  p.op = strategies::OpKind::mm;
  p.mesh = DeviceMesh(mesh);
  p.inputs = {{{m, k}, DType::bf16, parse_placements(two_d ? "S(0),R" : "S(0)")},
              {{k, n}, DType::bf16, parse_placements(two_d ? "R,S(1)" : "S(1)")}};
  const strategies::AnalyticCostModel model(cluster);
  const strategies::Plan all = strategies::build_plan(p, model);
  int gather = -1;
  for (const auto& c : all.candidates)
    if (c.kept() && to_string(c.input_placements[0]) == (two_d ? "R,R" : "R") &&
        to_string(c.input_placements[1]) == (two_d ? "R,S(1)" : "S(1)"))
      gather = c.index;
  const strategies::Plan plan = strategies::build_plan_for(p, model, gather);
  const auto& c = plan.chosen_candidate();
  const double unfused = simulate_us(plan, Implementation::unfused, 1, cluster);
  const double fused =
      simulate_us(plan, Implementation::fused_allgather_mm, c.fused_chunks, cluster);
  const double gather_us = c.input_cost_us[0], matmul_us = c.compute_us;
  const double efficiency = (unfused - fused) / std::min(gather_us, matmul_us);
  std::printf(
      "| %-6s | %2d | %6lld | %9.1f | %9.1f | %11.1f | %9.1f | %6d | %9.1f | %10.2f | %-7s |\n",
      fabric.c_str(), mesh[0], static_cast<long long>(m), gather_us, matmul_us, unfused, fused,
      c.fused_chunks, c.fused_cost_us, efficiency,
      c.implementation == Implementation::fused_allgather_mm ? "fused" : "unfused");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root = argc > 1 ? argv[1] : SYMMESH_SOURCE_DIR;
  try {
    const ClusterSpec nvlink = load_cluster(root + "/scenarios/clusters/dgx-h100.yaml");
    ClusterSpec ib = load_cluster(root + "/scenarios/clusters/ib-rail-4node.yaml");
    std::printf(
        "| fabric | p  |      m | gather us | matmul us | unfused sim | fused sim | chunks | "
        "fused ana | efficiency | analytic picks |\n"
        "|--------|----|--------|-----------|-----------|-------------|-----------|--------|"
        "-----------|------------|---------|\n");
    for (int p : {2, 4, 8})
      for (int64_t m : {512, 2048, 8192, 32768}) row("NVLink", nvlink, {p}, m);
    for (int p : {2, 4, 8}) {
      ib.nodes = p;
      for (int64_t m : {512, 2048, 8192, 32768}) row("IB", ib, {p, 8}, m);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_fused_matmul: %s\n", e.what());
    return 1;
  }
  return 0;
}
