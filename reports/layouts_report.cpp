// The report of a model's training layouts at each GPU count (layouts_report.hpp).
#include "reports/layouts_report.hpp"

#include <algorithm>
#include <ostream>

#include "core/text.hpp"
#include "reports/text_table.hpp"

namespace symmesh::reports {
namespace {

std::string gib(double bytes) {
  return format_fixed(bytes / (1024.0 * 1024 * 1024), 1);
}

nlohmann::json estimate_json(const strategies::TrainingEstimate& e) {
  const auto& l = e.layout;
  return {{"tp", l.tp},
          {"pp", l.pp},
          {"dp", l.dp},
          {"micro_batch", l.micro_batch},
          {"virtual_stages", l.virtual_stages},
          {"recompute", to_string(l.recompute)},
          {"zero_stage", l.zero_stage},
          {"micro_batches", e.micro_batches},
          {"step_s", e.step_s},
          {"tokens_per_s", e.tokens_per_s},
          {"tokens_per_s_per_gpu", e.tokens_per_s_per_gpu},
          {"mfu", e.mfu},
          {"bubble_fraction", e.bubble_fraction},
          {"bubble_s", e.bubble_s},
          {"exposed_comm_s", e.exposed_comm_s},
          {"dp_comm_s", e.dp_comm_s},
          {"dp_exposed_s", e.dp_exposed_s},
          {"optimizer_s", e.optimizer_s},
          {"memory_bytes",
           {{"weights", e.memory.weights_bytes},
            {"gradients", e.memory.gradients_bytes},
            {"optimizer", e.memory.optimizer_bytes},
            {"activations", e.memory.activations_bytes},
            {"total", e.memory.total()}}}};
}

nlohmann::json simulated_json(const evaluation::SimulatedTrainingStep& step) {
  return {{"step_s", step.step_s},
          {"pipeline_s", step.pipeline_s},
          {"gradients_s", step.gradients_s},
          {"weights_s", step.weights_s},
          {"dp_exposed_s", step.data_parallel.exposed_s},
          {"first_forward_s", step.first_forward_s},
          {"last_backward_s", step.last_backward_s},
          {"optimizer_s", step.optimizer_s},
          {"tokens_per_s", step.tokens_per_s},
          {"tokens_per_s_per_gpu", step.tokens_per_s_per_gpu},
          {"mfu", step.mfu},
          {"simulated_ranks", step.replica_ranks + step.data_parallel_ranks},
          {"simulated_stream_ops", step.simulated_stream_ops()},
          {"represented_ranks", step.represented_ranks},
          {"represented_stream_ops", step.represented_stream_ops},
          {"wall_s", step.wall_s}};
}

// "1.2 M", "3.4 G": op counts in the text report.
std::string count_text(double n) {
  if (n >= 1e9) return format_fixed(n / 1e9, 1) + " G";
  if (n >= 1e6) return format_fixed(n / 1e6, 1) + " M";
  if (n >= 1e3) return format_fixed(n / 1e3, 1) + " k";
  return format_fixed(n, 0);
}

void print_simulated(std::ostream& out, const evaluation::TrainingLayoutsRun& run) {
  // One time unit for the step's times (text_table.hpp) and one for the tool's own wall
  // time: that one depends on the machine (and a sanitizer build), and must not change the
  // unit the simulated steps are printed in.
  std::vector<double> times_s, walls_s;
  for (const auto& size : run.sizes)
    for (const auto& step : size.simulated) {
      times_s.push_back(step.estimate.step_s);
      if (step.simulated()) {
        times_s.insert(times_s.end(), {step.step_s, step.pipeline_s, step.data_parallel.exposed_s,
                                       step.optimizer_s});
        walls_s.push_back(step.wall_s);
      }
    }
  const TimeUnit unit = time_unit_for(times_s);
  const TimeUnit wall_unit = time_unit_for(walls_s);
  TextTable table({"GPUs", "layout", unit.header("priced"), unit.header("simulated"), "difference",
                   unit.header("pipeline"), unit.header("DP exposed"), unit.header("optimizer"),
                   "MFU", "simulated ranks / ops", "stands for ranks / ops", wall_unit.header("wall")});
  bool any = false;
  for (const auto& size : run.sizes)
    for (size_t i = 0; i < size.simulated.size(); ++i) {
      const auto& step = size.simulated[i];
      const double priced = step.estimate.step_s;
      any = true;
      if (!step.simulated()) {
        table.add_row({i == 0 ? std::to_string(size.gpus) : "", to_string(step.estimate.layout),
                       unit.cell(priced), "not simulated", "-", "-", "-", "-", "-",
                       "- / " + count_text(static_cast<double>(step.replica_stream_ops)), "-",
                       "-"});
        continue;
      }
      table.add_row(
          {i == 0 ? std::to_string(size.gpus) : "", to_string(step.estimate.layout),
           unit.cell(priced), unit.cell(step.step_s),
           format_fixed(100 * (step.step_s / priced - 1), 1) + "%", unit.cell(step.pipeline_s),
           unit.cell(step.data_parallel.exposed_s), unit.cell(step.optimizer_s),
           format_fixed(100 * step.mfu, 1) + "%",
           std::to_string(step.replica_ranks + step.data_parallel_ranks) + " / " +
               count_text(static_cast<double>(step.simulated_stream_ops())),
           std::to_string(step.represented_ranks) + " / " + count_text(step.represented_stream_ops),
           wall_unit.cell(step.wall_s)});
    }
  if (!any) return;
  out << "\nSimulated (evaluation/simulated_training_step.hpp): one data-parallel replica's "
         "whole pipeline, op by op, and one stage's data-parallel rings; the other "
         "replicas and stages' rings are identical copies, not simulated. A replica of more "
         "than "
      << count_text(static_cast<double>(evaluation::kMaxSimulatedStreamOps))
      << " stream ops is not simulated (its ops are shown).\n"
      << table.render();
}

// "Held fixed by the scenario: mb 1 (model.micro_batch); tp 8 (mesh) at 64 GPUs": what the
// search did not vary, so that a reader knows a declared value was honoured.
void print_fixed(std::ostream& out, const evaluation::TrainingLayoutsRun& run) {
  std::vector<std::string> all;
  for (const auto& size : run.sizes)
    for (const std::string& f : size.fixed)
      if (std::find(all.begin(), all.end(), f) == all.end()) all.push_back(f);
  if (all.empty()) return;
  out << "Held fixed by the scenario (a command-line list replaces it):";
  for (size_t i = 0; i < all.size(); ++i) {
    out << (i ? "; " : " ") << all[i];
    std::vector<std::string> at;
    for (const auto& size : run.sizes)
      if (std::find(size.fixed.begin(), size.fixed.end(), all[i]) != size.fixed.end())
        at.push_back(std::to_string(size.gpus));
    if (at.size() < run.sizes.size())
      out << " at " << join(at, ", ", [](const std::string& g) { return g; }) << " GPUs";
  }
  out << "\n";
}

}  // namespace

nlohmann::json layouts_json(const Scenario& s, const evaluation::TrainingLayoutsRun& run) {
  const TransformerSpec& m = *s.model;
  nlohmann::json out{{"scenario", s.name},
                     {"model", m.name},
                     {"parameters", m.parameters()},
                     {"model_flops_per_token", m.model_flops_per_token()},
                     {"global_batch", m.global_batch},
                     {"seq", m.seq},
                     {"wall_s", run.wall_s}};
  nlohmann::json sizes = nlohmann::json::array();
  for (const auto& size : run.sizes) {
    nlohmann::json best = nlohmann::json::array();
    for (size_t i = 0; i < size.best.size(); ++i) {
      nlohmann::json entry = estimate_json(size.best[i]);
      if (i < size.simulated.size())
        entry["simulated"] =
            size.simulated[i].simulated()
                ? simulated_json(size.simulated[i])
                : nlohmann::json{{"not_simulated", size.simulated[i].not_simulated},
                                 {"replica_stream_ops", size.simulated[i].replica_stream_ops}};
      best.push_back(std::move(entry));
    }
    sizes.push_back({{"gpus", size.gpus},
                     {"fixed_by_scenario", size.fixed},
                     {"unpriceable", size.unpriceable},
                     {"priced", size.priced},
                     {"too_big", size.too_big},
                     {"meets_objective", size.meets_objective},
                     {"best", best}});
  }
  out["sizes"] = sizes;
  out["answer_gpus"] = run.answer ? nlohmann::json(run.sizes[*run.answer].gpus) : nlohmann::json();
  return out;
}

void print_layouts(std::ostream& out, const Scenario& s, const evaluation::TrainingLayoutsRun& run,
                   const std::string& command) {
  const TransformerSpec& m = *s.model;
  bool simulated = false;
  for (const auto& size : run.sizes) simulated |= !size.simulated.empty();
  out << command << ": " << s.name << " — " << m.name << " ("
      << format_fixed(m.parameters() / 1e9, 2) << " B parameters, " << m.layers << " layers), "
      << m.global_batch << " sequences of " << m.seq << " tokens per step, on "
      << s.cluster.gpu.name << " (" << s.cluster.name << ")\n";
  out << "MFU: model FLOPs per token " << format_fixed(m.model_flops_per_token() / 1e9, 1)
      << " GFLOP (6 x multiplying parameters + 12 x layers x heads x head_dim x seq, as "
         "PaLM defines it) over the bf16 peak\n";
  print_fixed(out, run);
  out << "\n";
  std::vector<double> times_s;
  for (const auto& size : run.sizes)
    for (const auto& e : size.best) times_s.insert(times_s.end(), {e.step_s, e.exposed_comm_s});
  const TimeUnit unit = time_unit_for(times_s);
  TextTable table({"GPUs", "layout", unit.header("step"), "tokens/s", "tokens/s/GPU", "MFU",
                   "memory/GPU GiB (w+g+o+act)", "bubble", unit.header("exposed comm"),
                   "fit/priced"});
  for (const auto& size : run.sizes) {
    const std::string fit =
        std::to_string(size.priced - size.too_big) + "/" + std::to_string(size.priced);
    if (size.best.empty()) {
      table.add_row({std::to_string(size.gpus),
                     size.priced == 0 ? "none can be priced (below)" : "none fits in memory", "-",
                     "-", "-", "-", "-", "-", "-", fit});
      continue;
    }
    for (size_t i = 0; i < size.best.size(); ++i) {
      const auto& e = size.best[i];
      table.add_row({i == 0 ? std::to_string(size.gpus) : "", to_string(e.layout),
                     unit.cell(e.step_s), format_fixed(e.tokens_per_s, 0),
                     format_fixed(e.tokens_per_s_per_gpu, 0), format_fixed(100 * e.mfu, 1) + "%",
                     gib(e.memory.total()) + " (" + gib(e.memory.weights_bytes) + "+" +
                         gib(e.memory.gradients_bytes) + "+" + gib(e.memory.optimizer_bytes) + "+" +
                         gib(e.memory.activations_bytes) + ")",
                     format_fixed(100 * e.bubble_fraction, 1) + "%", unit.cell(e.exposed_comm_s),
                     i == 0 ? fit : ""});
    }
  }
  out << table.render();
  for (const auto& size : run.sizes) {
    if (size.unpriceable.empty()) continue;
    out << "No layout of " << size.gpus << " GPUs can be priced:\n";
    for (const std::string& reason : size.unpriceable) out << "  " << reason << "\n";
  }
  print_simulated(out, run);
  if (s.objective && s.objective->max_time_s) {
    const double limit = *s.objective->max_time_s;
    if (run.answer) {
      const auto& size = run.sizes[*run.answer];
      out << "\nAnswer: " << size.gpus << " GPUs, " << to_string(*size.answer_layout())
          << ", meet the " << format_fixed(limit, 3)
          << " s objective: " << format_fixed(size.answer_step_s(), 3) << " s per step"
          << (size.fastest_simulated() ? " (simulated)" : "") << ", MFU "
          << format_fixed(100 * size.answer_mfu(), 1) << "%.\n";
    } else {
      out << "\nAnswer: no GPU count tried meets the " << format_fixed(limit, 3)
          << " s objective.\n";
    }
  }
  out << (simulated ? "Priced and simulated in " : "Priced in ") << format_fixed(run.wall_s, 3)
      << " s (closed form: strategies/training_step_estimate.hpp).\n";
}

std::string layouts_csv(const evaluation::TrainingLayoutsRun& run) {
  std::string out =
      "gpus,rank,tp,pp,dp,micro_batch,virtual_stages,recompute,zero_stage,step_s,tokens_per_s,"
      "tokens_per_s_per_gpu,mfu,memory_bytes,bubble_fraction,exposed_comm_s,simulated_step_s,"
      "simulated_mfu\n";
  for (const auto& size : run.sizes)
    for (size_t i = 0; i < size.best.size(); ++i) {
      const auto& e = size.best[i];
      const auto& l = e.layout;
      const bool sim = i < size.simulated.size() && size.simulated[i].simulated();
      out += std::to_string(size.gpus) + "," + std::to_string(i + 1) + "," + std::to_string(l.tp) +
             "," + std::to_string(l.pp) + "," + std::to_string(l.dp) + "," +
             std::to_string(l.micro_batch) + "," + std::to_string(l.virtual_stages) + "," +
             to_string(l.recompute) + "," + std::to_string(l.zero_stage) + "," +
             format_fixed(e.step_s, 6) + "," + format_fixed(e.tokens_per_s, 1) + "," +
             format_fixed(e.tokens_per_s_per_gpu, 2) + "," + format_fixed(e.mfu, 4) + "," +
             format_fixed(e.memory.total(), 0) + "," + format_fixed(e.bubble_fraction, 4) + "," +
             format_fixed(e.exposed_comm_s, 6) + "," +
             (sim ? format_fixed(size.simulated[i].step_s, 6) : "") + "," +
             (sim ? format_fixed(size.simulated[i].mfu, 4) : "") + "\n";
    }
  return out;
}

}  // namespace symmesh::reports
