// Analytic cost model pricing speed: candidates priced per second on one core (target
// >= 1e6/s), for the candidate sets of mm/bmm on meshes of 2 to 5 dims over four rail-
// connected DGX H100 nodes. Only pricing is timed (features per distinct input target,
// the feature matrices times the cost vector, the roofline); enumeration happens once.
// Prints Google Benchmark's table; the figure is the `candidates/s` counter.
#include <benchmark/benchmark.h>

#include <string>

#include "scenario/scenario_loader.hpp"
#include "strategies/analytic_cost_model.hpp"
#include "strategies/candidate.hpp"
#include "strategies/op_rules.hpp"

namespace {

using namespace symmesh;
using namespace symmesh::strategies;

// Four nodes of the shipped DGX H100 description (scenarios/clusters/dgx-h100.yaml).
ClusterSpec four_dgx_rail() {
  ClusterSpec c =
      load_cluster(std::string(SYMMESH_SOURCE_DIR) + "/scenarios/clusters/dgx-h100.yaml");
  c.nodes = 4;
  return c;
}

OpProblem mm_problem(std::vector<int> mesh_shape, const char* a, const char* b) {
  OpProblem p;
  p.op = OpKind::mm;
  p.mesh = DeviceMesh(std::move(mesh_shape));
  p.inputs = {{{8192, 8192}, DType::bf16, parse_placements(a)},
              {{8192, 28672}, DType::bf16, parse_placements(b)}};
  return p;
}

void run(benchmark::State& state, const OpProblem& problem) {
  const AnalyticCostModel model(four_dgx_rail());
  std::vector<Candidate> candidates = expand_candidates(problem, op_single_dim_rules(problem));
  int kept = 0;
  for (const Candidate& c : candidates) kept += c.kept() ? 1 : 0;
  for (auto _ : state) {
    model.price(problem, candidates);
    benchmark::DoNotOptimize(candidates.data());
  }
  state.counters["candidates"] = kept;
  state.counters["candidates/s"] =
      benchmark::Counter(kept, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_mm_4x8(benchmark::State& state) {
  run(state, mm_problem({4, 8}, "S(0),R", "R,S(1)"));
}
void BM_mm_2x2x2(benchmark::State& state) {
  run(state, mm_problem({2, 2, 2}, "S(0),R,S(1)", "R,S(1),S(0)"));
}
void BM_mm_2x2x2x2(benchmark::State& state) {
  run(state, mm_problem({2, 2, 2, 2}, "S(0),R,S(1),R", "R,S(1),S(0),R"));
}
void BM_mm_2x2x2x2x2(benchmark::State& state) {
  run(state, mm_problem({2, 2, 2, 2, 2}, "S(0),R,S(1),R,R", "R,S(1),S(0),R,R"));
}
void BM_bmm_2x2x2(benchmark::State& state) {
  OpProblem p;
  p.op = OpKind::bmm;
  p.mesh = DeviceMesh({2, 2, 2});
  p.inputs = {{{32, 2048, 4096}, DType::bf16, parse_placements("S(0),R,S(2)")},
              {{32, 4096, 14336}, DType::bf16, parse_placements("S(0),S(2),S(1)")}};
  run(state, p);
}

BENCHMARK(BM_mm_4x8)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_mm_2x2x2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_mm_2x2x2x2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_mm_2x2x2x2x2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_bmm_2x2x2)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
