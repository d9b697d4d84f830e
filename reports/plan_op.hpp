#pragma once
// What `symmesh plan` computes, without the printing: the plan its arguments ask for and
// what its report shows beside it (the cluster, the inputs the planner placed, the
// candidates' details). The command prints it; the Python module (python/) returns it.
#include "reports/plan_args.hpp"
#include "reports/plan_report.hpp"
#include "strategies/plan.hpp"

namespace symmesh::reports {

struct PlannedOp {
  strategies::Plan plan;
  PlanReportOptions report;  // devices_per_host, cluster, details, auto_inputs…; explain unset
};

// Throws InvalidArgument / Unsupported naming the option at fault, as the command reports.
PlannedOp plan_op(const PlanArgs& args);

}  // namespace symmesh::reports
