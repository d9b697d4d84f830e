#pragma once
// One scenario evaluated end to end on the simulator: cost model chosen by name, every
// matmul planned, the workload lowered to one Program, simulated in its own process, and
// reported per op. `symmesh simulate` runs it once; `symmesh sweep` once per point.
#include <memory>
#include <optional>
#include <string>

#include "core/backend.hpp"
#include "core/run_result.hpp"
#include "core/scenario.hpp"
#include "evaluation/host_memory.hpp"
#include "evaluation/memory_estimate.hpp"
#include "evaluation/simulation_report.hpp"
#include "strategies/workload_lowering.hpp"

namespace symmesh::evaluation {

struct EvaluationOptions {
  bool emulate = false;
  double wall_clock_limit_s = 0;  // per simulation; 0 = none
  // The timeline of every op, only when asked (a trace): otherwise the report comes from
  // the per-op spans the simulation process summarises, and no timeline is recorded or
  // crosses back (at 1,024 GPUs it is gigabytes and a third of the CPU time).
  bool record_timeline = false;
  bool fuse = true;  // false: `--no-fuse`, every matmul runs unfused
  // `--collectives`: which plain collectives run as NCCL's (core/library_collectives.hpp).
  CollectivesChoice collectives;
  // Fold the step's data-parallel replicas into the first (core/replica_folding.hpp): the
  // Program holds one replica's ops and the simulator reads the others off it by symmetry.
  // Only what the mesh's dp dim (of more than one) replicates is folded; not with emulation.
  // A model's step beyond kMaxRankByRankModelGpus (evaluation/folded_training_step.hpp) is
  // folded whatever this says.
  bool fold_replicas = false;
  // What the host memory guard compares with (evaluation/host_memory.hpp): unset, this
  // machine's MemAvailable when the scenario is prepared; set, that figure (the sweep reads
  // it once; tests inject one). An unset figure that cannot be read guards nothing.
  std::optional<HostMemory> host_memory;
};

// How `scenario`'s planned step is lowered for these options: emulated or not, and with
// its data-parallel replicas folded when asked or beyond the rank-by-rank size
// (folds_replicas, evaluation/folded_training_step.hpp). Simulate, sweep and validate lower
// through it, so that they count and run the same Program.
strategies::WorkloadOptions lowering_options(const Scenario& scenario,
                                             const strategies::PlannedWorkload& planned,
                                             const EvaluationOptions& options);

struct Evaluation {
  SimulationReport report;
  RunResult result;
  std::string trace_json;  // the Chrome trace, when the timeline was recorded
};

// The scenario's cost model, as simulate, sweep, run and compare all choose it (so that
// they run the same plan). Throws Unsupported naming the scenario's cost_model.
std::unique_ptr<strategies::CostModel> scenario_cost_model(const Scenario& scenario, bool fuse);

// A scenario planned and sized, not lowered yet: every matmul planned once with its cost
// model, and the whole lowering run into a counting Program (core/program.hpp), which
// checks everything the real lowering will and counts it, so the host-memory estimate is
// known before anything large is allocated.
struct SizedScenario {
  Scenario scenario;
  std::shared_ptr<const strategies::PlannedWorkload> planned;
  Program counted{1};
  HostMemoryEstimate estimate;
};

// Plans and counts. Throws symmesh errors; cost-model and workload errors name the
// scenario file and the op.
std::unique_ptr<SizedScenario> size_scenario(const Scenario& scenario,
                                             const EvaluationOptions& options);
// The host memory `scenario` needs to simulate (and emulate, with options.emulate).
HostMemoryEstimate estimate_scenario_memory(const Scenario& scenario,
                                            const EvaluationOptions& options);

// A scenario planned and lowered, ready to simulate. Heap-held by its users: the lowered
// ops point into `scenario`, and a running simulation into `workload.program`.
struct PreparedScenario {
  Scenario scenario;
  strategies::LoweredWorkload workload;
  RunRequest request;  // carry_data: emulated, so the report checks the numerics
};

// Lowers a sized scenario into a Program reserved from its count (the plans are reused).
std::unique_ptr<PreparedScenario> lower_sized(std::unique_ptr<SizedScenario> sized,
                                              const EvaluationOptions& options);

// size_scenario, the host-memory guard, lower_sized: a scenario that needs more host memory
// than is available is refused before it is lowered (InvalidArgument naming the file and
// both figures).
std::unique_ptr<PreparedScenario> prepare_scenario(const Scenario& scenario,
                                                   const EvaluationOptions& options);
// The report of a prepared scenario's simulated run.
Evaluation report_evaluation(const PreparedScenario& prepared, RunResult result);

// prepare_scenario, one simulation in its own process, report_evaluation.
Evaluation evaluate_scenario(const Scenario& scenario, const EvaluationOptions& options);

}  // namespace symmesh::evaluation
