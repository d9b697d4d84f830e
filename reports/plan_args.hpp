#pragma once
// symmesh plan's arguments (tools/cli/plan_options.hpp declares them as options; the Python
// module's plan() passes them as keywords) and the op problem they describe. Pure parsing
// and validation (no cluster file is read, nothing is planned), so that the tests and the
// plan-arguments fuzz target (tests/fuzz) drive exactly what the command parses.
#include <string>
#include <vector>

#include "strategies/op_problem.hpp"

namespace symmesh::reports {

struct PlanArgs {
  std::string op;
  std::string a;
  std::string b;
  std::string bias;
  std::string mesh;
  std::vector<std::string> in;
  std::string bias_in;
  std::string out_in;  // where the output must end up; empty: anywhere
  std::string dtype = "fp32";
  int gpus_per_host = 8;
  bool gpus_per_host_given = false;
  std::string cluster;  // a cluster file; required by analytic and simulated
  int rerank = 4;
  std::string cost_model = "dtensor";
  bool json = false;
  bool explain = false;
  bool no_fuse = false;  // price every candidate unfused only
  // full-expansion or priority-queue (strategies::PlacementSelection).
  std::string placement_search = "full-expansion";
  std::string collectives;  // --collectives; empty: the default
};

// The op, mesh, shapes, dtype and placements the arguments name. An input given as `auto`
// (--in auto 'R,S(1)', --bias-in auto) is Replicate here and listed by auto_inputs: its
// layout is the planner's to choose. Throws InvalidArgument (or Unsupported, for a
// placement symmesh does not handle) naming the option.
strategies::OpProblem problem_from(const PlanArgs& args);

// Per input of problem_from's problem (ATen order): whether it was given as `auto`.
std::vector<bool> auto_inputs(const PlanArgs& args);

}  // namespace symmesh::reports
