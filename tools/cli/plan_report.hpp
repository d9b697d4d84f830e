#pragma once
// How a Plan is shown: a readable summary (with the candidate table under --explain)
// and the stable JSON of shared/reference/scenario-format.md ("Output of symmesh plan").
#include <nlohmann/json.hpp>
#include <string>

#include "strategies/plan.hpp"

namespace symmesh::cli {

std::string plan_summary_text(const strategies::Plan& plan, int devices_per_host, bool explain);
nlohmann::json plan_to_json(const strategies::Plan& plan, int devices_per_host);

}  // namespace symmesh::cli
