// A model scenario's step at its own mesh, simulated folded (folded_training_step.hpp).
#include "evaluation/folded_training_step.hpp"

#include "core/errors.hpp"
#include "core/text.hpp"
#include "scenario/model_expansion.hpp"

namespace symmesh::evaluation {
namespace {

// "file:12:3" of a key when the file gave it, else the scenario's path and the key's name.
std::string key_where(const Scenario& s, const SourceLocation& at, const std::string& key) {
  return at.known() ? at.to_string() : s.where() + ": " + key;
}

}  // namespace

bool simulated_folded(const Scenario& s) {
  return s.model.has_value() && s.mesh_gpus() > kMaxRankByRankModelGpus;
}

strategies::TrainingLayout declared_training_layout(const Scenario& s) {
  if (!s.model)
    throw InvalidArgument("a folded step is a model's training step: the scenario has no model: "
                          "block",
                          s.where());
  if (!s.training || !s.training->backward)
    throw InvalidArgument(
        "a model's step on more than " + std::to_string(kMaxRankByRankModelGpus) +
            " GPUs (or with --folded) is simulated folded, which prices a whole training step "
            "(forward, backward and optimizer step): give training: {optimizer: adam}",
        s.training ? key_where(s, s.training->where, "training.backward") : s.where());
  if (s.training->optimizer != Optimizer::adam)
    throw InvalidArgument(
        "training.optimizer " + to_string(s.training->optimizer) +
            ": the folded step prices Adam's state and update (Megatron's 18 B per parameter); "
            "other optimizers are simulated rank by rank only, up to " +
            std::to_string(kMaxRankByRankModelGpus) + " GPUs",
        key_where(s, s.training->where, "training.optimizer"));
  // What the closed form's layer does not run is refused, not left out.
  if (s.model->dropout)
    throw InvalidArgument("model.dropout: the folded step's layer has no dropout (Llama's has "
                          "none); a step with dropout is simulated rank by rank only, up to " +
                              std::to_string(kMaxRankByRankModelGpus) + " GPUs",
                          s.where() + ": model");
  if (s.cost_model_given && s.cost_model != "analytic")
    throw InvalidArgument("cost_model " + s.cost_model +
                              ": the folded step is priced by the calibrated analytic model "
                              "(the roofline of core/roofline.hpp); give cost_model: analytic "
                              "or leave it out",
                          s.where() + ": cost_model");
  strategies::TrainingLayout l;
  l.tp = s.mesh_dim_size(scenario::kTensorParallelDim);
  l.pp = s.pipeline_stages();
  l.dp = static_cast<int>(scenario::data_parallel_size(s.mesh_shape, s.mesh_names));
  l.micro_batch = scenario::sequences_per_replica(*s.model, l.dp, s.where() + ": model");
  l.virtual_stages = s.virtual_stages();
  l.recompute = s.model->full_recompute ? Recompute::full : Recompute::none;
  l.zero_stage = s.training->zero_stage;
  const Scenario step = folded_step_scenario(s);
  try {
    strategies::check_training_layout(*step.model, step.model->global_batch, step.cluster, l);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("the declared layout (" + to_string(l) + ") cannot be simulated: " +
                              e.message(),
                          s.where());
  }
  return l;
}

Scenario folded_step_scenario(const Scenario& s) {
  Scenario step = s;
  if (step.model && step.model->global_batch <= 0) {
    const int64_t dp = scenario::data_parallel_size(s.mesh_shape, s.mesh_names);
    step.model->global_batch = dp * scenario::sequences_per_replica(*s.model, dp, s.where());
  }
  return step;
}

TrainingLayoutsRun run_folded_step(const Scenario& s) {
  const strategies::TrainingLayout l = declared_training_layout(s);
  const Scenario step = folded_step_scenario(s);
  // The declared layout, every dimension held: the layouts search prices exactly it.
  LayoutChoices only;
  only.tps = {l.tp};
  only.pps = {l.pp};
  only.micro_batches = {l.micro_batch};
  only.virtual_stages = {l.virtual_stages};
  only.recomputes = {l.recompute};
  only.zero_stages = {l.zero_stage};
  TrainingLayoutsRun run = run_training_layouts(step, {l.gpus()}, 1, 1, only);
  const TrainingLayoutsAtSize& at = run.sizes.front();
  if (at.best.empty()) {
    const strategies::TrainingEstimate e = strategies::estimate_training_step(
        *step.model, step.model->global_batch, step.cluster, l);
    const auto& m = e.memory;
    throw InvalidArgument(
        "the step at its declared layout (" + to_string(l) + ") needs " + format_gib(m.total()) +
            " per GPU (weights " + format_gib(m.weights_bytes) + ", gradients " +
            format_gib(m.gradients_bytes) + ", optimizer state " + format_gib(m.optimizer_bytes) +
            ", activations " + format_gib(m.activations_bytes) + "); " + s.cluster.gpu.name +
            " has " + format_gib(s.cluster.gpu.memory_capacity_bytes) +
            " (symmesh layouts finds the layouts that fit)",
        s.model_where_text());
  }
  if (!at.simulated.front().simulated())
    throw InvalidArgument("not simulated: " + at.simulated.front().not_simulated +
                              " (priced: " + format_fixed(at.best.front().step_s, 3) +
                              " s a step; symmesh layouts prints it)",
                          s.where());
  return run;
}

void check_folded_request(const FoldedRequest& r) {
  const std::string folded = "the folded step of a model on more than " +
                             std::to_string(kMaxRankByRankModelGpus) + " GPUs (or with --folded) ";
  if (r.emulate)
    throw InvalidArgument(folded + "carries no data; emulate on fewer GPUs", "emulate");
  if (!r.fuse) throw InvalidArgument(folded + "runs no fused matmul to unfuse", "no-fuse");
  if (r.collectives_given)
    throw InvalidArgument(folded + "runs its collectives as rings over put_signal", "collectives");
  if (r.time_limit_s > 0)
    throw InvalidArgument(folded + "is bounded by its op cap (8 M stream ops), not a clock",
                          "time limit");
}

bool simulates_closed_form_step(const Scenario& s, bool folded, bool fold_replicas,
                                bool emulate) {
  if (folded && fold_replicas)
    throw InvalidArgument("--folded simulates the closed form's layer, --fold-replicas the "
                          "planned step: give one",
                          "fold-replicas");
  if (fold_replicas && emulate)
    throw InvalidArgument("a step with its replicas folded carries no data: emulate it without "
                          "--fold-replicas",
                          "fold-replicas");
  if (!folded && emulate && simulated_folded(s))
    throw InvalidArgument("a model's step on more than " +
                              std::to_string(kMaxRankByRankModelGpus) +
                              " GPUs is simulated with its data-parallel replicas folded into "
                              "one, which carries no data: emulate on fewer GPUs",
                          "emulate");
  return folded;
}

bool folds_replicas(const Scenario& s, bool fold_replicas) {
  return fold_replicas || simulated_folded(s);
}

void refuse_folded_on_hardware(const Scenario& s, const std::string& command) {
  if (!simulated_folded(s)) return;
  throw InvalidArgument(command +
                            " writes a step rank by rank, one rank per GPU; this model's step is on " +
                            std::to_string(s.mesh_gpus()) + " GPUs, more than the " +
                            std::to_string(kMaxRankByRankModelGpus) +
                            " written rank by rank (symmesh simulate folds it; run a mesh of this "
                            "machine's GPUs)",
                        s.where());
}

std::string folded_step_trace_json(const Scenario& s, std::string& why) {
  const strategies::TrainingLayout l = declared_training_layout(s);
  const Scenario step = folded_step_scenario(s);
  return training_step_trace_json(*step.model, step.model->global_batch, step.cluster, l, why);
}

}  // namespace symmesh::evaluation
