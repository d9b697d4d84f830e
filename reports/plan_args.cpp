#include "tools/cli/plan_args.hpp"
#include "core/library_collectives.hpp"

#include "core/dtype.hpp"
#include "core/errors.hpp"

namespace symmesh::cli {

CLI::App* add_plan_subcommand(CLI::App& app, PlanArgs& args) {
  CLI::App* cmd = app.add_subcommand("plan", "Choose how one matmul is sharded over a device mesh");
  cmd->add_option("--op", args.op, "mm, bmm, addmm, baddbmm or linear")->required();
  cmd->add_option("--a", args.a, "shape of a, e.g. 64x32 (bmm: 8x64x32)")->required();
  cmd->add_option("--b", args.b, "shape of b, e.g. 32x64 (linear: the weight [n, k])")->required();
  cmd->add_option("--bias", args.bias,
                  "shape of the bias (addmm, baddbmm; optional for linear), e.g. 64");
  cmd->add_option("--mesh", args.mesh, "mesh shape, e.g. 2x2x2")->required();
  cmd->add_option("--in", args.in,
                  "current placements of a and b, e.g. 'S(0),R' 'R,R'; 'auto': the planner "
                  "chooses that input's layout (e.g. a weight)")
      ->required()
      ->expected(2);
  cmd->add_option("--bias-in", args.bias_in, "current placements of the bias, e.g. R,R");
  cmd->add_option("--out-in", args.out_in,
                  "where the output must end up, e.g. 'S(0)' (priced and run; default: "
                  "wherever the strategy leaves it)");
  cmd->add_option("--dtype", args.dtype, "element type (bf16, fp16, fp32, fp64, fp8_e4m3, ...)")
      ->capture_default_str();
  cmd->add_option("--gpus-per-host", args.gpus_per_host,
                  "devices per host (dtensor); decides which mesh dims are "
                  "inter-host; taken from --cluster when given")
      ->capture_default_str();
  cmd->add_option("--cost-model", args.cost_model, "dtensor, analytic or simulated")
      ->capture_default_str();
  cmd->add_option("--collectives", args.collectives, kCollectivesHelp);
  cmd->add_option("--cluster", args.cluster,
                  "cluster YAML the mesh runs on (needed by analytic and simulated), e.g. "
                  "clusters/dgx-h100.yaml");
  cmd->add_option("--rerank", args.rerank,
                  "simulated: how many of analytic's cheapest candidates to simulate")
      ->capture_default_str();
  cmd->add_option("--placement-search", args.placement_search,
                  "dtensor: full-expansion (PyTorch before PR 177799: every rule combination "
                  "priced) or priority-queue (PR 177799: a cheapest-first search of the "
                  "input placements)")
      ->capture_default_str();
  cmd->add_flag("--json", args.json, "print the plan as JSON");
  cmd->add_flag("--explain", args.explain, "also print every candidate with its cost");
  cmd->add_flag("--no-fuse", args.no_fuse,
                "analytic, simulated: never run a matmul as an overlapped all-gather + mm");
  return cmd;
}

namespace {

bool is_auto(const std::string& text) {
  return text == "auto";
}

// `text` as placements, or all-Replicate for `auto` (the planner places that input).
Placements placements_or_auto(const std::string& text, int ndim, const std::string& where) {
  if (is_auto(text)) return Placements(ndim, Placement::replicate());
  return parse_placements(text, where);
}

}  // namespace

std::vector<bool> auto_inputs(const PlanArgs& args) {
  const MatmulSignature& sig = matmul_signature(strategies::parse_matmul_op(args.op, "--op"));
  const bool with_bias = !args.bias.empty();
  std::vector<bool> out(with_bias ? 3 : 2, false);
  out[sig.lhs_index(with_bias)] = args.in.size() > 0 && is_auto(args.in[0]);
  out[sig.lhs_index(with_bias) + 1] = args.in.size() > 1 && is_auto(args.in[1]);
  if (with_bias) out[sig.bias_index(true)] = is_auto(args.bias_in);
  return out;
}

strategies::OpProblem problem_from(const PlanArgs& args) {
  strategies::OpProblem problem;
  problem.op = strategies::parse_matmul_op(args.op, "--op");
  problem.mesh = parse_mesh(args.mesh, "--mesh");
  const DType dtype = parse_dtype(args.dtype, "--dtype");
  if (args.in.size() != 2)
    throw InvalidArgument("give two placement lists, for a and b (e.g. --in 'S(0),R' 'R,R')",
                          "--in");
  const MatmulSignature& sig = matmul_signature(problem.op);
  const int ndim = problem.mesh.ndim();
  TensorSpec a{parse_shape(args.a, "--a"), dtype, placements_or_auto(args.in[0], ndim, "--in (a)")};
  TensorSpec b{parse_shape(args.b, "--b"), dtype, placements_or_auto(args.in[1], ndim, "--in (b)")};
  if (sig.bias == BiasUse::none && (!args.bias.empty() || !args.bias_in.empty()))
    throw InvalidArgument(args.op + " takes no bias (use addmm, baddbmm or linear)",
                          args.bias.empty() ? "--bias-in" : "--bias");
  if (sig.bias == BiasUse::required && args.bias.empty())
    throw InvalidArgument(args.op + " needs --bias SHAPE", "--bias");
  if (!args.bias.empty() && args.bias_in.empty())
    throw InvalidArgument(args.op + " needs --bias-in PLACEMENTS", "--bias-in");
  if (args.bias.empty() && !args.bias_in.empty())
    throw InvalidArgument("--bias-in without --bias SHAPE", "--bias-in");
  std::optional<TensorSpec> bias;
  if (!args.bias.empty())
    bias = TensorSpec{parse_shape(args.bias, "--bias"), dtype,
                      placements_or_auto(args.bias_in, ndim, "--bias-in")};
  problem.inputs = sig.inputs_in_order(std::move(a), std::move(b), std::move(bias));
  if (!args.out_in.empty()) problem.output_target = parse_placements(args.out_in, "--out-in");
  return problem;
}

}  // namespace symmesh::cli
