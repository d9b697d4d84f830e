// symmesh plan's command-line options (plan_options.hpp).
#include "tools/cli/plan_options.hpp"

#include "core/library_collectives.hpp"

namespace symmesh::cli {

CLI::App* add_plan_subcommand(CLI::App& app, reports::PlanArgs& args) {
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

}  // namespace symmesh::cli
