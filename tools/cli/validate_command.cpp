// symmesh validate: load a scenario and check everything short of simulating it — the
// file, the cluster, the mesh, every op's shapes and placements, a plan for every matmul
// and the program the workload lowers to. Every file given is checked, a bad one does not
// stop the others: each gets its line (valid, or its error on stderr), then with several
// files "N of M files valid"; exit 2 when any was bad. Within a file the loader stops at
// its first error (it reads sections that depend on each other: the mesh on the cluster,
// the ops on the mesh), so a file reports one error.
#include <iostream>
#include <memory>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "evaluation/folded_training_step.hpp"
#include "evaluation/memory_estimate.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "scenario/scenario_loader.hpp"
#include "strategies/workload_lowering.hpp"
#include "tools/cli/command.hpp"

namespace symmesh::cli {
namespace {

// "; step priced 8.2416 s": the planned step's closed-form reading
// (strategies/planned_step_price.hpp), what simulate then measures; "" without one.
std::string priced_text(const strategies::PlannedWorkload& planned) {
  if (!planned.price) return "";
  const double s = planned.price->step_us * 1e-6;
  return "; step priced " + (s < 1 ? format_fixed(s * 1e3, 3) + " ms" : format_fixed(s, 4) + " s");
}

void validate_one(const std::string& path) {
  Scenario scenario = load_scenario(path);
  // Planning needs a model. Version 1 plans with dtensor, which needs nothing beyond the
  // mesh (the named model is checked when it runs). Version 2 plans with the scenario's
  // own model, so that the layout — and whether the step fits in memory — is the one
  // simulate finds; "simulated" re-ranks analytic's candidates by simulating, so
  // validate stops at analytic's.
  Scenario planned_as = scenario;
  if (!scenario.is_dataflow())
    planned_as.cost_model = "dtensor";
  else if (planned_as.cost_model == "simulated")
    planned_as.cost_model = "analytic";
  const auto model = evaluation::scenario_cost_model(planned_as, true);
  // The lowering checks every op; into a counting Program it allocates nothing large.
  auto planned = std::make_shared<const strategies::PlannedWorkload>(
      strategies::plan_workload(scenario, *model));
  const int ranks = planned->world_size();
  // Counted as simulate lowers it (beyond the rank-by-rank size, one data-parallel
  // replica's ops).
  const auto workload = strategies::lower_workload(
      scenario, planned, evaluation::lowering_options(scenario, *planned, {}),
      Program::counting(ranks));
  // What simulate refuses for host memory, validate refuses too, with the same words.
  evaluation::check_host_memory(
      scenario, evaluation::estimate_host_memory(workload.program, *planned, false, false), false,
      evaluation::host_memory());
  const size_t ops = workload.ops.size();
  std::cout << path << ": valid — " << ops << " op" << (ops == 1 ? "" : "s")
            << (workload.planned->dataflow && workload.planned->layout
                    ? " (forward" +
                          std::string(scenario.training && scenario.training->backward
                                          ? ", backward and optimizer step"
                                          : "") +
                          "), peak " + format_bytes(workload.planned->layout->memory.peak_bytes()) +
                          " per GPU"
                    : "")
            << " on " << scenario.cluster.num_gpus() << " GPUs, mesh "
            << to_string(DeviceMesh(scenario.mesh_shape, scenario.mesh_names)) << ", cost model "
            << scenario.cost_model << priced_text(*workload.planned)
            << (workload.program.folding().folds()
                    ? "; simulate folds its " +
                          std::to_string(workload.program.folding().replicas) +
                          " data-parallel replicas into one"
                    : "")
            << (scenario.sweep ? ", with a sweep" : "")
            << (scenario.objective ? ", with an objective" : "") << "\n";
}

int run_validate(const std::vector<std::string>& paths) {
  size_t valid = 0;
  for (const auto& path : paths) {
    try {
      validate_one(path);
      ++valid;
    } catch (const Error& e) {
      // Bad input (InvalidArgument, Unsupported) is this file's verdict; anything else
      // (the machine, symmesh itself) stops the command as main() reports it.
      if (!dynamic_cast<const InvalidArgument*>(&e) && !dynamic_cast<const Unsupported*>(&e)) throw;
      const std::string what = e.what();
      std::cerr << "symmesh: error: " << (what.rfind(path, 0) == 0 ? "" : path + ": ") << what
                << "\n";
    }
  }
  if (paths.size() > 1) std::cout << valid << " of " << paths.size() << " files valid\n";
  return valid == paths.size() ? 0 : 2;
}

}  // namespace

void add_validate_command(CLI::App& app, CommandAction& selected) {
  auto paths = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand("validate", "Check scenario files without simulating them");
  cmd->add_option("scenarios", *paths, "scenario files (YAML)")->required();
  cmd->callback([paths, &selected] { selected = [paths] { return run_validate(*paths); }; });
}

}  // namespace symmesh::cli
