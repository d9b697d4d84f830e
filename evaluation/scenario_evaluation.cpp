#include "evaluation/scenario_evaluation.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/errors.hpp"
#include "core/trace_writer.hpp"
#include "evaluation/backends.hpp"
#include "evaluation/dtype_values.hpp"
#include "evaluation/folded_training_step.hpp"
#include "scenario/model_expansion.hpp"
#include "sim/sim_options.hpp"

namespace symmesh::evaluation {

namespace {

// The dim folds_replicas folds in `planned`'s step: its dp dim (the scenario's mesh less
// pp) when of more than one, else -1 (nothing to fold).
int replica_fold_dim(const strategies::PlannedWorkload& planned) {
  const std::vector<std::string>& names = planned.mesh.dim_names();
  for (size_t d = 0; d < names.size(); ++d)
    if (names[d] == scenario::kDataParallelDim && planned.mesh.shape()[d] > 1)
      return static_cast<int>(d);
  return -1;
}

}  // namespace

// A model's step beyond the rank-by-rank size is always folded (simulated_folded), in a
// sweep's points as in simulate.
strategies::WorkloadOptions lowering_options(const Scenario& scenario,
                                             const strategies::PlannedWorkload& planned,
                                             const EvaluationOptions& options) {
  strategies::WorkloadOptions out;
  out.emulate = options.emulate;
  if (folds_replicas(scenario, options.fold_replicas)) out.fold_dim = replica_fold_dim(planned);
  out.encode = encode_values;
  out.decode = decode_values;
  return out;
}

// It only matters for planned ops: a workload of transfers needs none.
std::unique_ptr<strategies::CostModel> scenario_cost_model(const Scenario& s, bool fuse) {
  strategies::CostModelOptions model_options;
  model_options.devices_per_host = s.cluster.gpus_per_node;
  model_options.cluster = s.cluster;
  model_options.fuse = fuse;
  const bool plans = std::any_of(s.workload.begin(), s.workload.end(),
                                 [](const WorkloadOp& op) { return is_planned(op.kind); });
  try {
    return evaluation::make_cost_model(plans ? s.cost_model : "dtensor", model_options);
  } catch (const Unsupported& e) {
    throw Unsupported(e.message(), s.where() + ": cost_model");
  }
}

std::unique_ptr<SizedScenario> size_scenario(const Scenario& scenario,
                                             const EvaluationOptions& options) {
  auto sized = std::make_unique<SizedScenario>();
  sized->scenario = scenario;
  sized->planned = std::make_shared<const strategies::PlannedWorkload>(
      strategies::plan_workload(sized->scenario, *scenario_cost_model(scenario, options.fuse)));
  const strategies::WorkloadOptions lowering =
      lowering_options(sized->scenario, *sized->planned, options);
  sized->counted = strategies::lower_workload(sized->scenario, sized->planned, lowering,
                                              Program::counting(sized->planned->world_size()))
                       .program;
  sized->estimate = estimate_host_memory(sized->counted, *sized->planned, options.emulate,
                                         options.record_timeline);
  return sized;
}

HostMemoryEstimate estimate_scenario_memory(const Scenario& scenario,
                                            const EvaluationOptions& options) {
  return size_scenario(scenario, options)->estimate;
}

std::unique_ptr<PreparedScenario> lower_sized(std::unique_ptr<SizedScenario> sized,
                                              const EvaluationOptions& options) {
  auto prepared = std::make_unique<PreparedScenario>();
  prepared->scenario = std::move(sized->scenario);
  Program program(sized->counted.world_size());
  program.reserve_like(sized->counted);
  sized->counted = Program(1);  // the count is no longer needed
  const strategies::WorkloadOptions lowering =
      lowering_options(prepared->scenario, *sized->planned, options);
  prepared->workload = strategies::lower_workload(prepared->scenario, std::move(sized->planned),
                                                  lowering, std::move(program));
  prepared->request.carry_data = options.emulate;
  prepared->request.wall_clock_limit_s = options.wall_clock_limit_s;
  prepared->request.record_timeline = options.record_timeline;
  prepared->request.collectives = options.collectives;
  sim::sim_options_for(prepared->request);  // checks the figures
  return prepared;
}

std::unique_ptr<PreparedScenario> prepare_scenario(const Scenario& scenario,
                                                   const EvaluationOptions& options) {
  auto sized = size_scenario(scenario, options);
  check_host_memory(sized->scenario, sized->estimate, options.emulate,
                    options.host_memory ? options.host_memory : host_memory());
  return lower_sized(std::move(sized), options);
}

Evaluation report_evaluation(const PreparedScenario& prepared, RunResult result) {
  Evaluation out;
  out.result = std::move(result);
  if (prepared.request.record_timeline)
    out.trace_json = chrome_trace_json(prepared.workload.program, out.result);
  out.report = build_simulation_report(prepared.scenario, prepared.workload, out.result,
                                       prepared.request.carry_data, prepared.request.collectives);
  return out;
}

Evaluation evaluate_scenario(const Scenario& scenario, const EvaluationOptions& options) {
  const auto prepared = prepare_scenario(scenario, options);
  const auto backend = make_backend("sim", &prepared->scenario.cluster);
  return report_evaluation(*prepared, backend->run(prepared->workload.program, prepared->request));
}

}  // namespace symmesh::evaluation
