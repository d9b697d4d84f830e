#pragma once
// A model scenario's training step at its own mesh, folded. Rank by rank, a step is written
// out for every GPU: Llama 3.1 405B on 16,384 GPUs holds about 970 M stream ops and would
// need about 105 GB of host memory. Its dp replicas are identical copies of one another,
// and two programs fold them:
//
//   the planned step    what `symmesh simulate` and `validate` run for a model: scenario on
//                       more GPUs than kMaxRankByRankModelGpus (or any with
//                       `--fold-replicas`): the planner's step lowered with replica 0's ops
//                       only (core/replica_folding.hpp, EvaluationOptions::fold_replicas).
//   the closed form's   `simulate --folded` (run_folded_step below): one replica of the
//                       closed form's layer, simulated op by op (pp·tp ranks: every
//                       micro-batch's forward and backward on every stage, the
//                       tensor-parallel collectives, the sends between stages, the
//                       optimizer step), and the data-parallel rings of one stage side by
//                       side on their own nodes (tp·dp ranks);
//                       evaluation/simulated_training_step.hpp says how the two compose.
//
// The layout is the one the scenario declares, nothing searched: tp, pp and dp from the
// mesh's dims of those names, model.micro_batch (or global_batch / dp), model.recompute,
// training.zero and training.virtual_stages (each 1, none or 0 when not given). The step is
// global_batch sequences (dp · micro_batch when the model gives no global_batch).
#include <string>

#include "core/scenario.hpp"
#include "evaluation/training_layouts.hpp"
#include "strategies/training_step_estimate.hpp"

namespace symmesh::evaluation {

// The most GPUs a model scenario's step is simulated rank by rank on: the 8B step costs
// 26 s and 1.0 GB of host memory to simulate on 256 GPUs rank by rank, 200 s and 10.9 GB on
// 1,024 (CPU ∝ GPUs^1.5, memory ∝ GPUs^1.8 past 256). Beyond, the step is folded.
inline constexpr int kMaxRankByRankModelGpus = 256;

// Whether `simulate` and `validate` fold this scenario's step by default: a model: scenario
// whose mesh holds more than kMaxRankByRankModelGpus GPUs. Its planned step is then lowered
// with the data-parallel replicas folded into one (core/replica_folding.hpp); `--folded`
// simulates the closed form's step instead (run_folded_step).
bool simulated_folded(const Scenario& scenario);

// The layout the scenario declares (above). Throws InvalidArgument, at the scenario's path
// and the key, for what the folded step cannot express: a scenario without a model, a
// forward-only step (no training:, or training.backward false), an optimizer other than
// Adam, and what check_training_layout refuses (ZeRO-2/3 with pp, tp across nodes, …).
strategies::TrainingLayout declared_training_layout(const Scenario& scenario);

// The scenario with model.global_batch set (dp · micro_batch when it gave none): the step
// the folded simulation prices.
Scenario folded_step_scenario(const Scenario& scenario);

// The declared layout priced and simulated (`simulate --folded`) as `symmesh layouts`
// reports one layout (reports/layouts_report.hpp). Throws InvalidArgument (exit 2) as
// declared_training_layout does; when the step does not fit in the GPU's memory (naming
// what it needs, by kind); and when its replica holds more stream ops than
// kMaxSimulatedStreamOps (with its priced step).
TrainingLayoutsRun run_folded_step(const Scenario& scenario);

// What a simulation is asked for beyond the scenario (the CLI's flags, the Python keywords).
struct FoldedRequest {
  bool emulate = false;
  bool fuse = true;
  bool collectives_given = false;
  double time_limit_s = 0;
};
// Throws InvalidArgument, where the option's name, for what only the rank-by-rank run has:
// emulation (the folded step carries no data), unfused matmuls (it runs none fused), a
// choice of collectives (its are rings over put_signal) and a wall-clock limit (its bound
// is the op cap).
void check_folded_request(const FoldedRequest& request);

// Which step `simulate` runs: true for the closed form's folded step (`folded`), false for
// the planned step. Throws InvalidArgument, at "fold-replicas", for `folded` with
// `fold_replicas` (two different steps), and for emulation of a step whose replicas are
// folded (folds_replicas: it carries no data).
bool simulates_closed_form_step(const Scenario& scenario, bool folded, bool fold_replicas,
                                bool emulate);
// Whether the planned step is simulated with its data-parallel replicas folded into one
// (EvaluationOptions::fold_replicas): when asked (`--fold-replicas`), and for a model's step
// on more than kMaxRankByRankModelGpus GPUs (simulated_folded).
bool folds_replicas(const Scenario& scenario, bool fold_replicas);

// `run` and `compare` write a step rank by rank, one rank per GPU: a step simulate folds is
// refused (InvalidArgument at the scenario, naming `command`) before anything is planned —
// at 16,384 GPUs that was minutes of planning toward a plan no machine runs.
void refuse_folded_on_hardware(const Scenario& scenario, const std::string& command);

// The Chrome/Perfetto trace of the folded step's replica (training_step_trace_json).
std::string folded_step_trace_json(const Scenario& scenario, std::string& why);

}  // namespace symmesh::evaluation
