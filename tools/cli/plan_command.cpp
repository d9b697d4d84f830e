// symmesh plan: choose the sharding of one mm/bmm/addmm/baddbmm on a mesh and show why.
// What it plans is reports/plan_op.hpp's, shared with the Python module; this prints it.
#include <iostream>
#include <memory>

#include "reports/plan_op.hpp"
#include "reports/plan_report.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/plan_options.hpp"

namespace symmesh::cli {
namespace {

int run_plan(const reports::PlanArgs& args) {
  auto [plan, report] = reports::plan_op(args);
  report.explain = args.explain;
  if (args.json)
    std::cout << reports::plan_to_json(plan, report).dump(2) << "\n";
  else
    std::cout << reports::plan_summary_text(plan, report);
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app, CommandAction& selected) {
  auto args = std::make_shared<reports::PlanArgs>();
  CLI::App* cmd = add_plan_subcommand(app, *args);
  const CLI::Option* gpus_per_host = cmd->get_option("--gpus-per-host");
  cmd->callback([args, gpus_per_host, &selected] {
    args->gpus_per_host_given = gpus_per_host->count() > 0;
    selected = [args] { return run_plan(*args); };
  });
}

}  // namespace symmesh::cli
