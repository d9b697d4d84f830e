// What `symmesh plan` computes, without the printing (plan_op.hpp).
#include "reports/plan_op.hpp"

#include <algorithm>
#include <filesystem>

#include "core/errors.hpp"
#include "core/library_collectives.hpp"
#include "evaluation/backends.hpp"
#include "reports/text_table.hpp"
#include "scenario/scenario_loader.hpp"
#include "strategies/dataflow_graph.hpp"
#include "strategies/layout_search.hpp"

namespace symmesh::reports {
namespace {

// A cluster file as given, else under the shipped scenarios/ (clusters/dgx-h100.yaml), else
// under scenarios/clusters/ (dgx-h100.yaml).
std::string resolve_cluster_path(const std::string& path) {
  namespace fs = std::filesystem;
  if (fs::exists(path) || fs::path(path).is_absolute()) return path;
  for (const fs::path& dir :
       {fs::path(shipped_scenarios_dir()), fs::path(shipped_scenarios_dir()) / "clusters"})
    if (fs::exists(dir / path)) return (dir / path).string();
  return path;
}

std::string cluster_text(const ClusterSpec& c) {
  return (c.name.empty() ? std::string("unnamed") : c.name) + " (" + std::to_string(c.nodes) +
         (c.nodes == 1 ? " node x " : " nodes x ") + std::to_string(c.gpus_per_node) + " GPUs)";
}

}  // namespace

PlannedOp plan_op(const PlanArgs& args) {
  auto problem = problem_from(args);
  strategies::CostModelOptions options;
  options.devices_per_host = args.gpus_per_host;
  options.rerank_count = args.rerank;
  options.fuse = !args.no_fuse;
  PlanReportOptions report;
  const CollectivesChoice collectives =
      args.collectives.empty() ? CollectivesChoice{} : parse_collectives(args.collectives);
  if (!args.cluster.empty()) {
    try {
      options.cluster =
          cluster_for_collectives(load_cluster(resolve_cluster_path(args.cluster)), collectives);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(e.message(), "--cluster " + e.where());
    }
    if (args.gpus_per_host_given && args.gpus_per_host != options.cluster->gpus_per_node)
      throw InvalidArgument("--gpus-per-host " + std::to_string(args.gpus_per_host) +
                                " contradicts the cluster's " +
                                std::to_string(options.cluster->gpus_per_node) +
                                " GPUs per node (leave it out with --cluster)",
                            "--gpus-per-host");
    options.devices_per_host = options.cluster->gpus_per_node;
    report.cluster = cluster_text(*options.cluster);
    report.library_collectives = !options.cluster->collectives.empty();
  }
  const auto selection =
      strategies::parse_placement_selection(args.placement_search, "--placement-search");
  const auto model = evaluation::make_cost_model(args.cost_model, options);
  const std::vector<bool> free = auto_inputs(args);
  const bool choose_layouts = std::find(free.begin(), free.end(), true) != free.end();
  if (selection == strategies::PlacementSelection::priority_queue && choose_layouts)
    throw InvalidArgument(
        "the priority-queue search starts from the inputs' current placements; give them "
        "instead of 'auto' (or use --placement-search full-expansion)",
        "--placement-search");
  strategies::Plan plan;
  if (!choose_layouts) {
    plan = strategies::build_plan(problem, *model, selection);
  } else {
    // The planner places the `auto` inputs: every strategy with them where it wants them
    // (free: they are stored that way), the rest redistributed as needed.
    problem.validate();
    strategies::LayoutSearchOptions search;
    if (options.cluster)
      search.memory_capacity_bytes =
          static_cast<int64_t>(options.cluster->gpu.memory_capacity_bytes);
    const strategies::StepLayout layout = strategies::search_layout(
        strategies::single_op_graph(problem, free), problem.mesh, *model, search);
    const strategies::OpLayout& chosen = *layout.ops.at(0);
    plan = strategies::build_plan_with(chosen.problem, *model, chosen.candidate);
    const auto names = problem.input_names();
    std::string placed;
    for (size_t k = 0; k < free.size(); ++k)
      if (free[k]) {
        report.auto_inputs.push_back(names[k]);
        placed += (placed.empty() ? "" : ", ") + names[k] + " " +
                  to_string(chosen.problem.inputs[k].placements);
      }
    report.auto_layouts = "placed by the planner: " + placed + " (" +
                          std::to_string(layout.stats.layouts_priced) + " layouts priced in " +
                          format_fixed(layout.stats.seconds * 1e3, 2) + " ms)";
  }
  report.devices_per_host = options.devices_per_host;
  if (const auto* explainer = strategies::explainer_of(*model))
    report.details = explainer->details(plan.problem, plan.candidates);
  return {std::move(plan), std::move(report)};
}

}  // namespace symmesh::reports
