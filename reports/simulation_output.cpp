#include "reports/simulation_output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/text.hpp"
#include "reports/text_table.hpp"

namespace symmesh::reports {

using evaluation::OpReport;
using evaluation::SimulationReport;
using evaluation::strategy_text;

namespace {

nlohmann::json placements_json(const Placements& placements) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : placements) out.push_back(to_string(p));
  return out;
}

// Which op paid for which redistribution, the step's memory and the layout search.
std::string step_text(const SimulationReport& report) {
  const evaluation::StepReport& step = *report.step;
  std::string out = "redistributions paid:";
  bool any = false;
  for (const OpReport& r : report.ops)
    for (const evaluation::PaidRedistribution& p : r.redistributions) {
      out += "\n  " + r.name + ": " + p.tensor + " " + to_string(p.from) + " -> " +
             to_string(p.to) + ": " + p.steps + ", est. " + format_fixed(p.estimated_us * 1e-3, 4) +
             " ms";
      any = true;
    }
  out += any ? "\n" : " none\n";
  out += "memory: peak " + format_bytes(step.peak_memory_bytes) + " per GPU";
  if (step.capacity_bytes > 0)
    out += " of " + format_bytes(step.capacity_bytes) + " (" + step.gpu + ")";
  if (!step.peak_op.empty()) out += " at '" + step.peak_op + "'";
  out += ": " + step.memory_breakdown + "\n";
  if (step.pipeline_stages > 1) {
    out += "pipeline: " + std::to_string(step.pipeline_stages) + " stages (" +
           (step.virtual_stages > 1
                ? "interleaved 1F1B, " + std::to_string(step.virtual_stages) + " chunks each"
                : std::string("1F1B")) +
           "), " + std::to_string(step.micro_batches) + " micro-batches per replica, bubble " +
           (step.virtual_stages > 1 ? "(p - 1)/(v m) " : "(p - 1)/m ") +
           format_fixed(100 * step.bubble_fraction, 1) + "%; peak per stage";
    for (size_t s = 0; s < step.stage_peak_bytes.size(); ++s)
      out += (s ? ", " : " ") + format_bytes(step.stage_peak_bytes[s]);
    out += "\n";
  }
  out += "layout search: " + std::to_string(step.layouts_priced) + " layouts priced, " +
         std::to_string(step.states_expanded) + " states, beam " + std::to_string(step.beam_width) +
         ", " + format_fixed(step.search_s * 1e3, 1) + " ms; estimate " +
         format_fixed(step.overlapped_estimate_s * 1e3, 4) + " ms overlapped (" +
         format_fixed(step.serial_estimate_s * 1e3, 4) + " ms in series)";
  if (step.gradient_reductions)
    out += "; " + std::to_string(step.gradient_reductions) + " gradient reduction" +
           (step.gradient_reductions == 1 ? "" : "s") + " on the communication stream";
  out += "\n";
  if (step.priced_step_s > 0 && report.total_time_s > 0)
    out += "priced: " + format_fixed(step.priced_step_s * 1e3, 4) +
           " ms (the planned ops' prices through " +
           (step.pipeline_stages > 1 ? "the pipeline schedule" : "the two streams") +
           "); simulated " + format_fixed(report.total_time_s * 1e3, 4) + " ms, " +
           format_fixed(100 * (report.total_time_s / step.priced_step_s - 1), 1) + "% off\n";
  if (report.model)
    out += "model: " + report.model->model + ", " + std::to_string(report.model->tokens_per_step) +
           " tokens per step: " + format_fixed(report.model->tokens_per_s, 0) + " tokens/s, " +
           format_fixed(report.model->tokens_per_s_per_gpu, 0) + " per GPU, MFU " +
           format_fixed(100 * report.model->mfu, 1) +
           "% (PaLM's model FLOPs per token over the peak)" +
           (report.model->recompute == Recompute::full ? "; every layer recomputed in its backward"
                                                       : "") +
           "\n";
  return out;
}

