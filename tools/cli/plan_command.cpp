// symmesh plan: choose the sharding of one mm/bmm/addmm/baddbmm on a mesh and show why.
#include <filesystem>
#include <iostream>
#include <memory>

#include "core/errors.hpp"
#include "sim/cost_models.hpp"
#include "strategies/plan.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/plan_report.hpp"
#include "tools/scenario/scenario_loader.hpp"

namespace symmesh::cli {
namespace {

struct PlanArgs {
  std::string op;
  std::string a;
  std::string b;
  std::string bias;
  std::string mesh;
  std::vector<std::string> in;
  std::string bias_in;
  std::string dtype = "fp32";
  int gpus_per_host = 8;
  bool gpus_per_host_given = false;
  std::string cluster;  // a cluster file; required by analytic and simulated
  int rerank = 4;
  std::string cost_model = "dtensor";
  bool json = false;
  bool explain = false;
};

strategies::OpProblem problem_from(const PlanArgs& args) {
  strategies::OpProblem problem;
  problem.op = strategies::parse_op(args.op, "--op");
  problem.mesh = parse_mesh(args.mesh, "--mesh");
  const DType dtype = parse_dtype(args.dtype, "--dtype");
  if (args.in.size() != 2)
    throw InvalidArgument("give two placement lists, for a and b (e.g. --in 'S(0),R' 'R,R')",
                          "--in");
  if (strategies::has_bias(problem.op)) {
    if (args.bias.empty()) throw InvalidArgument(args.op + " needs --bias SHAPE", "--bias");
    if (args.bias_in.empty())
      throw InvalidArgument(args.op + " needs --bias-in PLACEMENTS", "--bias-in");
    problem.inputs.push_back(
        {parse_shape(args.bias, "--bias"), dtype, parse_placements(args.bias_in, "--bias-in")});
  } else if (!args.bias.empty() || !args.bias_in.empty()) {
    throw InvalidArgument(args.op + " takes no bias (use addmm or baddbmm)", "--bias");
  }
  problem.inputs.push_back(
      {parse_shape(args.a, "--a"), dtype, parse_placements(args.in[0], "--in (a)")});
  problem.inputs.push_back(
      {parse_shape(args.b, "--b"), dtype, parse_placements(args.in[1], "--in (b)")});
  return problem;
}

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

int run_plan(const PlanArgs& args) {
  const auto problem = problem_from(args);
  strategies::CostModelOptions options;
  options.devices_per_host = args.gpus_per_host;
  options.rerank_count = args.rerank;
  PlanReportOptions report;
  if (!args.cluster.empty()) {
    try {
      options.cluster = load_cluster(resolve_cluster_path(args.cluster));
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
  }
  const auto model = sim::make_any_cost_model(args.cost_model, options);
  const auto plan = strategies::build_plan(problem, *model);
  report.devices_per_host = options.devices_per_host;
  report.explain = args.explain;
  if (const auto* explainer = strategies::explainer_of(*model))
    report.details = explainer->details(plan.problem, plan.candidates);
  if (args.json)
    std::cout << plan_to_json(plan, report).dump(2) << "\n";
  else
    std::cout << plan_summary_text(plan, report);
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app, CommandAction& selected) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand("plan", "Choose how one matmul is sharded over a device mesh");
  cmd->add_option("--op", args->op, "mm, bmm, addmm or baddbmm")->required();
  cmd->add_option("--a", args->a, "shape of a, e.g. 64x32 (bmm: 8x64x32)")->required();
  cmd->add_option("--b", args->b, "shape of b, e.g. 32x64")->required();
  cmd->add_option("--bias", args->bias, "shape of the bias (addmm/baddbmm), e.g. 64");
  cmd->add_option("--mesh", args->mesh, "mesh shape, e.g. 2x2x2")->required();
  cmd->add_option("--in", args->in, "current placements of a and b, e.g. 'S(0),R' 'R,R'")
      ->required()
      ->expected(2);
  cmd->add_option("--bias-in", args->bias_in, "current placements of the bias, e.g. R,R");
  cmd->add_option("--dtype", args->dtype, "element type (bf16, fp16, fp32, fp64, fp8_e4m3, ...)")
      ->capture_default_str();
  auto* gpus_per_host = cmd->add_option("--gpus-per-host", args->gpus_per_host,
                                        "devices per host (dtensor); decides which mesh dims are "
                                        "inter-host; taken from --cluster when given")
                            ->capture_default_str();
  cmd->add_option("--cost-model", args->cost_model, "dtensor, analytic or simulated")
      ->capture_default_str();
  cmd->add_option("--cluster", args->cluster,
                  "cluster YAML the mesh runs on (needed by analytic and simulated), e.g. "
                  "clusters/dgx-h100.yaml");
  cmd->add_option("--rerank", args->rerank,
                  "simulated: how many of analytic's cheapest candidates to simulate")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "print the plan as JSON");
  cmd->add_flag("--explain", args->explain, "also print every candidate with its cost");
  cmd->callback([args, gpus_per_host, &selected] {
    args->gpus_per_host_given = gpus_per_host->count() > 0;
    selected = [args] { return run_plan(*args); };
  });
}

}  // namespace symmesh::cli
