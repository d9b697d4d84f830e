#pragma once
// One scenario on the hardware backend, for `symmesh run` and `symmesh compare`: the same
// lowering as `symmesh simulate` (strategies::lower_workload, one Program), planned for the
// GPUs (hw/execution_plan.hpp), executed (hw/program_executor.hpp) and reported in the
// simulator's shape — a sim::RunResult and a SimulationReport with backend "nccl" — so
// reports, JSON and traces read alike.
//
// Everything before the first GPU call runs without one and is tested without one:
// argument checks, loading, lowering, the hardware plan. Without hw/ built, or without a
// visible GPU, HardwareUnavailable says which (exit code 1).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/run_result.hpp"
#include "core/scenario.hpp"
#include "evaluation/scenario_evaluation.hpp"
#include "evaluation/simulation_report.hpp"
#include "strategies/workload_lowering.hpp"

namespace symmesh::evaluation {

// The hardware cannot run it here: hw/ not built, no GPU, too few GPUs. Exit code 1.
class HardwareUnavailable : public Error {
 public:
  using Error::Error;
};

struct HardwareOptions {
  std::string collectives = "one-sided";  // one-sided | nccl | nccl:OP,OP (those ops only)
  bool check = false;     // carry data; every mm/bmm compared with the CPU reference
  double timeout_s = 10;  // per wait_signal / barrier on the GPU
  int warmup_runs = 1;    // forced to 0 with check (collectives work in place)
  bool dry_run = false;   // plan only: no GPU needed
  bool fuse = true;       // false: `--no-fuse`
};

struct HardwareEvaluation {
  std::unique_ptr<PreparedScenario> prepared;  // the scenario planned and lowered
  std::string plan_text;                       // the hardware plan (hw::describe), always filled
  RunResult result;                            // empty on a dry run
  SimulationReport report;
  std::string trace_json;          // the measured timeline as a Chrome trace
  std::vector<std::string> notes;  // how it ran
  bool reporting = true;           // false on MPI processes other than rank 0's
};

// Checks --collectives (one-sided | nccl | nccl:NAME,NAME) without the hardware backend;
// throws InvalidArgument naming --collectives.
void check_collectives_option(const std::string& text);
// The NAMEs of nccl:NAME,NAME must be ops of the scenario (a misspelt one would silently
// leave that op one-sided); throws InvalidArgument naming --collectives and listing them.
void check_native_op_names(const std::string& text, const Scenario& scenario);

// A line describing the hardware backend, or why it was not built (for --version).
std::string hardware_description();

// Throws InvalidArgument / Unsupported for bad input (exit 2), HardwareUnavailable when it
// cannot run here (exit 1), Timeout / BackendError for failures on the GPUs.
HardwareEvaluation evaluate_on_hardware(const Scenario& scenario, const HardwareOptions& options,
                                        const std::string& command);

// The largest |error| accepted by --check for a matmul of `dtype` with inner size k
// (inputs uniform in [-1, 1], reference from the same rounded inputs in double).
double check_tolerance(DType dtype, int64_t k);

// The ops whose max_abs_error exceeds their tolerance, as "name: error > tolerance" lines.
std::vector<std::string> check_failures(const Scenario& scenario,
                                        const HardwareEvaluation& evaluation);

}  // namespace symmesh::evaluation
