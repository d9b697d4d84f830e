#pragma once
// One scenario on the hardware backend, for `symmesh run` and `symmesh compare`: the same
// planning and lowering as `symmesh simulate` (one Program), then run by the "nccl" backend
// (evaluation/backends.hpp: the hardware module, loaded only here) and reported in the
// simulator's shape — a RunResult and a SimulationReport with backend "nccl" — so reports,
// JSON and traces read alike.
//
// Everything before the backend runs needs no GPU and is tested without one: argument
// checks, loading, planning, lowering, and the dry run's hardware plan. Without the module,
// or without a visible GPU, symmesh::Unavailable says which (exit code 1).
#include <memory>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/run_result.hpp"
#include "core/scenario.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "evaluation/simulation_report.hpp"

namespace symmesh::evaluation {

struct HardwareOptions {
  CollectivesChoice collectives;  // --collectives one-sided | nccl | nccl:OP,OP
  bool check = false;             // carry data; every matmul compared with the CPU reference
  double timeout_s = 10;          // per wait_signal / barrier on the GPU
  int warmup_runs = 1;            // forced to 0 with check (collectives work in place)
  bool dry_run = false;           // the hardware plan only
  bool trace = false;             // keep the timeline for a trace
  bool fuse = true;               // false: `--no-fuse`
};

struct HardwareEvaluation {
  std::unique_ptr<PreparedScenario> prepared;  // the scenario planned and lowered
  std::string plan_text;                       // the hardware plan (a dry run)
  RunResult result;                            // empty on a dry run
  SimulationReport report;
  std::string trace_json;  // the measured timeline as a Chrome trace, when asked
};

// The NAMEs of nccl:NAME,NAME must be ops of the scenario (a misspelt one would silently
// leave that op one-sided); throws InvalidArgument naming --collectives and listing them.
// `ops`: what runs (a version-2 step's derived ops included); the file's ops by default.
void check_native_op_names(const CollectivesChoice& choice, const Scenario& scenario,
                           const std::vector<WorkloadOp>& ops);
void check_native_op_names(const CollectivesChoice& choice, const Scenario& scenario);

// Throws InvalidArgument / Unsupported for bad input (exit 2), Unavailable when it cannot
// run here (exit 1), Timeout / BackendError for failures on the GPUs.
HardwareEvaluation evaluate_on_hardware(const Scenario& scenario, const HardwareOptions& options,
                                        const std::string& command);

// The largest |error| accepted by --check for a matmul of `dtype` with inner size k
// (inputs uniform in [-1, 1], reference from the same rounded inputs in double).
double check_tolerance(DType dtype, int64_t k);

// The ops whose max_abs_error exceeds their tolerance, as "name: error > tolerance" lines.
std::vector<std::string> check_failures(const Scenario& scenario,
                                        const HardwareEvaluation& evaluation);

}  // namespace symmesh::evaluation
