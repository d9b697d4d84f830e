// symmesh compare: the same Program simulated and executed on this machine's GPUs, per op:
// predicted time, measured time and the simulator's error in percent of the measurement —
// "evaluated, then executed" (docs/architecture.md), with the difference as the report.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/library_collectives.hpp"
#include "evaluation/folded_training_step.hpp"
#include "evaluation/hardware_evaluation.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "reports/simulation_output.hpp"
#include "reports/text_table.hpp"
#include "scenario/scenario_loader.hpp"
#include "tools/cli/command.hpp"

namespace symmesh::cli {

using namespace evaluation;
namespace {

struct CompareArgs {
  std::string scenario;
  bool json = false;
  std::string collectives = "one-sided";
  double timeout_s = 10;
  int warmup = 1;
  bool no_fuse = false;
};

struct Row {
  std::string name, op;
  double predicted_s = 0, measured_s = 0;
  // Collectives: nccl-tests' bandwidths of each time (core/bus_bandwidth.hpp).
  std::optional<CollectiveBandwidth> predicted_bw, measured_bw;
  double error_percent() const {
    return measured_s > 0 ? (predicted_s - measured_s) / measured_s * 100 : NAN;
  }
};

std::vector<Row> rows_of(const SimulationReport& predicted, const SimulationReport& measured) {
  std::vector<Row> rows;
  for (const OpReport& p : predicted.ops) {
    Row row{p.name, p.op, p.time_s, NAN, p.bandwidth, std::nullopt};
    for (const OpReport& m : measured.ops)
      if (m.name == p.name) row.measured_s = m.time_s, row.measured_bw = m.bandwidth;
    rows.push_back(row);
  }
  rows.push_back(
      {"total", "", predicted.total_time_s, measured.total_time_s, std::nullopt, std::nullopt});
  return rows;
}

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nullptr;
}

int run_compare(const CompareArgs& args) {
  const CollectivesChoice collectives = parse_collectives(args.collectives);
  Scenario scenario = load_scenario(args.scenario);
  refuse_folded_on_hardware(scenario, "symmesh compare");
  scenario.cluster = cluster_for_collectives(scenario.cluster, collectives);
  HardwareOptions options;
  options.collectives = collectives;
  options.timeout_s = args.timeout_s;
  options.warmup_runs = args.warmup;
  options.fuse = !args.no_fuse;
  // Version 2's derived op names are known once planned (evaluate_on_hardware checks).
  if (!scenario.is_dataflow()) check_native_op_names(collectives, scenario);
  // The simulation first: it forks, and a process must fork before CUDA and NCCL have
  // started their threads (see sim/forked_run.hpp).
  EvaluationOptions simulation;
  simulation.fuse = options.fuse;
  simulation.collectives = collectives;
  const Evaluation predicted = evaluate_scenario(scenario, simulation);
  const auto measured = std::make_unique<HardwareEvaluation>(
      evaluate_on_hardware(scenario, options, "symmesh compare"));
  if (!measured->result.reporting) return 0;
  const auto rows = rows_of(predicted.report, measured->report);

  if (args.json) {
    nlohmann::json j;
    j["scenario"] = scenario.name;
    j["cluster"] = reports::cluster_json(predicted.report.cluster_spec);
    j["cluster_text"] = predicted.report.cluster;
    j["mesh"] = predicted.report.mesh;
    j["collectives"] = args.collectives;
    j["ops"] = nlohmann::json::array();
    for (const Row& r : rows) {
      nlohmann::json op = {{"name", r.name},
                           {"predicted_s", r.predicted_s},
                           {"measured_s", number_or_null(r.measured_s)},
                           {"error_percent", number_or_null(r.error_percent())}};
      if (r.predicted_bw) {
        op["predicted_algbw_bytes_per_s"] = r.predicted_bw->algbw_bytes_per_s;
        op["predicted_busbw_bytes_per_s"] = r.predicted_bw->busbw_bytes_per_s;
        op["measured_algbw_bytes_per_s"] =
            r.measured_bw ? nlohmann::json(r.measured_bw->algbw_bytes_per_s) : nlohmann::json();
        op["measured_busbw_bytes_per_s"] =
            r.measured_bw ? nlohmann::json(r.measured_bw->busbw_bytes_per_s) : nlohmann::json();
      }
      if (r.name == "total") {
        j["total"] = op;
      } else {
        op["op"] = r.op;
        j["ops"].push_back(op);
      }
    }
    j["notes"] = measured->result.notes;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "symmesh compare: " << scenario.name << " on " << predicted.report.cluster
            << ", mesh " << predicted.report.mesh << ", collectives " << args.collectives << "\n";
  std::vector<double> times;
  for (const Row& r : rows) times.insert(times.end(), {r.predicted_s, r.measured_s});
  const reports::TimeUnit unit = reports::time_unit_for(times);
  const bool any_collective = std::any_of(rows.begin(), rows.end(),
                                          [](const Row& r) { return r.predicted_bw.has_value(); });
  std::vector<std::string> headers{"op", "kind", unit.header("predicted"), unit.header("measured"),
                                   "error %"};
  if (any_collective)
    headers.insert(headers.end(),
                   {"predicted busbw (GB/s)", "measured busbw (GB/s)", "measured algbw (GB/s)"});
  reports::TextTable table(headers);
  const auto gbps = [](const std::optional<CollectiveBandwidth>& bw, bool bus) {
    return bw ? format_fixed(
                    (bus ? bw->busbw_bytes_per_s : bw->algbw_bytes_per_s) * 1e-9, 2)
              : std::string();
  };
  for (const Row& r : rows) {
    std::vector<std::string> cells{r.name, r.op, unit.cell(r.predicted_s), unit.cell(r.measured_s),
                                   format_fixed(r.error_percent(), 1)};
    if (any_collective)
      cells.insert(cells.end(), {gbps(r.predicted_bw, true), gbps(r.measured_bw, true),
                                 gbps(r.measured_bw, false)});
    table.add_row(cells);
  }
  std::cout << table.render();
  if (any_collective)
    std::cout << "busbw and algbw as nccl-tests reports them (algbw = bytes / time; busbw = "
                 "algbw x 2(n-1)/n for all_reduce, (n-1)/n for all_gather, reduce_scatter, "
                 "all_to_all)\n";
  std::cout << "error % = (predicted - measured) / measured; positive: the simulator is slower\n";
  for (const auto& note : measured->result.notes) std::cout << "note: " << note << "\n";
  return 0;
}

}  // namespace

void add_compare_command(CLI::App& app, CommandAction& selected) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Simulate a scenario and run it on this machine's GPUs: predicted vs measured");
  cmd->add_option("scenario", args->scenario, "scenario file (YAML)")->required();
  cmd->add_flag("--json", args->json, "print the comparison as JSON");
  cmd->add_flag("--no-fuse", args->no_fuse,
                "price and run every matmul unfused (no overlapped all-gather + mm), to compare");
  cmd->add_option(
         "--collectives", args->collectives,
         "collectives on the GPUs: one-sided kernels (one-sided), NCCL (nccl), or NCCL for some "
         "ops only (nccl:NAME,NAME)")
      ->capture_default_str();
  cmd->add_option("--timeout", args->timeout_s, "seconds a GPU wait may wait before it is an error")
      ->capture_default_str()
      ->check(positive_number());
  cmd->add_option("--warmup", args->warmup, "unmeasured runs before the measured one")
      ->capture_default_str()
      ->check(non_negative_number());
  cmd->callback([args, &selected] { selected = [args] { return run_compare(*args); }; });
}

}  // namespace symmesh::cli
