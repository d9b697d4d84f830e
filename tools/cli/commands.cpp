#include "tools/cli/command.hpp"

namespace symmesh::cli {

void register_commands(CLI::App& app, CommandAction& selected) {
  add_calibrate_command(app, selected);
  add_compare_command(app, selected);
  add_expand_command(app, selected);
  add_layouts_command(app, selected);
  add_plan_command(app, selected);
  add_run_command(app, selected);
  add_simulate_command(app, selected);
  add_sweep_command(app, selected);
  add_validate_command(app, selected);
}

}  // namespace symmesh::cli
