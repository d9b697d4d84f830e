// symmesh simulate: plan every matmul of a scenario, run the whole workload on the
// SimGrid-modelled cluster and report per op.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "core/errors.hpp"
#include "sim/forked_run.hpp"
#include "sim/trace_writer.hpp"
#include "strategies/workload_lowering.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/dtype_values.hpp"
#include "tools/cli/simulation_report.hpp"
#include "tools/scenario/scenario_loader.hpp"

namespace symmesh::cli {
namespace {

struct SimulateArgs {
  std::string scenario;
  bool json = false;
  std::string trace;
  bool emulate = false;
  double time_limit_s = 0;
};

// Writes through a temporary file and a rename, so a reader never sees half a file.
void write_atomically(const std::string& path, const std::string& text, const char* what) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out)
      throw InvalidArgument("cannot write " + std::string(what) + " to '" + path + "'", what);
    out << text;
    if (!out.flush())
      throw InvalidArgument("cannot write " + std::string(what) + " to '" + path + "'", what);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw InvalidArgument("cannot write " + std::string(what) + " to '" + path + "'", what);
  }
}

int run_simulate(const SimulateArgs& args) {
  const Scenario scenario = load_scenario(args.scenario);
  strategies::CostModelOptions model_options;
  model_options.devices_per_host = scenario.cluster.gpus_per_node;
  const auto model = strategies::make_cost_model(scenario.cost_model, model_options);

  strategies::WorkloadOptions options;
  options.emulate = args.emulate;
  options.encode = encode_values;
  const auto workload = strategies::lower_workload(scenario, *model, options);

  sim::SimOptions sim_options;
  sim_options.carry_data = args.emulate;
  sim_options.wall_clock_limit_s = args.time_limit_s;
  sim_options.validate();
  const sim::RunResult result =
      sim::run_simulation(workload.program, scenario.cluster, sim_options);

  const SimulationReport report = build_simulation_report(scenario, workload, result, args.emulate);
  if (!args.trace.empty())
    write_atomically(args.trace, sim::chrome_trace_json(result).dump(), "--trace");
  if (args.json)
    std::cout << simulation_report_json(report).dump(2) << "\n";
  else
    std::cout << simulation_report_text(report);
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
  cmd->add_option("--time-limit", args->time_limit_s,
                  "wall-clock limit for the simulation, in seconds (0: none)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([args, &selected] { selected = [args] { return run_simulate(*args); }; });
}

}  // namespace symmesh::cli
