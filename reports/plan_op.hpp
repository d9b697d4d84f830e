#pragma once
// What `symmesh plan` computes, without the printing: the plan its arguments ask for and
// what its report shows beside it (the cluster, the inputs the planner placed, the
// candidates' details). The command prints it; the Python module (python/) returns it.
#include "strategies/plan.hpp"
#include "tools/cli/plan_args.hpp"
#include "tools/cli/plan_report.hpp"

namespace symmesh::cli {

struct PlannedOp {
  strategies::Plan plan;
  PlanReportOptions report;  // devices_per_host, cluster, details, auto_inputs…; explain unset
};

// Throws InvalidArgument / Unsupported naming the option at fault, as the command reports.
PlannedOp plan_op(const PlanArgs& args);

}  // namespace symmesh::cli