// ", 32 data-parallel replicas folded into one (8 of 256 ranks simulated)", or "".
std::string folded_text(const SimulationReport& report) {
  if (report.folded_replicas <= 1) return "";
  return ", " + std::to_string(report.folded_replicas) +
         " data-parallel replicas folded into one (" + std::to_string(report.simulated_ranks) +
         " of " + std::to_string(report.simulated_ranks * report.folded_replicas) +
         " ranks simulated)";
}

}  // namespace

std::vector<double> report_times_s(const SimulationReport& report) {
  std::vector<double> times{report.total_time_s};
  for (const OpReport& r : report.ops)
    times.insert(times.end(),
                 {r.time_s, r.comm_time_s, r.compute_time_s, r.start_s, r.end_s, r.exposed_comm_s});
  return times;
}

std::string gbps_cell(double bytes_per_s) {
  return format_fixed(bytes_per_s * 1e-9, 2);
}

std::string simulation_report_text(const SimulationReport& report) {
  std::string out = "symmesh simulate: " + report.scenario + " on " + report.cluster + ", mesh " +
                    report.mesh + ", cost model " + report.cost_model + report.cost_model_note +
                    (report.placement_search == "priority-queue"
                         ? " (placement search: priority-queue, as PyTorch with PR 177799)"
                         : "") +
                    ", backend " + report.backend + folded_text(report) + "\n";
  const bool emulated = std::any_of(report.ops.begin(), report.ops.end(),
                                    [](const OpReport& r) { return r.max_abs_error.has_value(); });
  const bool collectives = std::any_of(report.ops.begin(), report.ops.end(),
                                       [](const OpReport& r) { return r.bandwidth.has_value(); });
  // Version 2 has no barrier between ops: when each op ran says what overlapped.
  const bool dataflow = report.step.has_value();
  const TimeUnit unit = time_unit_for(report_times_s(report));
  std::vector<std::string> headers{"op",
                                   "kind",
                                   "strategy / size",
                                   unit.header("time"),
                                   unit.header("comm"),
                                   unit.header("compute"),
                                   "peak mem/rank"};
  if (dataflow) {
    headers.insert(headers.begin() + 3, {unit.header("start"), unit.header("end")});
    headers.push_back(unit.header("exposed comm"));
  }
  if (collectives) headers.insert(headers.end(), {"algbw (GB/s)", "busbw (GB/s)"});
  if (emulated) headers.insert(headers.end(), {"max abs error", "error bound"});
  TextTable table(headers);
  for (const auto& r : report.ops) {
    const std::string what = r.input_placements        ? strategy_text(r)
                             : r.op == "barrier"       ? "all ranks"
                             : r.op == "micro_batches" ? std::to_string(r.micro_batches) + " of " +
                                                             std::to_string(r.micro_batches + 1)
                                                       : format_bytes(r.bytes);
    std::vector<std::string> row{r.name, r.op, what};
    if (dataflow) {
      row.push_back(unit.cell(r.start_s));
      row.push_back(unit.cell(r.end_s));
    }
    row.insert(row.end(),
               {unit.cell(r.time_s), unit.cell(r.comm_time_s), unit.cell(r.compute_time_s),
                format_bytes(r.peak_memory_bytes_per_rank)});
    if (dataflow)
      row.push_back(unit.cell(r.exposed_comm_s) + (r.on_comm_stream ? " (comm stream)" : ""));
    if (collectives) {
      row.push_back(r.bandwidth ? gbps_cell(r.bandwidth->algbw_bytes_per_s) : "");
      row.push_back(r.bandwidth ? gbps_cell(r.bandwidth->busbw_bytes_per_s) : "");
    }
    if (emulated) {
      const auto g = [](std::optional<double> v) {
        if (!v) return std::string("-");
        if (std::isinf(*v)) return std::string("none");
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.3g", *v);
        return std::string(buffer);
      };
      row.push_back(g(r.max_abs_error));
      row.push_back(r.max_abs_error ? g(r.error_bound) : "-");
    }
    table.add_row(row);
  }
  out += table.render();
  out += "total: " + unit.cell(report.total_time_s) + " " + unit.name + "\n";
  if (collectives)
    out +=
        "algbw = bytes / time, busbw = algbw x 2(n-1)/n (all_reduce) or (n-1)/n (all_gather, "
        "reduce_scatter, all_to_all) over the n ranks of a group, as nccl-tests reports them\n";
  if (!report.collectives.empty()) {
    out += "collectives:";
    for (size_t i = 0; i < report.collectives.size(); ++i) {
      const CollectiveCount& c = report.collectives[i];
      out += (i ? ", " : " ") + std::to_string(c.count) + " " + to_string(c.op) + " (" +
             c.implementation + ")";
    }
    out += "\n";
  }
  if (dataflow) out += step_text(report);
  if (const auto verdict = evaluation::emulation_verdict(report)) out += emulation_text(*verdict);
  for (const auto& w : report.warnings) out += "warning: " + w + "\n";
  return out;
}

