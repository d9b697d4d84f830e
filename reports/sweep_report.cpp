#include "reports/sweep_report.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <variant>

#include "reports/report_columns.hpp"
#include "reports/simulation_output.hpp"
#include "reports/text_table.hpp"
#include "strategies/dataflow_graph.hpp"

namespace symmesh::reports {

using namespace evaluation;
// Scenario text in Markdown: no raw HTML (a name "<script>" stays text) and no entity.
// Nor markup: the characters that make links, images, code or emphasis are
// backslash-escaped, so a name "[click](http://…)" or "*x*" stays the text it is. An
// underscore between two letters or digits cannot open or close emphasis (CommonMark's
// flanking rules), so names like w_up stay as written.
std::string markdown_text(const std::string& text) {
  const auto alnum = [&](size_t i) {
    return i < text.size() && std::isalnum(static_cast<unsigned char>(text[i]));
  };
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<')
      out += "&lt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '\\' || c == '`' || c == '*' || c == '[' || c == ']' || c == '~' ||
             (c == '_' && !(i > 0 && alnum(i - 1) && alnum(i + 1))))
      out.append("\\").push_back(c);
    else
      out += c;
  }
  return out;
}

namespace {

std::string markdown_cell(const std::string& cell) {
  std::string out;
  for (char c : markdown_text(cell)) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

// A table row of text cells; cell `bold` (if any) is set in bold, outside its escaping.
std::string markdown_row(const std::vector<std::string>& cells, int bold = -1) {
  std::string out = "|";
  for (size_t i = 0; i < cells.size(); ++i) {
    const std::string cell = markdown_cell(cells[i]);
    out.append(" ").append(static_cast<int>(i) == bold ? "**" + cell + "**" : cell).append(" |");
  }
  return out + "\n";
}

// One column per op name over the simulated points, in first-seen order, with the first
// report of that name (its kind says whether it has a strategy). Version-1 points all
// have the file's ops; version-2 points have the ops their layouts need (a gradient
// reduction exists only where the layout replicates its weight).
struct OpColumn {
  std::string name;
  const OpReport* first = nullptr;
};

std::vector<OpColumn> op_columns(const SweepRun& run) {
  std::vector<OpColumn> out;
  std::map<std::string, size_t> seen;
  for (const auto& p : run.points)
    if (p.simulated())
      for (const auto& op : p.report.ops)
        if (seen.emplace(op.name, out.size()).second) out.push_back({op.name, &op});
  return out;
}

const OpReport* op_in(const SweepPoint& p, const std::string& name) {
  for (const auto& op : p.report.ops)
    if (op.name == name) return &op;
  return nullptr;
}

// The terminal shows at most this many op columns; past it, ops are summed by what they
// do (forward, backward, gradient reductions, other), so a whole model stays readable.
constexpr size_t kMaxTerminalOpColumns = 8;

// The groups the op columns are summed into when there are too many (in the step's order:
// earlier micro-batches, forward, recompute, backward, grad reductions, optimizer); none
// otherwise.
std::vector<std::string> work_groups(const std::vector<OpColumn>& columns) {
  std::vector<std::string> groups;
  if (columns.size() <= kMaxTerminalOpColumns) return groups;
  for (const char* group : {"earlier micro-batches", "forward", "recompute", "backward",
                            "grad reductions", "optimizer"})
    for (const auto& c : columns)
      if (strategies::work_group_of(c.name) == group) {
        groups.push_back(group);
        break;
      }
  return groups;
}

double group_time_s(const SweepPoint& p, const std::string& group) {
  double sum_s = 0;
  for (const auto& op : p.report.ops)
    if (strategies::work_group_of(op.name) == group) sum_s += op.time_s;
  return sum_s;
}

// The sweep's columns a table shows for this run (sweep_columns(): nodes, GPUs, mesh, total,
// and where the run has them, meets and the model's figures).
using PointColumns = std::vector<const Column<SweepRow>*>;

std::vector<std::string> point_headers(const SweepOutcome& o, const PointColumns& shown,
                                       const TimeUnit& unit) {
  std::vector<std::string> headers;
  for (const auto* c : shown) headers.push_back(table_header(*c, o, unit));
  return headers;
}

// A point's cells in those columns; a skipped point's row says "skipped" where its figures
// would start.
std::vector<std::string> point_cells(const SweepOutcome& o, const SweepPoint& p,
                                     const PointColumns& shown, const TimeUnit& unit) {
  std::vector<std::string> cells;
  const SweepRow row{o, p};
  for (const auto* c : shown) {
    if (!p.simulated() && std::holds_alternative<std::monostate>(c->get(row))) {
      cells.push_back("skipped");
      break;
    }
    cells.push_back(table_cell(*c, row, unit));
  }
  return cells;
}

std::string nodes_text(int nodes) {
  return std::to_string(nodes) + (nodes == 1 ? " node" : " nodes");
}

}  // namespace

SweepTimeUnit sweep_time_unit(const SweepRun& run) {
  std::vector<double> totals;
  for (const auto& p : run.points)
    if (p.simulated()) totals.push_back(p.total_time_s());
  return time_unit_for(totals);
}

const std::vector<std::string>& sweep_csv_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> keys;
    for (const auto& c : sweep_columns())
      if (c.outputs & kCsv) keys.push_back(c.key);
    return keys;
  }();
  return columns;
}

