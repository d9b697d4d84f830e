#pragma once
// `symmesh layouts`: a model scenario's whole training step priced for every parallel
// layout at each GPU count (strategies/training_step_estimate.hpp), and the answers to
// "the best layout on N GPUs" and "the fewest GPUs that reach the objective".
#include <optional>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "evaluation/simulated_training_step.hpp"
#include "strategies/training_step_estimate.hpp"

namespace symmesh::evaluation {

// What the command line asks the search to try, each list overriding the scenario for its
// dimension (empty: not given): `symmesh layouts --tp … --pp … --micro-batch …
// --virtual-stages … --recompute … --zero …`.
struct LayoutChoices {
  std::vector<int> tps, pps, virtual_stages, zero_stages;
  std::vector<int64_t> micro_batches;
  std::vector<Recompute> recomputes;
};

// The search at one GPU count. Each dimension's values come from, in this order: the
// command line; the scenario's search lists (sweep.layouts.tp / pp / virtual_stages,
// sweep.micro_batch, sweep.zero); the value the scenario declares, held fixed
// (model.micro_batch, model.recompute, training.zero, training.virtual_stages, and — at the
// scenario's own GPU count when it has no sweep — its mesh's tp and pp); else the default
// space (strategies::TrainingSearchOptions). `fixed` says what the scenario held fixed,
// e.g. "mb 1 (model.micro_batch)", for the report.
struct LayoutSearchSpace {
  strategies::TrainingSearchOptions options;
  std::vector<std::string> fixed;
};
LayoutSearchSpace training_search_space(const Scenario& scenario, const LayoutChoices& choices,
                                        int gpus);

struct TrainingLayoutsAtSize {
  int gpus = 0;
  std::vector<std::string> fixed;  // LayoutSearchSpace::fixed at this count
  // When nothing was priced: why each value tried was impossible, with how many layouts
  // ("micro_batch 3 x dp 8 does not divide the global batch of 16 (12 layouts)").
  std::vector<std::string> unpriceable;
  std::vector<strategies::TrainingEstimate> best;  // fastest first, at most `top`
  // The first `simulate` of best, simulated (evaluation/simulated_training_step.hpp), or
  // with the reason they were not.
  std::vector<SimulatedTrainingStep> simulated;
  int64_t priced = 0;
  int64_t too_big = 0;
  // The fastest step within the objective's max_time: the fastest simulated one when any
  // was simulated, else best[0] as priced.
  bool meets_objective = false;
  const SimulatedTrainingStep* fastest_simulated() const;  // nullptr when none was
  double answer_step_s() const;  // that fastest step (0 when nothing fits)
  double answer_mfu() const;
  const strategies::TrainingLayout* answer_layout() const;  // nullptr when nothing fits
};

struct TrainingLayoutsRun {
  std::vector<TrainingLayoutsAtSize> sizes;  // in the order asked
  // The fewest GPUs whose best layout meets the objective (index into sizes), if any.
  std::optional<size_t> answer;
  double wall_s = 0;
};

// The GPU counts to try: `gpus` when not empty, else the sweep's node counts times the
// GPUs per node, else the scenario's own. Throws InvalidArgument (where the scenario's path)
// when the scenario has no model: block or its model no global_batch, or a count is < 1.
std::vector<int> training_layout_gpu_counts(const Scenario& scenario, const std::vector<int>& gpus);

// `simulate` layouts of each count (at most `top`) are also simulated; `choices` overrides
// the scenario's search space (training_search_space). Throws InvalidArgument when no
// layout at all can be priced at any count — what the scenario or the choices fix is
// impossible together — with the reasons, at the scenario (or the flags).
TrainingLayoutsRun run_training_layouts(const Scenario& scenario,
                                        const std::vector<int>& gpu_counts, int top,
                                        int simulate = 0, const LayoutChoices& choices = {});

// The scenario whose step is `layout`: its mesh [pp, dp, tp] ([dp, tp] when pp is 1) on
// as many nodes as its GPUs fill (a single node's first tp·pp·dp GPUs when fewer), the
// model's step generated again with the layout's micro-batch, virtual stages,
// recomputation and ZeRO stage — what the planner plans for that layout (the torch plan of
// a layouts answer: torch_parallel_plan.hpp). Throws InvalidArgument, where "layout", for
// a layout it cannot express: one check_training_layout refuses, GPUs that fill no whole
// number of nodes or selective recomputation; and what the model's expansion refuses
// (where the scenario's path).
Scenario training_layout_scenario(const Scenario& scenario,
                                  const strategies::TrainingLayout& layout);

// A scenario's `sweep.layouts`: its node counts' layouts, the fastest
// `sweep.layouts_simulate` of each count also simulated (what `symmesh sweep` and the
// Python module's sweep report for such a scenario).
TrainingLayoutsRun sweep_training_layouts(const Scenario& scenario);

}  // namespace symmesh::evaluation
