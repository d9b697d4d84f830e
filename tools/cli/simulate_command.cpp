// symmesh simulate: plan every matmul of a scenario, run the whole workload on the
// SimGrid-modelled cluster and report per op; or, with --nccl-tests, one collective over a
// range of sizes on a cluster, printed as nccl-tests prints it.
#include <iostream>
#include <memory>

#include "core/errors.hpp"
#include "core/library_collectives.hpp"
#include "evaluation/collective_perf.hpp"
#include "evaluation/folded_training_step.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "reports/layouts_report.hpp"
#include "reports/simulation_output.hpp"
#include "scenario/scenario_loader.hpp"
#include "tools/cli/atomic_file.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/nccl_tests_table.hpp"

namespace symmesh::cli {

using namespace evaluation;
namespace {

struct SimulateArgs {
  std::string scenario;
  bool json = false;
  std::string trace;
  bool emulate = false;
  double time_limit_s = 0;
  bool no_fuse = false;
  bool folded = false;  // --folded: the model's step folded at any size
  bool fold_replicas = false;  // --fold-replicas: the planned step, one dp replica simulated
  std::string collectives;  // empty: the default (core/library_collectives.hpp)
  // --nccl-tests
  std::string nccl_tests;
  std::string cluster;
  int gpus = 0;
  std::string min_bytes = "8";
  std::string max_bytes = "128M";
  int64_t step_factor = 2;
  std::string dtype = "float";
};

int run_nccl_tests(const SimulateArgs& args) {
  if (!args.scenario.empty())
    throw InvalidArgument("give a scenario file or --nccl-tests, not both", "--nccl-tests");
  if (args.cluster.empty())
    throw InvalidArgument("--nccl-tests needs --cluster FILE (a cluster YAML)", "--cluster");
  if (args.emulate || !args.trace.empty() || args.folded || args.fold_replicas)
    throw InvalidArgument("--emulate, --folded, --fold-replicas and --trace are for scenarios, "
                          "not --nccl-tests",
                          "--nccl-tests");
  CollectivePerfRequest request;
  request.op = parse_nccl_tests_collective(args.nccl_tests);
  request.cluster = perf_cluster(load_cluster(args.cluster), args.gpus);
  request.min_bytes = parse_nccl_tests_size(args.min_bytes, "--min-bytes");
  request.max_bytes = parse_nccl_tests_size(args.max_bytes, "--max-bytes");
  request.step_factor = args.step_factor;
  request.dtype = parse_dtype(args.dtype, "--dtype");
  request.wall_clock_limit_s = args.time_limit_s;
  if (!args.collectives.empty()) request.collectives = parse_collectives(args.collectives);
  request.cluster = cluster_for_collectives(request.cluster, request.collectives);
  const CollectivePerf perf = simulate_collective_perf(request);
  if (args.json)
    std::cout << nccl_tests_json(request, perf).dump(2) << "\n";
  else
    std::cout << nccl_tests_text(request, perf);
  return 0;
}

// A model's step folded (evaluation/folded_training_step.hpp): one data-parallel replica and
// one stage's data-parallel rings simulated, reported as `symmesh layouts` reports a layout.
// What the rank-by-rank run alone has is refused, not ignored.
int run_folded(const SimulateArgs& args, const Scenario& scenario) {
  check_folded_request({.emulate = args.emulate,
                        .fuse = !args.no_fuse,
                        .collectives_given = !args.collectives.empty(),
                        .time_limit_s = args.time_limit_s});
  // The trace first: one too large to write is refused before anything is simulated.
  std::string trace;
  if (!args.trace.empty()) {
    std::string why;
    trace = folded_step_trace_json(scenario, why);
    if (trace.empty()) throw InvalidArgument("no trace written: " + why, "--trace");
  }
  const TrainingLayoutsRun run = run_folded_step(scenario);
  if (!args.trace.empty()) write_file_atomically(args.trace, trace, "--trace");
  if (args.json)
    std::cout << reports::layouts_json(scenario, run).dump(2) << "\n";
  else
    reports::print_layouts(std::cout, scenario, run, "symmesh simulate (folded)");
  return 0;
}

int run_simulate(const SimulateArgs& args) {
  if (!args.nccl_tests.empty()) return run_nccl_tests(args);
  if (args.scenario.empty())
    throw InvalidArgument("give a scenario file (or --nccl-tests OP --cluster FILE)", "simulate");
  if (!args.cluster.empty() || args.gpus)
    throw InvalidArgument(
        "--cluster and --gpus go with --nccl-tests (a scenario names its cluster)", "--cluster");
  Scenario scenario = load_scenario(args.scenario);
  check_output_path(args.trace, "--trace", files_read_for(scenario));
  if (simulates_closed_form_step(scenario, args.folded, args.fold_replicas, args.emulate))
    return run_folded(args, scenario);
  EvaluationOptions options;
  options.fold_replicas = args.fold_replicas;  // beyond 256 GPUs a model's step folds anyway
  options.emulate = args.emulate;
  options.wall_clock_limit_s = args.time_limit_s;
  options.fuse = !args.no_fuse;
  if (!args.collectives.empty()) options.collectives = parse_collectives(args.collectives);
  scenario.cluster = cluster_for_collectives(scenario.cluster, options.collectives);
  options.record_timeline = !args.trace.empty();
  const Evaluation evaluation = evaluate_scenario(scenario, options);
  if (!args.trace.empty()) write_file_atomically(args.trace, evaluation.trace_json, "--trace");
  if (args.json)
    std::cout << reports::simulation_report_json(evaluation.report).dump(2) << "\n";
  else
    std::cout << reports::simulation_report_text(evaluation.report);
  // An emulated result beyond its error bound is a failed run (exit 1), not bad input.
  const auto verdict = emulation_verdict(evaluation.report);
  return verdict && !verdict->passed() ? 1 : 0;
}

}  // namespace

void add_simulate_command(CLI::App& app, CommandAction& selected) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "simulate", "Plan a scenario's workload and run it on the simulated cluster");
  cmd->add_option("scenario", args->scenario, "scenario file (YAML)");
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->add_option("--trace", args->trace, "write a Chrome/Perfetto trace (JSON) to this file");
  cmd->add_flag("--emulate", args->emulate,
                "carry real data: compute every mm/bmm sharded, compare with the unsharded "
                "product against an error bound; exit 1 when one is beyond it");
  cmd->add_flag("--no-fuse", args->no_fuse,
                "price and run every matmul unfused (no overlapped all-gather + mm), to compare");
  cmd->add_flag("--folded", args->folded,
                "a model's step folded at any size: one data-parallel replica and one stage's "
                "data-parallel rings simulated (the default beyond 256 GPUs)");
  cmd->add_flag("--fold-replicas", args->fold_replicas,
                "the planned step with its data-parallel replicas folded into one: replica 0 "
                "simulated op by op, the others read off it by symmetry (any size)");
  cmd->add_option("--collectives", args->collectives, kCollectivesHelp);
  cmd->add_option("--time-limit", args->time_limit_s,
                  "wall-clock limit for the simulation, in seconds (0: none)")
      ->check(non_negative_number());
  cmd->add_option("--nccl-tests", args->nccl_tests,
                  "instead of a scenario: simulate one collective (all_reduce, all_gather, "
                  "reduce_scatter, alltoall) over a range of sizes and print nccl-tests' table");
  cmd->add_option("--cluster", args->cluster, "--nccl-tests: the cluster file (YAML)");
  cmd->add_option("--gpus", args->gpus,
                  "--nccl-tests: GPUs in the collective (whole nodes, or part of one; default: "
                  "the cluster file's)")
      ->check(positive_number());
  cmd->add_option("-b,--min-bytes", args->min_bytes,
                  "--nccl-tests: smallest size (nccl-tests' -b: 8, 1K, 128M, 8G)")
      ->capture_default_str();
  cmd->add_option("-e,--max-bytes", args->max_bytes, "--nccl-tests: largest size (-e)")
      ->capture_default_str();
  cmd->add_option("-f,--step-factor", args->step_factor,
                  "--nccl-tests: each size is the last times this (-f)")
      ->capture_default_str();
  cmd->add_option("-d,--dtype", args->dtype,
                  "--nccl-tests: element type (-d: float, half, "
                  "bfloat16, double, …)")
      ->capture_default_str();
  cmd->callback([args, &selected] { selected = [args] { return run_simulate(*args); }; });
}

}  // namespace symmesh::cli