std::string sweep_scope_text(const Scenario& scenario) {
  if (!scenario.sweep)
    return "the scenario has no `sweep:`, so only its own size is evaluated: " +
           nodes_text(scenario.cluster.nodes) + ", mesh " +
           named_mesh_text(scenario.mesh_shape, scenario.mesh_names);
  std::string nodes;
  for (int n : scenario.sweep->nodes)
    nodes.append(nodes.empty() ? "" : ", ").append(std::to_string(n));
  std::string meshes;
  if (scenario.sweep->mesh_auto) {
    meshes = "auto (every factorisation of the GPU count into " +
             std::to_string(scenario.mesh_shape.size()) + " mesh dims)";
  } else {
    for (const auto& s : scenario.sweep->mesh_shapes)
      meshes.append(meshes.empty() ? "" : ", ").append(mesh_text(s));
  }
  return "nodes " + nodes + " (" + std::to_string(scenario.cluster.gpus_per_node) +
         " GPUs each); mesh " + meshes;
}

std::string sweep_summary_markdown(const SweepOutcome& o) {
  const Scenario& s = o.scenario;
  const auto& points = o.run.points;
  std::string out = "# symmesh sweep: " + markdown_text(s.name) + "\n\n";
  // The answer's lines as paragraphs, the first one bold.
  const std::string answer = answer_text(o.answer, points, s.mesh_names);
  for (size_t begin = 0, end; begin < answer.size(); begin = end + 1) {
    end = answer.find('\n', begin);
    const std::string line = markdown_text(answer.substr(begin, end - begin));
    out += (begin == 0 ? "**" + line + "**" : line) + "\n\n";
  }
  const ClusterSpec& c = s.cluster;
  out += "- Cluster: " + markdown_text(c.name) + ", " + std::to_string(c.gpus_per_node) + " x " +
         markdown_text(c.gpu.name) + " per node (" + c.intra_node.kind + " inside a node, " +
         c.inter_node.kind + " between nodes)\n";
  out += "- Swept: " + markdown_text(sweep_scope_text(s)) + "\n";
  out += "- Mesh dims: " + (s.mesh_names.empty() ? std::string("unnamed") : [&] {
    std::string n;
    for (const auto& name : s.mesh_names)
      n.append(n.empty() ? "" : " x ").append(markdown_text(name));
    return n;
  }()) + "\n";
  out += "- Objective: " +
         (o.answer.max_time_s ? "step time <= " + format_time(*o.answer.max_time_s)
                              : std::string("none (fastest point per GPU count)")) +
         "\n";
  out += "- Cost model: " + s.cost_model + s.cost_model_note() +
         (s.placement_search == "priority-queue"
              ? " (placement search: priority-queue, as PyTorch with PR 177799)"
              : "") +
         "\n";
  out += "- Points: " + std::to_string(points.size()) + " (" + std::to_string(o.answer.simulated) +
         " simulated, " + std::to_string(o.answer.skipped) + " skipped)\n\n";

  // One row per point: totals, then each op's time (and strategy for matmuls).
  const std::vector<OpColumn> columns = op_columns(o.run);
  const SweepTimeUnit unit = sweep_time_unit(o.run);
  const std::string in_unit = " (" + unit.name + ")";
  const PointColumns shown = table_columns(sweep_columns(), kMarkdown, o);
  std::vector<std::string> header = point_headers(o, shown, unit);
  std::string align = markdown_alignment(shown);
  // The answer's total is set in bold.
  const int total = static_cast<int>(
      std::find_if(shown.begin(), shown.end(),
                   [](const auto* c) { return c->key == "total_time_s"; }) -
      shown.begin());
  // Past kMaxTerminalOpColumns ops the table sums them by group, as the terminal does;
  // the answer's own table below lists every op.
  const std::vector<std::string> groups = work_groups(columns);
  if (groups.empty())
    for (const auto& c : columns) {
      header.push_back(c.name + in_unit), align += "---:|";
      if (c.first->input_placements) header.push_back(c.name + " strategy"), align += "---|";
    }
  for (const auto& g : groups) header.push_back("sum " + g + in_unit), align += "---:|";
  out += "## Points\n\n" + markdown_row(header) + align + "\n";
  for (size_t i = 0; i < points.size(); ++i) {
    const SweepPoint& p = points[i];
    std::vector<std::string> row = point_cells(o, p, shown, unit);
    if (!p.simulated()) {
      out += markdown_row(row);
      continue;
    }
    const int bold = o.answer.best == i ? total : -1;
    if (groups.empty())
      for (const auto& c : columns) {
        const OpReport* op = op_in(p, c.name);
        row.push_back(op ? unit.cell(op->time_s) : "-");
        if (c.first->input_placements) row.push_back(op ? strategy_text(*op) : "-");
      }
    for (const auto& g : groups) row.push_back(unit.cell(group_time_s(p, g)));
    out += markdown_row(row, bold);
  }
  if (o.answer.best)
    out +=
        "\nThe bold total is the " + std::string(o.answer.met ? "answer" : "fastest point") + ".\n";

  if (o.answer.skipped > 0) {
    out += "\n## Skipped points\n\n" + markdown_row({"nodes", "GPUs", "mesh", "reason"}) +
           "|---:|---:|---|---|\n";
    for (const auto& p : points)
      if (!p.simulated())
        out += markdown_row({std::to_string(p.nodes), std::to_string(p.gpus), point_layout_text(p),
                             *p.skip_reason});
  }

  if (o.answer.best) {
    const SweepPoint& best = points[*o.answer.best];
    out += "\n## " + std::string(o.answer.met ? "Answer" : "Fastest point") + ": " +
           nodes_text(best.nodes) + " (" + std::to_string(best.gpus) + " GPUs), mesh " +
           markdown_text(named_mesh_text(best.mesh, s.mesh_names)) + "\n\n";
    // Collectives also with nccl-tests' bandwidths (core/bus_bandwidth.hpp).
    const bool collectives =
        std::any_of(best.report.ops.begin(), best.report.ops.end(),
                    [](const OpReport& op) { return op.bandwidth.has_value(); });
    std::vector<std::string> header{
        "op", "kind", "time" + in_unit, "comm" + in_unit, "compute" + in_unit, "strategy / bytes"};
    std::string align = "|---|---|---:|---:|---:|---|";
    if (collectives) {
      header.insert(header.end(), {"algbw (GB/s)", "busbw (GB/s)"});
      align += "---:|---:|";
    }
    out += markdown_row(header) + align + "\n";
    for (const auto& op : best.report.ops) {
      std::vector<std::string> row{
          op.name,
          op.op,
          unit.cell(op.time_s),
          unit.cell(op.comm_time_s),
          unit.cell(op.compute_time_s),
          op.input_placements ? strategy_text(op) : format_bytes(op.bytes)};
      if (collectives) {
        row.push_back(op.bandwidth ? format_fixed(op.bandwidth->algbw_bytes_per_s * 1e-9, 2) : "");
        row.push_back(op.bandwidth ? format_fixed(op.bandwidth->busbw_bytes_per_s * 1e-9, 2) : "");
      }
      out += markdown_row(row);
    }
    out += "\ncomm and compute are the busiest rank's time in each; they may overlap.";
    if (collectives)
      out +=
          " algbw = bytes / time and busbw = algbw x 2(n-1)/n (all_reduce) or (n-1)/n "
          "(all_gather, reduce_scatter, all_to_all) over a group of n, as nccl-tests reports "
          "them.";
    out += "\n";
    for (const auto& w : best.report.warnings) out += "\nwarning: " + markdown_text(w) + "\n";
  }
  if (!o.files.empty()) {
    out += "\n## Files\n\n";
    for (const auto& f : o.files) out += "- [" + f + "](" + f + ")\n";
  }
  return out;
}

