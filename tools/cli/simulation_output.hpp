#pragma once
// A scenario's run report (evaluation/simulation_report.hpp) printed: the table of
// `symmesh simulate` / `run`, and its JSON (the stable keys of docs/scenario-format.md).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/text.hpp"  // format_bytes, which the reports use
#include "evaluation/simulation_report.hpp"

namespace symmesh::cli {

std::string simulation_report_text(const evaluation::SimulationReport& report);
nlohmann::json simulation_report_json(const evaluation::SimulationReport& report);

}  // namespace symmesh::cli
