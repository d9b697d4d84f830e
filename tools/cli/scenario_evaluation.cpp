#include "tools/cli/scenario_evaluation.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/errors.hpp"
#include "sim/cost_models.hpp"
#include "sim/forked_run.hpp"
#include "strategies/workload_lowering.hpp"
#include "tools/cli/dtype_values.hpp"

namespace symmesh::cli {

Evaluation evaluate_scenario(const Scenario& scenario, const EvaluationOptions& options) {
  strategies::CostModelOptions model_options;
  model_options.devices_per_host = scenario.cluster.gpus_per_node;
  model_options.cluster = scenario.cluster;
  // The cost model only matters for matmuls; a workload of transfers needs none.
  const bool plans = std::any_of(scenario.workload.begin(), scenario.workload.end(),
                                 [](const WorkloadOp& op) { return is_matmul(op.kind); });
  std::unique_ptr<strategies::CostModel> model;
  try {
    model = sim::make_any_cost_model(plans ? scenario.cost_model : "dtensor", model_options);
  } catch (const Unsupported& e) {
    throw Unsupported(e.message(),
                      (scenario.path.empty() ? "scenario" : scenario.path) + ": cost_model");
  }

  strategies::WorkloadOptions workload_options;
  workload_options.emulate = options.emulate;
  workload_options.encode = encode_values;
  const auto workload = strategies::lower_workload(scenario, *model, workload_options);

  sim::SimOptions sim_options;
  sim_options.carry_data = options.emulate;
  sim_options.wall_clock_limit_s = options.wall_clock_limit_s;
  sim_options.record_timeline = options.record_timeline;
  sim_options.validate();
  Evaluation out;
  out.result = sim::run_simulation(workload.program, scenario.cluster, sim_options);
  out.report = build_simulation_report(scenario, workload, out.result, options.emulate);
  return out;
}

void write_file_atomically(const std::string& path, const std::string& text,
                           const std::string& what) {
  const std::string tmp = path + ".tmp";
  auto fail = [&] { return InvalidArgument("cannot write '" + path + "'", what); };
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) throw fail();
    out << text;
    if (!out.flush()) throw fail();
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw fail();
  }
}

}  // namespace symmesh::cli
