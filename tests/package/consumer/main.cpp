// Loads a shipped scenario through the installed library and prints what it holds, one
// key=value a line, for tests/package/run.sh to compare with the YAML files themselves.
#include <cstdio>
#include <string>

#include "core/errors.hpp"
#include "scenario/scenario_loader.hpp"

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : std::string(SHIPPED_SCENARIOS) + "/quickstart.yaml";
  try {
    const symmesh::Scenario scenario = symmesh::load_scenario(path);
    std::printf("scenario=%s\n", scenario.name.c_str());
    std::printf("cluster=%s\n", scenario.cluster.name.c_str());
    std::printf("gpus_per_node=%d\n", scenario.cluster.gpus_per_node);
    std::printf("gpu=%s\n", scenario.cluster.gpu.name.c_str());
    std::printf("workload_ops=%zu\n", scenario.workload.size());
    std::printf("command=%s\n", SYMMESH_COMMAND);
  } catch (const symmesh::Error& e) {
    std::fprintf(stderr, "consumer: %s (%s)\n", e.message().c_str(), e.where().c_str());
    return 2;
  }
  return 0;
}
