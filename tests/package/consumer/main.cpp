// Loads a shipped scenario through the installed library and prints what it holds, one
// key=value a line, for tests/package/run.sh to compare with the YAML files themselves.
// Headers as an installed package offers them, namespaced: <symmesh/<folder>/<file>.hpp>.
// scenario_evaluation.hpp includes core/, strategies/ and evaluation/ headers in turn, so
// this compiles only if the installed headers find each other (their includes were
// rewritten on install from "core/x.hpp" to <symmesh/core/x.hpp>).
#include <cstdio>
#include <string>

#include <symmesh/core/errors.hpp>
#include <symmesh/core/placement.hpp>
#include <symmesh/evaluation/scenario_evaluation.hpp>
#include <symmesh/scenario/scenario_loader.hpp>

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : std::string(SHIPPED_SCENARIOS) + "/quickstart.yaml";
  try {
    const symmesh::Scenario scenario = symmesh::load_scenario(path);
    std::printf("scenario=%s\n", scenario.name.c_str());
    std::printf("cluster=%s\n", scenario.cluster.name.c_str());
    std::printf("gpus_per_node=%d\n", scenario.cluster.gpus_per_node);
    std::printf("gpu=%s\n", scenario.cluster.gpu.name.c_str());
    std::printf("workload_ops=%zu\n", scenario.workload.size());
    std::printf("cost_model=%s\n", symmesh::evaluation::scenario_cost_model(scenario, false)->name().c_str());
    std::printf("placements=%s\n",
                symmesh::to_string(symmesh::parse_placements("Shard(0), Replicate")).c_str());
    std::printf("command=%s\n", SYMMESH_COMMAND);
  } catch (const symmesh::Error& e) {
    std::fprintf(stderr, "consumer: %s (%s)\n", e.message().c_str(), e.where().c_str());
    return 2;
  }
  return 0;
}
