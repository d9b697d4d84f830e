#include "evaluation/hardware_evaluation.hpp"

#include <algorithm>
#include <cmath>

#include "core/label_spans.hpp"
#include "core/text.hpp"
#include "core/trace_writer.hpp"
#include "evaluation/dtype_values.hpp"
#include "evaluation/host_memory.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "sim/cost_models.hpp"
#include "strategies/cost_model.hpp"
#ifdef SYMMESH_HAVE_HW
#include "hw/program_executor.hpp"
#include "hw/toolkit_info.hpp"
#endif

namespace symmesh::evaluation {
namespace {

#ifdef SYMMESH_HAVE_HW
// The measurement in the simulator's shape: labels from the Program, a native collective's
// entry says what NCCL did instead.
RunResult to_run_result(const hw::Measurement& m, const Program& program) {
  RunResult r;
  r.makespan_s = m.makespan_s;
  for (const hw::MeasuredOp& op : m.timeline) {
    TimelineEntry e;
    e.rank = op.rank;
    e.stream = op.stream;
    e.op_index = op.op_index;
    e.op_count = op.op_count;
    e.start_s = op.start_s;
    e.end_s = op.end_s;
    e.bytes = op.bytes;
    if (!op.detail.empty()) {
      e.detail = static_cast<int32_t>(r.details.size());
      r.details.push_back(op.detail);
    }
    r.timeline.push_back(e);
  }
  r.label_spans = label_spans_of(program, r.timeline);
  r.peak_memory_bytes = m.device_memory_bytes;
  for (const hw::MeasuredOutput& o : m.outputs) r.outputs.push_back({o.name, o.rank, o.bytes});
  return r;
}
#endif

}  // namespace

void check_native_op_names(const std::string& text, const Scenario& scenario) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return;
  std::vector<std::string> known;
  for (const WorkloadOp& op : scenario.workload) known.push_back(op.name);
  size_t from = colon + 1;
  while (from <= text.size()) {
    const size_t comma = std::min(text.find(',', from), text.size());
    const std::string name = text.substr(from, comma - from);
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw InvalidArgument(
          "no op named '" + name + "' in scenario '" + scenario.name +
              "' (its ops: " + join(known, ", ", [](const std::string& n) { return n; }) + ")",
          "--collectives");
    from = comma + 1;
  }
}

void check_collectives_option(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string impl = text.substr(0, colon);
  const bool known = impl == "one-sided" || impl == "one_sided" || impl == "nccl";
  const std::string names = colon == std::string::npos ? "" : text.substr(colon + 1);
  const bool names_ok =
      colon == std::string::npos || (impl == "nccl" && !names.empty() && names.front() != ',' &&
                                     names.back() != ',' && names.find(",,") == std::string::npos);
  if (!known || !names_ok)
    throw InvalidArgument("unknown collective implementation '" + text +
                              "' (expected one-sided, nccl or nccl:NAME,NAME)",
                          "--collectives");
}

std::string hardware_description() {
#ifdef SYMMESH_HAVE_HW
  return hw::executor_description() + "; one-sided: " + hw::one_sided_path();
#else
  return "not built (no CUDA toolkit with NCCL at configure time)";
#endif
}

HardwareEvaluation evaluate_on_hardware(const Scenario& scenario, const HardwareOptions& options,
                                        const std::string& command) {
  check_native_op_names(options.collectives, scenario);
  // --check carries every rank's real buffers in host memory as well: refused up front when
  // they cannot fit (evaluation/memory_estimate.hpp).
  EvaluationOptions evaluation;
  evaluation.emulate = options.check;
  evaluation.fuse = options.fuse;
  HardwareEvaluation out;
  out.prepared = prepare_scenario(scenario, evaluation);
#ifndef SYMMESH_HAVE_HW
  (void)options;
  throw HardwareUnavailable(
      "this symmesh was built without the hardware backend (hw/ needs the CUDA toolkit with "
      "NCCL at configure time), so " +
          command + " cannot run; symmesh simulate can",
      command);
#else
  hw::ExecutorOptions executor;
  hw::parse_collectives_option(options.collectives, executor.collectives, executor.native_ops);
  executor.wait_timeout_s = options.timeout_s;
  executor.command = command;
  executor.warmup_runs = options.check ? 0 : options.warmup_runs;
  const Program& program = out.prepared->workload.program;
  const hw::ExecutionPlan plan = hw::plan_for_hardware(program, executor);
  out.plan_text = hw::describe(plan, program);
  if (options.dry_run) return out;

  const hw::GpuInventory gpus = hw::visible_gpus();
  if (gpus.count() == 0)
    throw HardwareUnavailable(hw::no_gpu_message(command, gpus.why_none), command);
  hw::Measurement measured;
  try {
    measured = hw::execute_program(program, executor);
  } catch (const hw::DeviceUnavailable& e) {
    throw HardwareUnavailable(e.message(), command, e.rank());
  }
  out.reporting = measured.reporting;
  if (!out.reporting) return out;
  out.result = to_run_result(measured, program);
  out.trace_json = chrome_trace_json(program, out.result);
  out.report = build_simulation_report(scenario, out.prepared->workload, out.result, options.check);
  out.report.backend = "nccl";
  out.notes = measured.notes;
  return out;
#endif
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
