// The layout search of a model scenario at each GPU count (training_layouts.hpp).
#include "evaluation/training_layouts.hpp"

#include <algorithm>
#include <chrono>

#include "core/errors.hpp"

namespace symmesh::evaluation {
namespace {

std::string where_of(const Scenario& s) {
  return s.path.empty() ? std::string("scenario") : s.path;
}

}  // namespace

std::vector<int> training_layout_gpu_counts(const Scenario& s, const std::vector<int>& gpus) {
  if (!s.model)
    throw InvalidArgument(
        "symmesh layouts prices a model's training step: the scenario has no model: block",
        where_of(s));
  if (s.model->global_batch <= 0)
    throw InvalidArgument(
        "symmesh layouts needs model.global_batch (the sequences of one step) to count the "
        "micro-batches of each layout",
        where_of(s) + ": model");
  for (int n : gpus)
    if (n < 1) throw InvalidArgument("--gpus must be >= 1, got " + std::to_string(n), "--gpus");
  if (!gpus.empty()) return gpus;
  std::vector<int> out;
  if (s.sweep)
    for (int nodes : s.sweep->nodes) out.push_back(nodes * s.cluster.gpus_per_node);
  else
    out.push_back(s.cluster.num_gpus());
  return out;
}

const SimulatedTrainingStep* TrainingLayoutsAtSize::fastest_simulated() const {
  const SimulatedTrainingStep* fastest = nullptr;
  for (const SimulatedTrainingStep& step : simulated)
    if (step.simulated() && (!fastest || step.step_s < fastest->step_s)) fastest = &step;
  return fastest;
}

double TrainingLayoutsAtSize::answer_step_s() const {
  if (const auto* fastest = fastest_simulated()) return fastest->step_s;
  return best.empty() ? 0.0 : best.front().step_s;
}

double TrainingLayoutsAtSize::answer_mfu() const {
  if (const auto* fastest = fastest_simulated()) return fastest->mfu;
  return best.empty() ? 0.0 : best.front().mfu;
}

const strategies::TrainingLayout* TrainingLayoutsAtSize::answer_layout() const {
  if (const auto* fastest = fastest_simulated()) return &fastest->estimate.layout;
  return best.empty() ? nullptr : &best.front().layout;
}

TrainingLayoutsRun run_training_layouts(const Scenario& s, const std::vector<int>& gpu_counts,
                                        int top, int simulate,
                                        const strategies::TrainingSearchOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  TrainingLayoutsRun run;
  for (int gpus : gpu_counts) {
    const strategies::LayoutSearchResult found = strategies::search_training_layouts(
        *s.model, s.model->global_batch, s.cluster, gpus, options);
    TrainingLayoutsAtSize size;
    size.gpus = gpus;
    size.priced = found.priced;
    size.too_big = found.too_big;
    const size_t keep = std::min<size_t>(found.fitting.size(), std::max(top, 1));
    size.best.assign(found.fitting.begin(), found.fitting.begin() + keep);
    for (size_t i = 0; i < size.best.size() && static_cast<int>(i) < simulate; ++i)
      size.simulated.push_back(
          simulate_training_step(*s.model, s.model->global_batch, s.cluster, size.best[i].layout));
    size.meets_objective = !size.best.empty() && s.objective && s.objective->max_time_s &&
                           size.answer_step_s() <= *s.objective->max_time_s;
    run.sizes.push_back(std::move(size));
  }
  for (size_t i = 0; i < run.sizes.size(); ++i)
    if (run.sizes[i].meets_objective &&
        (!run.answer || run.sizes[i].gpus < run.sizes[*run.answer].gpus))
      run.answer = i;
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

TrainingLayoutsRun sweep_training_layouts(const Scenario& scenario) {
  const int simulate = scenario.sweep->layouts_simulate;
  return run_training_layouts(scenario, training_layout_gpu_counts(scenario, {}),
                              std::max(simulate, 1), simulate);
}

}  // namespace symmesh::evaluation
