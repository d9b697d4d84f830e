#pragma once
// A scenario's run report (evaluation/simulation_report.hpp) printed: the table of
// `symmesh simulate` / `run`, and its JSON (the stable keys of docs/scenario-format.md).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/text.hpp"  // format_bytes, which the reports use
#include "evaluation/simulation_report.hpp"

namespace symmesh::reports {

std::string simulation_report_text(const evaluation::SimulationReport& report);
nlohmann::json simulation_report_json(const evaluation::SimulationReport& report);
// The verdict line(s) of an emulated run: "emulation: pass, 4 of 4 matmuls within …".
std::string emulation_text(const evaluation::EmulationVerdict& verdict);
// Every time a report's table shows (for its one time unit, text_table.hpp).
std::vector<double> report_times_s(const evaluation::SimulationReport& report);
// A cluster as JSON: nodes, GPUs, the GPU (memory, peaks per dtype family) and the two
// fabrics with their numbers, in SI units (inter_node is ignored on one node).
nlohmann::json cluster_json(const ClusterSpec& cluster);

}  // namespace symmesh::reports
