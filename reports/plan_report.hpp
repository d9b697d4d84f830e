#pragma once
// How a Plan is shown: a readable summary (with the candidate table under --explain)
// and the stable JSON of docs/scenario-format.md ("Output of `symmesh plan --json`").
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strategies/cost_model.hpp"
#include "strategies/plan.hpp"

namespace symmesh::reports {

struct PlanReportOptions {
  int devices_per_host = 8;  // what dtensor assumed
  bool explain = false;      // text: the candidate table
  // The cluster the plan was priced for ("dgx-h100, 1 node x 8 GPUs"); empty when none.
  std::string cluster;
  // The cluster has a collectives: section: plain collectives run as NCCL's
  // (core/library_collectives.hpp), and their steps say "nccl".
  bool library_collectives = false;
  // Per candidate, from a model that explains itself (analytic, simulated); empty
  // otherwise. With them the table and the JSON gain comm/compute/memory figures.
  std::vector<strategies::CandidateDetail> details;
  // `--in auto`: the inputs the planner placed, and a line saying how it chose them.
  std::vector<std::string> auto_inputs;
  std::string auto_layouts;
};

std::string plan_summary_text(const strategies::Plan& plan, const PlanReportOptions& options);
nlohmann::json plan_to_json(const strategies::Plan& plan, const PlanReportOptions& options);

// The dtensor forms (no cluster, no details).
std::string plan_summary_text(const strategies::Plan& plan, int devices_per_host, bool explain);
nlohmann::json plan_to_json(const strategies::Plan& plan, int devices_per_host);

}  // namespace symmesh::reports
