// symmesh run: plan every matmul of a scenario, lower the workload to one Program exactly
// as `symmesh simulate` does, and execute it on this machine's GPUs (one rank per GPU) —
// reported per op with simulate's table, JSON keys and trace. --check carries real data
// and compares every mm/bmm with the unsharded CPU product; --dry-run prints the hardware
// plan (communicators, memory, every launch) without a GPU.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "core/errors.hpp"
#include "evaluation/hardware_evaluation.hpp"
#include "evaluation/scenario_evaluation.hpp"
#ifdef SYMMESH_HW_BUILT
#include "hw/toolkit_info.hpp"
#endif
#include "reports/simulation_output.hpp"
#include "scenario/scenario_loader.hpp"
#include "tools/cli/atomic_file.hpp"
#include "tools/cli/command.hpp"

namespace symmesh::cli {

using namespace evaluation;
namespace {

struct RunArgs {
  std::string scenario;
  std::string backend = "nccl";
  bool json = false;
  std::string trace;
  bool check = false;
  bool dry_run = false;
  std::string collectives = "one-sided";
  double timeout_s = 10;
  int warmup = 1;
  bool no_fuse = false;
};

std::string run_text(const HardwareEvaluation& evaluation) {
  std::string text = reports::simulation_report_text(evaluation.report);
  const std::string simulate = "symmesh simulate:";
  if (text.compare(0, simulate.size(), simulate) == 0)
    text.replace(0, simulate.size(), "symmesh run:");
  for (const auto& note : evaluation.result.notes) text += "note: " + note + "\n";
  return text;
}

// A plan over several nodes runs only as one MPI process per rank (hw/bootstrap.hpp): the
// dry run says how to start it, or that this build cannot ("" for one node).
std::string multi_node_note(const Scenario& scenario) {
  const int nodes = scenario.cluster.nodes;
  if (nodes <= 1) return "";
  const std::string ranks = std::to_string(scenario.cluster.num_gpus());
  const std::string spread = ranks + " ranks over " + std::to_string(nodes) + " nodes of " +
                             std::to_string(scenario.cluster.gpus_per_node) + " GPUs";
#ifdef SYMMESH_HW_BUILT
  if (hw::mpi_bootstrap_built())
    return "note: " + spread + ": start it with mpirun -np " + ranks + " (one process per GPU, " +
           std::to_string(scenario.cluster.gpus_per_node) + " per node) symmesh run …\n";
#endif
  return "note: " + spread +
         ", but this symmesh was built without OpenMPI (libopenmpi-dev at configure time): it "
         "runs every rank as a thread of one process on one machine, so it cannot run this plan "
         "unless this machine alone has " +
         ranks + " GPUs\n";
}

int run_run(const RunArgs& args) {
  if (args.backend != "nccl")
    throw InvalidArgument("unknown backend '" + args.backend +
                              "' (symmesh run has one: nccl; symmesh simulate runs the simulator)",
                          "--backend");
  const CollectivesChoice collectives = parse_collectives(args.collectives);
  check_output_path(args.trace, "--trace");
  if (args.dry_run && (args.json || !args.trace.empty() || args.check))
    throw InvalidArgument("--dry-run prints the hardware plan only; drop --json, --trace, --check",
                          "--dry-run");
  const Scenario scenario = load_scenario(args.scenario);
  check_output_path(args.trace, "--trace", files_read_for(scenario));
  HardwareOptions options;
  options.collectives = collectives;
  options.trace = !args.trace.empty();
  options.check = args.check;
  options.timeout_s = args.timeout_s;
  options.warmup_runs = args.warmup;
  options.dry_run = args.dry_run;
  options.fuse = !args.no_fuse;
  const HardwareEvaluation evaluation = evaluate_on_hardware(scenario, options, "symmesh run");
  if (args.dry_run) {
    std::cout << evaluation.plan_text << multi_node_note(scenario);
    return 0;
  }
  if (!evaluation.result.reporting) return 0;
  if (!args.trace.empty()) write_file_atomically(args.trace, evaluation.trace_json, "--trace");
  if (args.json) {
    auto j = reports::simulation_report_json(evaluation.report);
    j["notes"] = evaluation.result.notes;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << run_text(evaluation);
  }
  if (args.check) {
    const auto failures = check_failures(scenario, evaluation);
    for (const auto& f : failures) std::cerr << "symmesh: check failed: " << f << "\n";
    if (!failures.empty()) return 1;
    if (!args.json) std::cout << "check: every matmul matches the CPU reference\n";
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, CommandAction& selected) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Plan a scenario's workload and execute it on this machine's GPUs (one per rank)");
  cmd->add_option("scenario", args->scenario, "scenario file (YAML)")->required();
  cmd->add_option("--backend", args->backend, "hardware backend (nccl)")->capture_default_str();
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->add_flag("--no-fuse", args->no_fuse,
                "price and run every matmul unfused (no overlapped all-gather + mm), to compare");
  cmd->add_option("--trace", args->trace, "write a Chrome/Perfetto trace (JSON) to this file");
  cmd->add_flag("--check", args->check,
                "carry real data and compare every mm/bmm with the CPU reference (small shapes)");
  cmd->add_flag("--dry-run", args->dry_run,
                "print the hardware plan (communicators, memory, launches); needs no GPU");
  cmd->add_option(
         "--collectives", args->collectives,
         "collectives as one-sided kernels (one-sided), NCCL collectives (nccl), or NCCL for some "
         "ops only (nccl:NAME,NAME)")
      ->capture_default_str();
  cmd->add_option("--timeout", args->timeout_s,
                  "seconds a wait_signal or barrier may wait on the GPU before it is an error")
      ->capture_default_str()
      ->check(positive_number());
  cmd->add_option("--warmup", args->warmup, "unmeasured runs before the measured one")
      ->capture_default_str()
      ->check(non_negative_number());
  cmd->callback([args, &selected] { selected = [args] { return run_run(*args); }; });
}

}  // namespace symmesh::cli
