#include "evaluation/hardware_evaluation.hpp"

#include <algorithm>
#include <cmath>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "core/trace_writer.hpp"
#include "evaluation/backends.hpp"
#include "evaluation/folded_training_step.hpp"

namespace symmesh::evaluation {

void check_native_op_names(const CollectivesChoice& choice, const Scenario& scenario,
                           const std::vector<WorkloadOp>& ops) {
  std::vector<std::string> known;
  for (const WorkloadOp& op : ops) known.push_back(op.name);
  for (const std::string& name : choice.ops)
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw InvalidArgument(
          "no op named '" + name + "' in scenario '" + scenario.name +
              "' (its ops: " + join(known, ", ", [](const std::string& n) { return n; }) + ")",
          "--collectives");
}

void check_native_op_names(const CollectivesChoice& choice, const Scenario& scenario) {
  check_native_op_names(choice, scenario, scenario.workload);
}

HardwareEvaluation evaluate_on_hardware(const Scenario& scenario, const HardwareOptions& options,
                                        const std::string& command) {
  refuse_folded_on_hardware(scenario, command);
  // Version 1: the file's ops, checked before anything is planned. Version 2 runs derived
  // ops too (up.wgrad, w_up.grad_all_reduce): checked once planned, still before any GPU.
  if (!scenario.is_dataflow()) check_native_op_names(options.collectives, scenario);
  // --check carries every rank's real buffers in host memory as well: refused up front when
  // they cannot fit (evaluation/memory_estimate.hpp).
  EvaluationOptions evaluation;
  evaluation.emulate = options.check;
  evaluation.fuse = options.fuse;
  HardwareEvaluation out;
  out.prepared = prepare_scenario(scenario, evaluation);
  if (scenario.is_dataflow())
    check_native_op_names(options.collectives, scenario, out.prepared->workload.planned->ops);
  RunRequest request;
  request.carry_data = options.check;
  request.record_timeline = options.trace;
  request.collectives = options.collectives;
  request.wait_timeout_s = options.timeout_s;
  request.warmup_runs = options.check ? 0 : options.warmup_runs;
  request.command = command;
  const auto backend = make_backend("nccl", nullptr, command);
  const Program& program = out.prepared->workload.program;
  if (options.dry_run) {
    out.plan_text = backend->planner()->describe(program, request);
    return out;
  }
  out.result = backend->run(program, request);
  if (!out.result.reporting) return out;
  if (options.trace) out.trace_json = chrome_trace_json(program, out.result);
  out.report = build_simulation_report(scenario, out.prepared->workload, out.result, options.check,
                                       options.collectives, /*on_hardware=*/true);
  out.report.backend = "nccl";
  return out;
}

double check_tolerance(DType dtype, int64_t k) {
  const double root = 1.0 + std::sqrt(static_cast<double>(std::max<int64_t>(k, 1)));
  switch (dtype) {
    case DType::bf16:
      return std::ldexp(1.0, -6) * root;
    case DType::fp16:
      return std::ldexp(1.0, -9) * root;
    case DType::fp32:
      return std::ldexp(1.0, -20) * (1.0 + static_cast<double>(k));
    case DType::fp64:
      return 1e-12 * (1.0 + static_cast<double>(k));
    default:
      return std::ldexp(1.0, -3) * root;
  }
}

std::vector<std::string> check_failures(const Scenario& scenario,
                                        const HardwareEvaluation& evaluation) {
  std::vector<std::string> out;
  const int ranks = evaluation.prepared->workload.mesh.size();
  for (const OpReport& r : evaluation.report.ops) {
    if (!r.max_abs_error) continue;
    const auto op = std::find_if(scenario.workload.begin(), scenario.workload.end(),
                                 [&](const WorkloadOp& w) { return w.name == r.name; });
    if (op == scenario.workload.end() || op->a.empty()) continue;
    // Partial sums are reduced in the op's dtype on the way: allow one rounding per rank.
    const double tolerance = check_tolerance(scenario.dtype_of(*op), op->a.back()) * ranks;
    if (!(*r.max_abs_error <= tolerance))
      out.push_back(r.name + ": max abs error " + std::to_string(*r.max_abs_error) + " > " +
                    std::to_string(tolerance));
  }
  return out;
}

}  // namespace symmesh::evaluation
