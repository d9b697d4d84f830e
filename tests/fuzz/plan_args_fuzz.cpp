// Fuzz target: symmesh plan's arguments, one per line of the input (after the word
// "plan"). CLI11 reports bad command lines as CLI::ParseError; the op problem they name
// throws InvalidArgument or Unsupported, which the command reports as bad input (exit 2).
// A problem on a small mesh (at most 2 dims and 16 ranks, so one input stays fast) is also
// planned with the dtensor cost model and reported as text and JSON, as the command does.
#include <optional>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "reports/plan_args.hpp"
#include "reports/plan_report.hpp"
#include "strategies/plan.hpp"
#include "tests/fuzz/fuzz_targets.hpp"
#include "tools/cli/plan_options.hpp"

namespace symmesh::fuzz {
namespace {

// CLI11 takes the arguments last first.
std::vector<std::string> reversed_arguments(std::string_view data) {
  std::vector<std::string> args{"plan"};
  size_t start = 0;
  while (start < data.size()) {
    size_t end = data.find('\n', start);
    if (end == std::string_view::npos) end = data.size();
    args.emplace_back(data.substr(start, end - start));
    start = end + 1;
  }
  return {args.rbegin(), args.rend()};
}

}  // namespace

void plan_args(std::string_view data) {
  CLI::App app{"symmesh plan arguments (fuzz target)", "symmesh"};
  reports::PlanArgs args;
  CLI::App* plan = cli::add_plan_subcommand(app, args);
  app.require_subcommand(1);
  std::vector<std::string> argv = reversed_arguments(data);
  try {
    app.parse(argv);
  } catch (const CLI::ParseError&) {
    return;
  }
  args.gpus_per_host_given = plan->get_option("--gpus-per-host")->count() > 0;

  const auto problem = answered<InvalidArgument, Unsupported>([&] {
    strategies::OpProblem p = reports::problem_from(args);
    p.validate();
    return p;
  });
  if (!problem || args.cost_model != "dtensor" || !args.cluster.empty()) return;
  if (problem->mesh.ndim() > 2 || problem->mesh.size() > 16) return;

  strategies::CostModelOptions options;
  options.devices_per_host = args.gpus_per_host;
  options.rerank_count = args.rerank;
  const auto built = answered<InvalidArgument, Unsupported>([&] {
    const auto model = strategies::make_cost_model(args.cost_model, options);
    return strategies::build_plan(*problem, *model);
  });
  if (!built) return;
  require(built->chosen >= 0 && built->chosen < static_cast<int>(built->candidates.size()),
          "the chosen candidate is not one of the candidates");
  require(static_cast<int>(built->local_compute.size()) == problem->mesh.size(),
          "not one local matmul per rank");
  reports::PlanReportOptions report;
  report.devices_per_host = options.devices_per_host;
  report.explain = args.explain;
  (void)reports::plan_summary_text(*built, report);
  (void)reports::plan_to_json(*built, report).dump(2);
}

}  // namespace symmesh::fuzz
