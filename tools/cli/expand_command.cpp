// symmesh expand: the version-2 scenario a `model:` block stands for, printed as YAML —
// every tensor and matrix op of the step that simulate, sweep and validate plan.
#include <iostream>
#include <memory>

#include "scenario/model_expansion.hpp"
#include "scenario/scenario_loader.hpp"
#include "tools/cli/command.hpp"

namespace symmesh::cli {

void add_expand_command(CLI::App& app, CommandAction& selected) {
  auto path = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "expand",
      "Print the version-2 scenario (tensors and workload) that a model: block generates");
  cmd->add_option("scenario", *path, "a scenario file with a model: block (YAML)")->required();
  cmd->callback([path, &selected] {
    selected = [path] {
      const Scenario scenario = load_scenario(*path);
      std::cout << scenario::expanded_scenario_text(scenario);
      return 0;
    };
  });
}

}  // namespace symmesh::cli
