// symmesh simulate: plan every matmul of a scenario, run the whole workload on the
// SimGrid-modelled cluster and report per op.
#include <iostream>
#include <memory>

#include "evaluation/scenario_evaluation.hpp"
#include "scenario/scenario_loader.hpp"
#include "tools/cli/atomic_file.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/simulation_output.hpp"

namespace symmesh::cli {

using namespace evaluation;
namespace {

struct SimulateArgs {
  std::string scenario;
  bool json = false;
  std::string trace;
  bool emulate = false;
  double time_limit_s = 0;
  bool no_fuse = false;
};

int run_simulate(const SimulateArgs& args) {
  const Scenario scenario = load_scenario(args.scenario);
  check_output_path(args.trace, "--trace", files_read_for(scenario));
  EvaluationOptions options;
  options.emulate = args.emulate;
  options.wall_clock_limit_s = args.time_limit_s;
  options.fuse = !args.no_fuse;
  options.record_timeline = !args.trace.empty();
  const Evaluation evaluation = evaluate_scenario(scenario, options);
  if (!args.trace.empty()) write_file_atomically(args.trace, evaluation.trace_json, "--trace");
  if (args.json)
    std::cout << simulation_report_json(evaluation.report).dump(2) << "\n";
  else
    std::cout << simulation_report_text(evaluation.report);
  return 0;
}

}  // namespace

void add_simulate_command(CLI::App& app, CommandAction& selected) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Plan a scenario's workload and run it on the simulated cluster");
  cmd->add_option("scenario", args->scenario, "scenario file (YAML)")->required();
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->add_option("--trace", args->trace, "write a Chrome/Perfetto trace (JSON) to this file");
  cmd->add_flag(
      "--emulate", args->emulate,
      "carry real data: compute every mm/bmm sharded and compare with the unsharded product");
  cmd->add_flag("--no-fuse", args->no_fuse,
                "price and run every matmul unfused (no overlapped all-gather + mm), to compare");
  cmd->add_option("--time-limit", args->time_limit_s,
                  "wall-clock limit for the simulation, in seconds (0: none)")
      ->check(non_negative_number());
  cmd->callback([args, &selected] { selected = [args] { return run_simulate(*args); }; });
}

}  // namespace symmesh::cli
