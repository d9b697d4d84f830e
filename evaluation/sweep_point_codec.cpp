#include "evaluation/sweep_point_codec.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"

namespace symmesh::evaluation {
namespace {

using nlohmann::json;

// "%a" prints every finite double exactly, and inf and nan as words strtod reads back.
json exact(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%a", value);
  return text;
}

double exact_double(const json& j) {
  const std::string text = j.get<std::string>();
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') throw json::other_error::create(501, "not a double", &j);
  return value;
}

template <typename Enum>
Enum enum_value(const json& j, int last) {
  const int value = j.get<int>();
  if (value < 0 || value > last) throw json::other_error::create(501, "enum out of range", &j);
  return static_cast<Enum>(value);
}

json placements_json(const Placements& placements) {
  // The canonical text, "S(0),R", which parse_placements reads back as it was.
  return to_string(placements);
}
Placements placements_of(const json& j) {
  const std::string text = j.get<std::string>();
  return text.empty() ? Placements{} : parse_placements(text, "encoded sweep point");
}

json op_json(const OpReport& op) {
  json j = {{"name", op.name},
            {"op", op.op},
            {"time_s", exact(op.time_s)},
            {"start_s", exact(op.start_s)},
            {"end_s", exact(op.end_s)},
            {"exposed_comm_s", exact(op.exposed_comm_s)},
            {"on_comm_stream", op.on_comm_stream},
            {"comm_time_s", exact(op.comm_time_s)},
            {"compute_time_s", exact(op.compute_time_s)},
            {"peak_memory_bytes_per_rank", op.peak_memory_bytes_per_rank},
            {"bytes", op.bytes},
            {"implementation", op.implementation},
            {"chunks", op.chunks},
            {"micro_batches", op.micro_batches},
            {"redistributions", json::array()}};
  if (op.input_placements) {
    j["input_placements"] = json::array();
    for (const Placements& p : *op.input_placements)
      j["input_placements"].push_back(placements_json(p));
  }
  if (op.output_placements) j["output_placements"] = placements_json(*op.output_placements);
  if (op.out_placements) j["out_placements"] = placements_json(*op.out_placements);
  if (op.max_abs_error) j["max_abs_error"] = exact(*op.max_abs_error);
  if (op.error_bound) j["error_bound"] = exact(*op.error_bound);
  j["group_size"] = op.group_size;
  if (op.bandwidth)
    j["bandwidth"] = {{"algbw_bytes_per_s", exact(op.bandwidth->algbw_bytes_per_s)},
                      {"busbw_bytes_per_s", exact(op.bandwidth->busbw_bytes_per_s)}};
  for (const PaidRedistribution& r : op.redistributions)
    j["redistributions"].push_back({{"tensor", r.tensor},
                                    {"from", placements_json(r.from)},
                                    {"to", placements_json(r.to)},
                                    {"steps", r.steps},
                                    {"estimated_us", exact(r.estimated_us)}});
  return j;
}

OpReport op_of(const json& j) {
  OpReport op;
  op.name = j.at("name").get<std::string>();
  op.op = j.at("op").get<std::string>();
  op.time_s = exact_double(j.at("time_s"));
  op.start_s = exact_double(j.at("start_s"));
  op.end_s = exact_double(j.at("end_s"));
  op.exposed_comm_s = exact_double(j.at("exposed_comm_s"));
  op.on_comm_stream = j.at("on_comm_stream").get<bool>();
  op.comm_time_s = exact_double(j.at("comm_time_s"));
  op.compute_time_s = exact_double(j.at("compute_time_s"));
  op.peak_memory_bytes_per_rank = j.at("peak_memory_bytes_per_rank").get<int64_t>();
  op.bytes = j.at("bytes").get<int64_t>();
  op.implementation = j.at("implementation").get<std::string>();
  op.chunks = j.at("chunks").get<int>();
  op.micro_batches = j.at("micro_batches").get<int>();
  if (j.contains("input_placements")) {
    op.input_placements.emplace();
    for (const json& p : j.at("input_placements")) op.input_placements->push_back(placements_of(p));
  }
  if (j.contains("output_placements")) op.output_placements = placements_of(j["output_placements"]);
  if (j.contains("out_placements")) op.out_placements = placements_of(j["out_placements"]);
  if (j.contains("max_abs_error")) op.max_abs_error = exact_double(j["max_abs_error"]);
  if (j.contains("error_bound")) op.error_bound = exact_double(j["error_bound"]);
  op.group_size = j.at("group_size").get<int>();
  if (j.contains("bandwidth"))
    op.bandwidth = CollectiveBandwidth{exact_double(j["bandwidth"].at("algbw_bytes_per_s")),
                                       exact_double(j["bandwidth"].at("busbw_bytes_per_s"))};
  for (const json& r : j.at("redistributions"))
    op.redistributions.push_back({r.at("tensor").get<std::string>(), placements_of(r.at("from")),
                                  placements_of(r.at("to")), r.at("steps").get<std::string>(),
                                  exact_double(r.at("estimated_us"))});
  return op;
}

json step_json(const StepReport& s) {
  json peaks = json::array();
  for (int64_t b : s.stage_peak_bytes) peaks.push_back(b);
  return {{"peak_memory_bytes", s.peak_memory_bytes},
          {"memory_breakdown", s.memory_breakdown},
          {"peak_op", s.peak_op},
          {"capacity_bytes", s.capacity_bytes},
          {"gpu", s.gpu},
          {"serial_estimate_s", exact(s.serial_estimate_s)},
          {"overlapped_estimate_s", exact(s.overlapped_estimate_s)},
          {"layouts_priced", s.layouts_priced},
          {"states_expanded", s.states_expanded},
          {"search_s", exact(s.search_s)},
          {"beam_width", s.beam_width},
          {"gradient_reductions", s.gradient_reductions},
          {"pipeline_stages", s.pipeline_stages},
          {"virtual_stages", s.virtual_stages},
          {"micro_batches", s.micro_batches},
          {"bubble_fraction", exact(s.bubble_fraction)},
          {"stage_peak_bytes", peaks}};
}

StepReport step_of(const json& j) {
  StepReport s;
  s.peak_memory_bytes = j.at("peak_memory_bytes").get<int64_t>();
  s.memory_breakdown = j.at("memory_breakdown").get<std::string>();
  s.peak_op = j.at("peak_op").get<std::string>();
  s.capacity_bytes = j.at("capacity_bytes").get<int64_t>();
  s.gpu = j.at("gpu").get<std::string>();
  s.serial_estimate_s = exact_double(j.at("serial_estimate_s"));
  s.overlapped_estimate_s = exact_double(j.at("overlapped_estimate_s"));
  s.layouts_priced = j.at("layouts_priced").get<int64_t>();
  s.states_expanded = j.at("states_expanded").get<int64_t>();
  s.search_s = exact_double(j.at("search_s"));
  s.beam_width = j.at("beam_width").get<int>();
  s.gradient_reductions = j.at("gradient_reductions").get<int>();
  s.pipeline_stages = j.at("pipeline_stages").get<int>();
  s.virtual_stages = j.at("virtual_stages").get<int>();
  s.micro_batches = j.at("micro_batches").get<int>();
  s.bubble_fraction = exact_double(j.at("bubble_fraction"));
  s.stage_peak_bytes = j.at("stage_peak_bytes").get<std::vector<int64_t>>();
  return s;
}

json model_json(const ModelThroughput& m) {
  return {{"model", m.model},
          {"tokens_per_step", m.tokens_per_step},
          {"tokens_per_s", exact(m.tokens_per_s)},
          {"tokens_per_s_per_gpu", exact(m.tokens_per_s_per_gpu)},
          {"model_flops_per_s_per_gpu", exact(m.model_flops_per_s_per_gpu)},
          {"mfu", exact(m.mfu)},
          {"recompute", static_cast<int>(m.recompute)}};
}

ModelThroughput model_of(const json& j) {
  ModelThroughput m;
  m.model = j.at("model").get<std::string>();
  m.tokens_per_step = j.at("tokens_per_step").get<int64_t>();
  m.tokens_per_s = exact_double(j.at("tokens_per_s"));
  m.tokens_per_s_per_gpu = exact_double(j.at("tokens_per_s_per_gpu"));
  m.model_flops_per_s_per_gpu = exact_double(j.at("model_flops_per_s_per_gpu"));
  m.mfu = exact_double(j.at("mfu"));
  m.recompute = enum_value<Recompute>(j.at("recompute"), static_cast<int>(Recompute::full));
  return m;
}

json report_json(const SimulationReport& r) {
  json j = {{"scenario", r.scenario},
            {"backend", r.backend},
            {"cluster", r.cluster},
            {"mesh", r.mesh},
            {"cost_model", r.cost_model},
            {"placement_search", r.placement_search},
            {"total_time_s", exact(r.total_time_s)},
            {"ops", json::array()},
            {"collectives", json::array()},
            {"warnings", r.warnings}};
  for (const OpReport& op : r.ops) j["ops"].push_back(op_json(op));
  for (const CollectiveCount& c : r.collectives)
    j["collectives"].push_back({{"op", static_cast<int>(c.op)},
                                {"implementation", c.implementation},
                                {"count", c.count},
                                {"bytes", c.bytes}});
  if (r.step) j["step"] = step_json(*r.step);
  if (r.model) j["model"] = model_json(*r.model);
  return j;
}

SimulationReport report_of(const json& j) {
  SimulationReport r;
  r.scenario = j.at("scenario").get<std::string>();
  r.backend = j.at("backend").get<std::string>();
  r.cluster = j.at("cluster").get<std::string>();
  r.mesh = j.at("mesh").get<std::string>();
  r.cost_model = j.at("cost_model").get<std::string>();
  r.placement_search = j.at("placement_search").get<std::string>();
  r.total_time_s = exact_double(j.at("total_time_s"));
  for (const json& op : j.at("ops")) r.ops.push_back(op_of(op));
  for (const json& c : j.at("collectives"))
    r.collectives.push_back(
        {enum_value<CollectiveOp>(c.at("op"), static_cast<int>(CollectiveOp::matmul_reducescatter)),
         c.at("implementation").get<std::string>(), c.at("count").get<int>(),
         c.at("bytes").get<int64_t>()});
  r.warnings = j.at("warnings").get<std::vector<std::string>>();
  if (j.contains("step")) r.step = step_of(j["step"]);
  if (j.contains("model")) r.model = model_of(j["model"]);
  return r;
}

}  // namespace

std::string encode_sweep_point(const SweepPoint& point) {
  json j = {{"nodes", point.nodes},
            {"gpus", point.gpus},
            {"mesh", point.mesh},
            {"recompute_fallback", point.recompute_fallback},
            {"micro_batch", point.micro_batch},
            {"zero", point.zero}};
  if (point.skip_reason)
    j["skip_reason"] = *point.skip_reason;
  else
    j["report"] = report_json(point.report);
  return j.dump();
}

SweepPoint decode_sweep_point(const std::string& bytes, const std::string& where) {
  try {
    const json j = json::parse(bytes);
    SweepPoint point;
    point.nodes = j.at("nodes").get<int>();
    point.gpus = j.at("gpus").get<int64_t>();
    point.mesh = j.at("mesh").get<std::vector<int>>();
    point.recompute_fallback = j.at("recompute_fallback").get<bool>();
    point.micro_batch = j.at("micro_batch").get<int64_t>();
    point.zero = j.at("zero").get<int>();
    if (j.contains("skip_reason"))
      point.skip_reason = j["skip_reason"].get<std::string>();
    else
      point.report = report_of(j.at("report"));
    return point;
  } catch (const json::exception& e) {
    throw InvalidArgument(std::string("not an encoded sweep point: ") + e.what(), where);
  }
}

}  // namespace symmesh::evaluation