std::string emulation_text(const evaluation::EmulationVerdict& v) {
  std::string out = "emulation: " + std::string(v.passed() ? "pass" : "FAIL") + ", " +
                    std::to_string(v.checked - static_cast<int>(v.failed.size())) + " of " +
                    std::to_string(v.checked) +
                    " matmuls within the error bound (Higham's gamma_n x max(|a||b| + |bias|), "
                    "n = 2k + 2 roundings of the dtype's unit roundoff)";
  if (v.unbounded) out += "; " + std::to_string(v.unbounded) + " op(s) without a bound not judged";
  out += "\n";
  for (const auto& name : v.failed) out += "emulation: '" + name + "' is beyond its error bound\n";
  return out;
}

nlohmann::json cluster_json(const ClusterSpec& c) {
  nlohmann::json peaks = nlohmann::json::object();
  for (const auto& [family, flops] : c.gpu.peak_flops_per_s) peaks[family] = flops;
  nlohmann::json out = {{"name", c.name},
                        {"nodes", c.nodes},
                        {"gpus_per_node", c.gpus_per_node},
                        {"gpus", c.num_gpus()},
                        {"gpu",
                         {{"name", c.gpu.name},
                          {"memory_bytes", c.gpu.memory_capacity_bytes},
                          {"memory_bandwidth_bytes_per_s", c.gpu.memory_bandwidth_bytes_per_s},
                          {"peak_flops_per_s", peaks}}},
                        {"intra_node",
                         {{"kind", c.intra_node.kind},
                          {"bandwidth_bytes_per_s", c.intra_node.bandwidth_bytes_per_s},
                          {"latency_s", c.intra_node.latency_s}}},
                        {"inter_node",
                         {{"kind", c.inter_node.kind},
                          {"nics_per_node", c.inter_node.nics_per_node},
                          {"bandwidth_bytes_per_s", c.inter_node.bandwidth_bytes_per_s},
                          {"latency_s", c.inter_node.latency_s}}}};
  // The roofline's optional figures, only when the cluster gives them (core/roofline.hpp).
  nlohmann::json& gpu = out["gpu"];
  if (!c.gpu.gemm_efficiency.empty()) gpu["gemm_efficiency"] = c.gpu.gemm_efficiency;
  if (c.gpu.memory_sustained_bandwidth_bytes_per_s > 0)
    gpu["memory_sustained_bandwidth_bytes_per_s"] = c.gpu.memory_sustained_bandwidth_bytes_per_s;
  if (c.gpu.sm_count > 0) gpu["sm_count"] = c.gpu.sm_count;
  if (c.gpu.launch_overhead_s) gpu["launch_overhead_s"] = *c.gpu.launch_overhead_s;
  return out;
}