std::string sweep_results_csv(const SweepOutcome& o) {
  const auto& columns = sweep_columns();
  std::string out = csv_header(columns);
  for (const auto& p : o.run.points) {
    if (!p.simulated()) out += csv_row(columns, SweepRow{o, p});
    for (const auto& op : p.report.ops) out += csv_row(columns, SweepRow{o, p, &op});
  }
  return out;
}

nlohmann::json sweep_results_json(const SweepOutcome& o) {
  const Scenario& s = o.scenario;
  const auto& points = o.run.points;
  const SweepAnswer& a = o.answer;
  nlohmann::json j;
  j["scenario"] = s.name;
  j["backend"] = "sim";
  j["cost_model"] = s.cost_model;
  // Only where it is not the default, as in simulate --json.
  if (s.placement_search == "priority-queue") j["placement_search"] = s.placement_search;
  // The scenario's cluster as the file gives it (each point sets its own node count).
  j["cluster"] = cluster_json(s.cluster);
  j["cluster_name"] = s.cluster.name;
  j["gpus_per_node"] = s.cluster.gpus_per_node;
  j["mesh_names"] = s.mesh_names;
  nlohmann::json sweep;
  if (s.sweep) {
    sweep["nodes"] = s.sweep->nodes;
    sweep["mesh"] =
        s.sweep->mesh_auto ? nlohmann::json("auto") : nlohmann::json(s.sweep->mesh_shapes);
    if (!s.sweep->micro_batches.empty()) sweep["micro_batch"] = s.sweep->micro_batches;
    if (!s.sweep->zero_stages.empty()) sweep["zero"] = s.sweep->zero_stages;
  } else {
    sweep["nodes"] = {s.cluster.nodes};
    sweep["mesh"] = {s.mesh_shape};
  }
  sweep["from_scenario"] = s.sweep.has_value();
  j["sweep"] = sweep;
  j["objective"] = a.max_time_s ? nlohmann::json{{"max_time_s", *a.max_time_s}} : nlohmann::json();

  nlohmann::json answer;
  answer["text"] = answer_text(a, points, s.mesh_names);
  answer["objective_max_time_s"] = a.max_time_s ? nlohmann::json(*a.max_time_s) : nlohmann::json();
  answer["met"] = a.max_time_s ? nlohmann::json(a.met) : nlohmann::json();
  answer["point"] = a.best ? nlohmann::json(*a.best) : nlohmann::json();
  if (a.best) {
    const SweepPoint& best = points[*a.best];
    answer["nodes"] = best.nodes;
    answer["gpus"] = best.gpus;
    answer["mesh"] = best.mesh;
    if (best.micro_batch > 0) answer["micro_batch"] = best.micro_batch;
    if (best.zero >= 0) answer["zero"] = best.zero;
    answer["total_time_s"] = best.total_time_s();
    nlohmann::json strategies = nlohmann::json::array();
    const nlohmann::json report = simulation_report_json(best.report);
    for (const auto& op : report["ops"])
      if (op.contains("strategy"))
        strategies.push_back({{"name", op["name"]}, {"strategy", op["strategy"]}});
    answer["strategies"] = strategies;
    if (a.max_time_s && !a.met) {
      answer["miss_s"] = a.miss_s;
      answer["miss_percent"] = a.miss_percent;
    }
  }
  answer["points_meeting"] = a.max_time_s ? nlohmann::json(a.meeting) : nlohmann::json();
  nlohmann::json fastest = nlohmann::json::array();
  for (size_t i : a.fastest_per_gpu_count)
    fastest.push_back({{"gpus", points[i].gpus},
                       {"nodes", points[i].nodes},
                       {"mesh", points[i].mesh},
                       {"point", i},
                       {"total_time_s", points[i].total_time_s()}});
  answer["fastest_per_gpu_count"] = fastest;
  j["answer"] = answer;

  j["points"] = nlohmann::json::array();
  for (const auto& p : points) {
    // The point's columns (sweep_columns()), and its simulation's model figures, ops and
    // warnings with the keys of `symmesh simulate --json`.
    nlohmann::json point = nlohmann::json::object();
    if (p.simulated()) {
      const nlohmann::json report = simulation_report_json(p.report);
      if (report.contains("model")) point["model"] = report["model"];
      point["ops"] = report["ops"];
      point["warnings"] = report["warnings"];
    }
    write_json(sweep_columns(), SweepRow{o, p}, point);
    j["points"].push_back(point);
  }
  return j;
}

