// The report of a model's training layouts at each GPU count (layouts_report.hpp).
#include "reports/layouts_report.hpp"

#include <algorithm>
#include <ostream>

#include "core/text.hpp"
#include "reports/report_columns.hpp"
#include "reports/text_table.hpp"

namespace symmesh::reports {
namespace {

// The rows of one GPU count: each layout kept, with its simulated step where it was asked.
std::vector<LayoutRow> layout_rows(const evaluation::TrainingLayoutsAtSize& size) {
  std::vector<LayoutRow> rows;
  for (size_t i = 0; i < size.best.size(); ++i)
    rows.push_back({size, i, size.best[i], i < size.simulated.size() ? &size.simulated[i] : nullptr});
  return rows;
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
    for (const LayoutRow& row : layout_rows(size)) {
      nlohmann::json entry = nlohmann::json::object();
      write_json(layout_columns(), row, entry);
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
  const auto shown = table_columns(layout_columns(), kTerminal, run);
  std::vector<std::string> header;
  for (const auto* c : shown) header.push_back(table_header(*c, run, unit));
  TextTable table(header);
  for (const auto& size : run.sizes) {
    if (size.best.empty()) {
      // The GPU count, why it has no layout, and its fit/priced (the last column).
      std::vector<std::string> row(shown.size(), "-");
      row.front() = std::to_string(size.gpus);
      row[1] = size.priced == 0 ? "none can be priced (below)" : "none fits in memory";
      row.back() = std::to_string(size.priced - size.too_big) + "/" + std::to_string(size.priced);
      table.add_row(row);
      continue;
    }
    for (const LayoutRow& r : layout_rows(size)) {
      std::vector<std::string> row;
      for (const auto* c : shown) row.push_back(table_cell(*c, r, unit));
      table.add_row(row);
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
  std::string out = csv_header(layout_columns());
  for (const auto& size : run.sizes)
    for (const LayoutRow& row : layout_rows(size)) out += csv_row(layout_columns(), row);
  return out;
}

}  // namespace symmesh::reports
