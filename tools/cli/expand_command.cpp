// symmesh expand: the version-2 scenario a `model:` block stands for, printed as YAML —
// every tensor and matrix op of the step that simulate, sweep and validate plan.
#include <iostream>
#include <memory>

#include "evaluation/torch_parallel_plan.hpp"
#include "scenario/model_expansion.hpp"
#include "scenario/scenario_loader.hpp"
#include "tools/cli/command.hpp"

namespace symmesh::cli {

void add_expand_command(CLI::App& app, CommandAction& selected) {
  auto path = std::make_shared<std::string>();
  auto torch_plan = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "expand",
      "Print the version-2 scenario (tensors and workload) that a model: block generates");
  cmd->add_option("scenario", *path, "a scenario file with a model: block (YAML)")->required();
  cmd->add_flag("--torch-plan", *torch_plan,
                "plan the step and print instead the PyTorch parallelize_module plan of its "
                "tp layout (torchtitan's Llama module names), as Python source");
  cmd->callback([path, torch_plan, &selected] {
    selected = [path, torch_plan] {
      const Scenario scenario = load_scenario(*path);
      if (*torch_plan)
        std::cout << evaluation::torch_plan_python(evaluation::torch_parallel_plan(scenario));
      else
        std::cout << scenario::expanded_scenario_text(scenario);
      return 0;
    };
  });
}

}  // namespace symmesh::cli