std::string sweep_terminal_text(const SweepOutcome& o) {
  const auto& points = o.run.points;
  std::string out = answer_text(o.answer, points, o.scenario.mesh_names) + "\n";
  const std::vector<OpColumn> columns = op_columns(o.run);
  const SweepTimeUnit unit = sweep_time_unit(o.run);
  const std::string in_unit = " (" + unit.name + ")";
  const PointColumns shown = table_columns(sweep_columns(), kTerminal, o);
  std::vector<std::string> header{""};
  for (const auto& h : point_headers(o, shown, unit)) header.push_back(h);
  // Too many ops for a terminal line: their times summed by group instead.
  const std::vector<std::string> groups = work_groups(columns);
  if (groups.empty())
    for (const auto& c : columns) header.push_back(c.name + in_unit);
  else
    for (const auto& g : groups) header.push_back("sum " + g + in_unit);
  TextTable table(header);
  for (size_t i = 0; i < points.size(); ++i) {
    const SweepPoint& p = points[i];
    std::vector<std::string> row{o.answer.best == i ? "*" : ""};
    for (const auto& cell : point_cells(o, p, shown, unit)) row.push_back(cell);
    if (p.simulated()) {
      if (groups.empty())
        for (const auto& c : columns) {
          const OpReport* op = op_in(p, c.name);
          row.push_back(op ? unit.cell(op->time_s) : "-");
        }
      for (const auto& g : groups) row.push_back(unit.cell(group_time_s(p, g)));
    }
    table.add_row(row);
  }
  out += table.render();
  if (o.answer.best)
    out += "  * the " + std::string(o.answer.met ? "answer" : "fastest point") + "\n";
  if (!groups.empty())
    out +=
        "  sums are of op times (ops on the two streams overlap, so they exceed the total); "
        "every op is in summary.md and results.csv\n";
  for (const auto& p : points)
    if (!p.simulated())
      out += "skipped: " + nodes_text(p.nodes) + ", mesh " + point_layout_text(p) + ": " +
             *p.skip_reason + "\n";
  return out;
}

}  // namespace symmesh::reports
