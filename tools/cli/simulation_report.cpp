#include "tools/cli/simulation_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "strategies/sharded_result.hpp"
#include "tools/cli/dtype_values.hpp"
#include "tools/cli/text_table.hpp"

namespace symmesh::cli {
namespace {

nlohmann::json placements_json(const Placements& placements) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : placements) out.push_back(to_string(p));
  return out;
}

// Max |sharded - unsharded| of an emulated matmul, against inputs rounded to its dtype.
double emulation_error(const strategies::LoweredOp& op, const strategies::LoweredWorkload& workload,
                       const RunResult& result) {
  const auto& plan = *op.plan;
  const DType dtype = plan.problem.dtype();
  std::vector<std::vector<double>> rounded;
  for (const auto& values : op.global_inputs)
    rounded.push_back(decode_values(encode_values(values, dtype), dtype));
  const auto expected = strategies::unsharded_result(plan.problem, rounded);
  std::vector<std::vector<double>> pieces;
  for (int r = 0; r < workload.mesh.size(); ++r)
    pieces.push_back(decode_values(result.output(op.op->name, r).bytes, dtype));
  const TensorSpec out{op.lowered->output_shape, dtype, op.lowered->output_placements};
  const auto assembled = strategies::assemble_global(out, workload.mesh, pieces);
  double err = assembled.max_replica_mismatch;
  for (size_t i = 0; i < expected.size(); ++i)
    err = std::max(err, std::abs(assembled.values[i] - expected[i]));
  return err;
}

std::string cluster_line(const ClusterSpec& c) {
  std::string line = std::to_string(c.nodes) + " node" + (c.nodes > 1 ? "s" : "") + " x " +
                     std::to_string(c.gpus_per_node) + " " + c.gpu.name + " (" + c.intra_node.kind;
  if (c.nodes > 1) line += ", " + c.inter_node.kind;
  return line + ")";
}

}  // namespace

std::string format_bytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int u = 0;
  while (value >= 1024 && u < 4) value /= 1024, ++u;
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, u == 0 ? "%.0f %s" : "%.2f %s", value, units[u]);
  return buffer;
}

SimulationReport build_simulation_report(const Scenario& scenario,
                                         const strategies::LoweredWorkload& workload,
                                         const RunResult& result, bool emulated) {
  SimulationReport report;
  report.scenario = scenario.name;
  report.cluster = cluster_line(scenario.cluster);
  report.mesh = to_string(workload.mesh);
  report.cost_model = scenario.cost_model;
  report.total_time_s = result.makespan_s;
  report.warnings = result.warnings;
  for (const auto& h : result.hazards) report.warnings.push_back("hazard: " + h.to_string());

  for (const auto& lowered : workload.ops) {
    const WorkloadOp& op = *lowered.op;
    OpReport r;
    r.name = op.name;
    r.op = to_string(op.kind);
    r.peak_memory_bytes_per_rank = lowered.peak_memory_bytes_per_rank;
    r.bytes = is_matmul(op.kind) ? 0 : op.bytes;
    for (const LabelSpan& span : result.label_spans)
      if (span.name == op.name) {
        r.time_s = span.end_s - span.start_s;
        r.comm_time_s = span.busiest_comm_s;
        r.compute_time_s = span.busiest_compute_s;
      }
    if (lowered.plan) {
      r.input_placements = lowered.plan->chosen_candidate().input_placements;
      r.output_placements = lowered.plan->chosen_candidate().output_placements;
      if (lowered.plan->problem.output_target)
        r.out_placements = lowered.plan->problem.output_target;
      r.implementation = to_string(lowered.plan->chosen_candidate().implementation);
      r.chunks = lowered.plan->chosen_candidate().chunks;
      if (emulated) r.max_abs_error = emulation_error(lowered, workload, result);
    }
    report.ops.push_back(r);
  }
  return report;
}

std::string strategy_text(const OpReport& op) {
  if (!op.input_placements) return "";
  std::string out;
  for (size_t i = 0; i < op.input_placements->size(); ++i)
    out += (i ? " x " : "") + to_string((*op.input_placements)[i]);
  out += " -> " + to_string(*op.output_placements);
  if (op.out_placements && *op.out_placements != *op.output_placements)
    out += " -> " + to_string(*op.out_placements);
  if (op.implementation != "unfused")
    out += ", " + op.implementation + " x" + std::to_string(op.chunks);
  return out;
}

std::string simulation_report_text(const SimulationReport& report) {
  std::string out = "symmesh simulate: " + report.scenario + " on " + report.cluster + ", mesh " +
                    report.mesh + ", cost model " + report.cost_model + ", backend " +
                    report.backend + "\n";
  const bool emulated = std::any_of(report.ops.begin(), report.ops.end(),
                                    [](const OpReport& r) { return r.max_abs_error.has_value(); });
  std::vector<std::string> headers{"op",        "kind",         "strategy / size", "time (ms)",
                                   "comm (ms)", "compute (ms)", "peak mem/rank"};
  if (emulated) headers.push_back("max abs error");
  TextTable table(headers);
  for (const auto& r : report.ops) {
    const std::string what = r.input_placements ? strategy_text(r) : format_bytes(r.bytes);
    std::vector<std::string> row{r.name,
                                 r.op,
                                 what,
                                 format_fixed(r.time_s * 1e3, 4),
                                 format_fixed(r.comm_time_s * 1e3, 4),
                                 format_fixed(r.compute_time_s * 1e3, 4),
                                 format_bytes(r.peak_memory_bytes_per_rank)};
    if (emulated) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.3g", r.max_abs_error.value_or(NAN));
      row.push_back(r.max_abs_error ? buffer : "-");
    }
    table.add_row(row);
  }
  out += table.render();
  out += "total: " + format_fixed(report.total_time_s * 1e3, 4) + " ms\n";
  for (const auto& w : report.warnings) out += "warning: " + w + "\n";
  return out;
}

nlohmann::json simulation_report_json(const SimulationReport& report) {
  nlohmann::json j;
  j["scenario"] = report.scenario;
  j["backend"] = report.backend;
  j["cluster"] = report.cluster;
  j["mesh"] = report.mesh;
  j["cost_model"] = report.cost_model;
  j["total_time_s"] = report.total_time_s;
  j["ops"] = nlohmann::json::array();
  for (const auto& r : report.ops) {
    nlohmann::json op = {{"name", r.name}, {"op", r.op}, {"time_s", r.time_s}};
    if (r.input_placements) {
      op["comm_time_s"] = r.comm_time_s;
      op["compute_time_s"] = r.compute_time_s;
      nlohmann::json inputs = nlohmann::json::array();
      for (const auto& p : *r.input_placements) inputs.push_back(placements_json(p));
      op["strategy"] = {{"input_placements", inputs},
                        {"output_placements", placements_json(*r.output_placements)},
                        {"implementation", r.implementation},
                        {"chunks", r.chunks}};
      if (r.out_placements) op["strategy"]["out_placements"] = placements_json(*r.out_placements);
      op["peak_memory_bytes_per_rank"] = r.peak_memory_bytes_per_rank;
      if (r.max_abs_error) op["max_abs_error"] = *r.max_abs_error;
    } else {
      op["bytes"] = r.bytes;
      op["comm_time_s"] = r.comm_time_s;
      op["peak_memory_bytes_per_rank"] = r.peak_memory_bytes_per_rank;
    }
    j["ops"].push_back(op);
  }
  j["warnings"] = report.warnings;
  return j;
}

}  // namespace symmesh::cli
