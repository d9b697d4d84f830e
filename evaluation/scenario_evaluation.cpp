#include "evaluation/scenario_evaluation.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/errors.hpp"
#include "core/trace_writer.hpp"
#include "evaluation/dtype_values.hpp"
#include "sim/cost_models.hpp"
#include "sim/forked_run.hpp"

namespace symmesh::evaluation {

namespace {

// Guards host memory, then plans every matmul of `scenario` with its cost model and
// lowers the workload.
strategies::LoweredWorkload plan_and_lower(const Scenario& s, const EvaluationOptions& options) {
  check_host_memory(s, estimate_scenario_memory(s, options), options.emulate,
                    options.host_memory ? options.host_memory : host_memory());
  const auto model = scenario_cost_model(s, options.fuse);
  strategies::WorkloadOptions workload_options;
  workload_options.emulate = options.emulate;
  workload_options.encode = encode_values;
  return strategies::lower_workload(s, *model, workload_options);
}

}  // namespace

// It only matters for matmuls: a workload of transfers needs none.
std::unique_ptr<strategies::CostModel> scenario_cost_model(const Scenario& s, bool fuse,
                                                           bool for_estimate) {
  strategies::CostModelOptions model_options;
  model_options.devices_per_host = s.cluster.gpus_per_node;
  model_options.cluster = s.cluster;
  model_options.fuse = fuse;
  const bool plans = std::any_of(s.workload.begin(), s.workload.end(),
                                 [](const WorkloadOp& op) { return is_matmul(op.kind); });
  try {
    const std::string name = !plans                                        ? "dtensor"
                             : for_estimate && s.cost_model == "simulated" ? "analytic"
                                                                           : s.cost_model;
    return sim::make_any_cost_model(name, model_options);
  } catch (const Unsupported& e) {
    throw Unsupported(e.message(), (s.path.empty() ? "scenario" : s.path) + ": cost_model");
  }
}

PreparedScenario::PreparedScenario(const Scenario& s, const EvaluationOptions& options)
    : scenario(s), workload(plan_and_lower(scenario, options)) {
  sim_options.carry_data = options.emulate;
  sim_options.wall_clock_limit_s = options.wall_clock_limit_s;
  sim_options.record_timeline = options.record_timeline;
  sim_options.validate();
}

HostMemoryEstimate estimate_scenario_memory(const Scenario& scenario,
                                            const EvaluationOptions& options) {
  return estimate_host_memory(scenario, *scenario_cost_model(scenario, options.fuse, true),
                              options.emulate);
}

std::unique_ptr<PreparedScenario> prepare_scenario(const Scenario& scenario,
                                                   const EvaluationOptions& options) {
  return std::make_unique<PreparedScenario>(scenario, options);
}

Evaluation report_evaluation(const PreparedScenario& prepared, RunResult result) {
  Evaluation out;
  out.result = std::move(result);
  if (prepared.sim_options.record_timeline)
    out.trace_json = chrome_trace_json(prepared.workload.program, out.result);
  out.report = build_simulation_report(prepared.scenario, prepared.workload, out.result,
                                       prepared.sim_options.carry_data);
  return out;
}

Evaluation evaluate_scenario(const Scenario& scenario, const EvaluationOptions& options) {
  const auto prepared = prepare_scenario(scenario, options);
  return report_evaluation(
      *prepared, sim::run_simulation(prepared->workload.program, prepared->scenario.cluster,
                                     prepared->sim_options));
}

}  // namespace symmesh::evaluation
