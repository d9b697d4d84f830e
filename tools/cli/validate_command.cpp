// symmesh validate: load a scenario and check everything short of simulating it — the
// file, the cluster, the mesh, every op's shapes and placements, a plan for every matmul
// and the program the workload lowers to.
#include <iostream>
#include <memory>

#include "scenario/scenario_loader.hpp"
#include "strategies/workload_lowering.hpp"
#include "tools/cli/command.hpp"

namespace symmesh::cli {
namespace {

int run_validate(const std::vector<std::string>& paths) {
  for (const auto& path : paths) {
    const Scenario scenario = load_scenario(path);
    strategies::CostModelOptions options;
    options.devices_per_host = scenario.cluster.gpus_per_node;
    // Planning needs a model; dtensor needs nothing beyond the mesh, so every scenario can
    // be planned whichever model it names (the named one is checked when it runs).
    const auto model = strategies::make_cost_model("dtensor", options);
    // The lowering checks every op; into a counting Program it allocates nothing large.
    auto planned = std::make_shared<const strategies::PlannedWorkload>(
        strategies::plan_workload(scenario, *model));
    const int ranks = planned->mesh.size();
    const auto workload =
        strategies::lower_workload(scenario, std::move(planned), {}, Program::counting(ranks));
    std::cout << path << ": valid — " << scenario.workload.size() << " op"
              << (scenario.workload.size() == 1 ? "" : "s") << " on " << scenario.cluster.num_gpus()
              << " GPUs, mesh " << to_string(workload.mesh) << ", cost model "
              << scenario.cost_model << (scenario.sweep ? ", with a sweep" : "")
              << (scenario.objective ? ", with an objective" : "") << "\n";
  }
  return 0;
}

}  // namespace

void add_validate_command(CLI::App& app, CommandAction& selected) {
  auto paths = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand("validate", "Check scenario files without simulating them");
  cmd->add_option("scenarios", *paths, "scenario files (YAML)")->required();
  cmd->callback([paths, &selected] { selected = [paths] { return run_validate(*paths); }; });
}

}  // namespace symmesh::cli