nlohmann::json simulation_report_json(const SimulationReport& report) {
  nlohmann::json j;
  j["scenario"] = report.scenario;
  j["backend"] = report.backend;
  j["cluster"] = cluster_json(report.cluster_spec);
  j["cluster_text"] = report.cluster;
  j["mesh"] = report.mesh;
  j["cost_model"] = report.cost_model;
  j["cost_model_given"] = report.cost_model_note.empty();
  // Only where it is not the default, so that version-1 reports keep their keys.
  if (report.placement_search == "priority-queue") j["placement_search"] = report.placement_search;
  if (report.folded_replicas > 1) {  // only then, so that the other reports keep their keys
    j["folded_replicas"] = report.folded_replicas;
    j["simulated_ranks"] = report.simulated_ranks;
  }
  j["total_time_s"] = report.total_time_s;
  j["ops"] = nlohmann::json::array();
  for (const auto& r : report.ops) {
    nlohmann::json op = {{"name", r.name}, {"op", r.op}, {"time_s", r.time_s}};
    if (report.step) {
      op["start_s"] = r.start_s;
      op["end_s"] = r.end_s;
      op["exposed_comm_s"] = r.exposed_comm_s;
      op["stream"] = r.on_comm_stream ? "comm" : "main";
      op["redistributions"] = nlohmann::json::array();
      for (const auto& p : r.redistributions)
        op["redistributions"].push_back({{"tensor", p.tensor},
                                         {"from", placements_json(p.from)},
                                         {"to", placements_json(p.to)},
                                         {"steps", p.steps},
                                         {"estimated_s", p.estimated_us * 1e-6}});
    }
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
      if (r.max_abs_error) {
        op["max_abs_error"] = *r.max_abs_error;
        // null where the bound says nothing (n·u >= 1); absent for ops without one.
        if (r.error_bound)
          op["error_bound"] =
              std::isfinite(*r.error_bound) ? nlohmann::json(*r.error_bound) : nlohmann::json();
      }
    } else {
      op["bytes"] = r.bytes;
      op["comm_time_s"] = r.comm_time_s;
      op["peak_memory_bytes_per_rank"] = r.peak_memory_bytes_per_rank;
      if (r.group_size > 0) op["group_size"] = r.group_size;
      if (r.bandwidth) {
        op["algbw_bytes_per_s"] = r.bandwidth->algbw_bytes_per_s;
        op["busbw_bytes_per_s"] = r.bandwidth->busbw_bytes_per_s;
      }
      if (r.op == "micro_batches") {
        op["micro_batches"] = r.micro_batches;
        op["compute_time_s"] = r.compute_time_s;
      }
    }
    j["ops"].push_back(op);
  }
  j["collectives"] = nlohmann::json::array();
  for (const CollectiveCount& c : report.collectives)
    j["collectives"].push_back({{"op", to_string(c.op)},
                                {"implementation", c.implementation},
                                {"count", c.count},
                                {"bytes", c.bytes}});
  if (report.model)
    j["model"] = {{"name", report.model->model},
                  {"tokens_per_step", report.model->tokens_per_step},
                  {"tokens_per_s", report.model->tokens_per_s},
                  {"tokens_per_s_per_gpu", report.model->tokens_per_s_per_gpu},
                  {"model_flops_per_s_per_gpu", report.model->model_flops_per_s_per_gpu},
                  {"mfu", report.model->mfu},
                  {"recompute", to_string(report.model->recompute)}};
  if (report.step) {
    const evaluation::StepReport& step = *report.step;
    j["step"] = {{"peak_memory_bytes_per_gpu", step.peak_memory_bytes},
                 {"memory_breakdown", step.memory_breakdown},
                 {"peak_op", step.peak_op},
                 {"gpu_memory_bytes", step.capacity_bytes},
                 {"serial_estimate_s", step.serial_estimate_s},
                 {"overlapped_estimate_s", step.overlapped_estimate_s},
                 {"priced_step_s", step.priced_step_s},
                 {"layouts_priced", step.layouts_priced},
                 {"states_expanded", step.states_expanded},
                 {"search_s", step.search_s},
                 {"beam_width", step.beam_width},
                 {"gradient_reductions", step.gradient_reductions}};
    if (step.pipeline_stages > 1)
      j["step"]["pipeline"] = {{"stages", step.pipeline_stages},
                               {"virtual_stages", step.virtual_stages},
                               {"micro_batches", step.micro_batches},
                               {"bubble_fraction", step.bubble_fraction},
                               {"stage_peak_bytes_per_gpu", step.stage_peak_bytes}};
  }
  if (const auto verdict = evaluation::emulation_verdict(report))
    j["emulation"] = {{"passed", verdict->passed()},
                      {"checked", verdict->checked},
                      {"unbounded", verdict->unbounded},
                      {"failed", verdict->failed}};
  j["warnings"] = report.warnings;
  return j;
}

}  // namespace symmesh::reports
