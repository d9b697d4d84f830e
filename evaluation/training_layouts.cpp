// The layout search of a model scenario at each GPU count (training_layouts.hpp).
#include "evaluation/training_layouts.hpp"

#include <algorithm>
#include <chrono>

#include "core/errors.hpp"
#include "core/text.hpp"
#include "scenario/model_expansion.hpp"

namespace symmesh::evaluation {
std::vector<int> training_layout_gpu_counts(const Scenario& s, const std::vector<int>& gpus) {
  if (!s.model)
    throw InvalidArgument(
        "symmesh layouts prices a model's training step: the scenario has no model: block",
        s.where());
  if (s.model->global_batch <= 0)
    throw InvalidArgument(
        "symmesh layouts needs model.global_batch (the sequences of one step) to count the "
        "micro-batches of each layout",
        s.where() + ": model");
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

Scenario training_layout_scenario(const Scenario& s, const strategies::TrainingLayout& l) {
  constexpr const char* kWhere = "layout";
  if (!s.model)
    throw InvalidArgument("a training layout is a model's: the scenario has no model: block",
                          s.where());
  try {
    strategies::check_training_layout(*s.model, s.model->global_batch, s.cluster, l);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(e.message(), kWhere);
  }
  if (l.recompute == Recompute::selective)
    throw InvalidArgument(
        "selective recomputation cannot be planned: the generated step recomputes whole layers "
        "(full) or nothing (none)",
        kWhere);
  Scenario out = s;
  const int64_t gpus = int64_t{l.tp} * l.pp * l.dp;
  const int per_node = s.cluster.gpus_per_node;
  if (gpus <= per_node) {
    out.cluster.nodes = 1;
    out.cluster.gpus_per_node = static_cast<int>(gpus);  // one node's first GPUs
  } else if (gpus % per_node != 0) {
    throw InvalidArgument(to_string(l) + " takes " + std::to_string(gpus) +
                              " GPUs, which fill no whole number of nodes of " +
                              std::to_string(per_node) + " GPUs (" + s.cluster.name +
                              "): a planned mesh covers whole nodes",
                          kWhere);
  } else {
    out.cluster.nodes = static_cast<int>(gpus / per_node);
  }
  if (l.pp > 1) {
    out.mesh_shape = {l.pp, l.dp, l.tp};
    out.mesh_names = {kPipelineDim, scenario::kDataParallelDim, scenario::kTensorParallelDim};
  } else {
    out.mesh_shape = {l.dp, l.tp};
    out.mesh_names = {scenario::kDataParallelDim, scenario::kTensorParallelDim};
  }
  out.model->micro_batch = l.micro_batch;
  out.model->micro_batch_given = true;
  out.model->full_recompute = l.recompute == Recompute::full;
  out.model->recompute_given = true;
  if (!out.training) out.training = TrainingSpec{};
  out.training->zero_stage = l.zero_stage;
  out.training->virtual_stages = l.virtual_stages;
  try {
    out.cluster.validate();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("the cluster is invalid at " + std::to_string(gpus) + " GPUs: " +
                              e.where() + ": " + e.message(),
                          kWhere);
  }
  scenario::expand_model(out, s.where());
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

LayoutSearchSpace training_search_space(const Scenario& s, const LayoutChoices& choices,
                                        int gpus) {
  LayoutSearchSpace space;
  strategies::TrainingSearchOptions& o = space.options;
  const TransformerSpec& model = *s.model;
  const SweepSpec none;
  const SweepSpec& sweep = s.sweep ? *s.sweep : none;
  // One dimension: the flag's values, else the scenario's list, else its declared value
  // (fixed, and said so), else the default already in `values`.
  const auto choose = [&space](auto& values, const auto& flag, const auto& listed, bool declared,
                               auto declared_value, const std::string& fixed_text) {
    if (!flag.empty())
      values.assign(flag.begin(), flag.end());
    else if (!listed.empty())
      values.assign(listed.begin(), listed.end());
    else if (declared) {
      values = {declared_value};
      space.fixed.push_back(fixed_text);
    }
  };
  choose(o.micro_batches, choices.micro_batches, sweep.micro_batches, model.micro_batch_given,
         model.micro_batch, "mb " + std::to_string(model.micro_batch) + " (model.micro_batch)");
  const Recompute declared_recompute = model.full_recompute ? Recompute::full : Recompute::none;
  choose(o.recomputes, choices.recomputes, std::vector<Recompute>{}, model.recompute_given,
         declared_recompute, "recompute " + to_string(declared_recompute) + " (model.recompute)");
  const bool zero_given = s.training && s.training->zero_where.known();
  const int zero = s.training ? s.training->zero_stage : 0;
  choose(o.zero_stages, choices.zero_stages, sweep.zero_stages, zero_given, zero,
         "zero " + std::to_string(zero) + " (training.zero)");
  const bool v_given = s.training && s.training->virtual_stages_where.known();
  const int v = s.virtual_stages();
  choose(o.virtual_stages, choices.virtual_stages, sweep.layouts_virtual_stages, v_given, v,
         "v " + std::to_string(v) + " (training.virtual_stages)");
  // The mesh is a layout of the scenario's own size; a sweep's node counts replace it.
  const bool own_mesh = !s.sweep && gpus == s.cluster.num_gpus();
  const int tp = s.mesh_dim_size(scenario::kTensorParallelDim), pp = s.pipeline_stages();
  choose(o.tps, choices.tps, sweep.layouts_tps, own_mesh, tp,
         "tp " + std::to_string(tp) + " (mesh)");
  choose(o.pps, choices.pps, sweep.layouts_pps, own_mesh, pp,
         "pp " + std::to_string(pp) + " (mesh)");
  return space;
}

TrainingLayoutsRun run_training_layouts(const Scenario& s, const std::vector<int>& gpu_counts,
                                        int top, int simulate, const LayoutChoices& choices) {
  const auto start = std::chrono::steady_clock::now();
  TrainingLayoutsRun run;
  // Every count's space first, bounded as a whole before anything is priced.
  std::vector<LayoutSearchSpace> spaces;
  int64_t candidates = 0;
  for (int gpus : gpu_counts) {
    spaces.push_back(training_search_space(s, choices, gpus));
    candidates += strategies::layout_candidates(*s.model, s.cluster, gpus, spaces.back().options);
  }
  if (candidates > strategies::kMaxLayoutCandidates) {
    const bool from_flags = !choices.tps.empty() || !choices.pps.empty() ||
                            !choices.virtual_stages.empty() || !choices.zero_stages.empty() ||
                            !choices.micro_batches.empty() || !choices.recomputes.empty();
    const bool from_sweep = s.sweep && s.sweep->layouts_where.known();
    throw InvalidArgument(
        std::string(from_sweep && !from_flags ? "sweep.layouts: " : "") +
            std::to_string(candidates) + " layouts to consider over " +
            std::to_string(gpu_counts.size()) +
            " GPU counts (tp sizes x pp sizes x micro-batches x virtual stages x "
            "recomputations x ZeRO stages at each), more than the " +
            std::to_string(strategies::kMaxLayoutCandidates) +
            " one search prices; list fewer values or GPU counts",
        from_flags   ? std::string("symmesh layouts --tp/--pp/--micro-batch/--virtual-stages")
        : from_sweep ? s.sweep->layouts_where.to_string()
                     : s.where());
  }
  for (size_t i = 0; i < gpu_counts.size(); ++i) {
    const int gpus = gpu_counts[i];
    const LayoutSearchSpace& space = spaces[i];
    const strategies::LayoutSearchResult found = strategies::search_training_layouts(
        *s.model, s.model->global_batch, s.cluster, gpus, space.options);
    TrainingLayoutsAtSize size;
    size.gpus = gpus;
    size.fixed = space.fixed;
    if (found.priced == 0)
      for (const auto& [reason, layouts] : found.skipped)
        size.unpriceable.push_back(reason + " (" + std::to_string(layouts) +
                                   (layouts == 1 ? " layout)" : " layouts)"));
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
  if (!run.sizes.empty() && std::all_of(run.sizes.begin(), run.sizes.end(),
                                         [](const TrainingLayoutsAtSize& z) { return z.priced == 0; })) {
    const TrainingLayoutsAtSize& first = run.sizes.front();
    std::string message = "no layout of " + std::to_string(first.gpus) + " GPUs can be priced";
    if (run.sizes.size() > 1) message += " (nor of any other count asked)";
    const auto listed = [](const std::vector<std::string>& items) {
      return join(items, "; ", [](const std::string& item) { return item; });
    };
    if (!first.fixed.empty())
      message += " with what the scenario fixes (" + listed(first.fixed) + ")";
    message += ": " + listed(first.unpriceable);
    throw InvalidArgument(message, s.where());
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
