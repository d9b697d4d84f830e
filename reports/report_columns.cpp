// The columns of `symmesh sweep` and `symmesh layouts` (report_columns.hpp): one row each,
// read by every writer of CSV, JSON and the tables. Their meaning is documented in
// docs/commands.md (results.csv) and docs/scenario-format.md (Output of symmesh layouts).
#include "reports/report_columns.hpp"

#include <type_traits>

#include "evaluation/sweep_answer.hpp"

namespace symmesh::reports {
namespace {

using evaluation::OpReport;
using evaluation::SimulatedTrainingStep;
using evaluation::SweepPoint;
using strategies::TrainingEstimate;
using strategies::TrainingLayout;
using strategies::TrainingMemory;

// A figure as a value: integers stay integers (JSON 4, not 4.0), reals stay reals.
template <typename T>
Value number(T x) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<double>(x);
  else
    return static_cast<int64_t>(x);
}

// --- sweep -------------------------------------------------------------------------------

// A figure of the point's simulation: absent on a skipped point.
const evaluation::ModelThroughput* throughput(const SweepRow& r) {
  return r.point.simulated() && r.point.report.model ? &*r.point.report.model : nullptr;
}

bool has_objective(const SweepOutcome& o) { return o.answer.max_time_s.has_value(); }
bool has_model(const SweepOutcome& o) { return o.scenario.model.has_value(); }

// A figure of the row's op: absent on a skipped point's row (and on a point's own row).
template <auto Member>
Value op_figure(const SweepRow& r) {
  return r.op ? number(r.op->*Member) : Value();
}
template <auto Member>
Column<SweepRow> op_column(std::string key, Unit unit) {
  return {.key = std::move(key), .unit = unit, .outputs = kCsv, .get = op_figure<Member>};
}

std::vector<Column<SweepRow>> make_sweep_columns() {
  return {
      {.key = "nodes",
       .header = "nodes",
       .unit = Unit::count,
       .get = [](const SweepRow& r) { return number(r.point.nodes); }},
      {.key = "gpus",
       .header = "GPUs",
       .unit = Unit::count,
       .get = [](const SweepRow& r) { return number(r.point.gpus); }},
      // "2x4" (and the micro-batch size and ZeRO stage where swept); JSON: the list of dims.
      {.key = "mesh",
       .header = "mesh",
       .get = [](const SweepRow& r) { return Value(evaluation::point_layout_text(r.point)); },
       .json = [](const SweepRow& r) { return nlohmann::json(r.point.mesh); }},
      {.key = "micro_batch",
       .outputs = kJson,
       .get = [](const SweepRow& r) {
         return r.point.micro_batch > 0 ? number(r.point.micro_batch) : Value();
       }},
      {.key = "zero",
       .outputs = kJson,
       .get = [](const SweepRow& r) { return r.point.zero >= 0 ? number(r.point.zero) : Value(); }},
      {.key = "status",
       .outputs = kCsv | kJson,
       .get = [](const SweepRow& r) { return Value(std::string(r.point.simulated() ? "ok" : "skipped")); }},
      {.key = "total_time_s",
       .header = "total",
       .unit = Unit::seconds,
       .get = [](const SweepRow& r) {
         return r.point.simulated() ? Value(r.point.total_time_s()) : Value();
       }},
      // A version-2 step's plan priced through its schedule (strategies/planned_step_price.hpp):
      // the analytic reading beside the simulated total.
      {.key = "priced_time_s",
       .unit = Unit::seconds,
       .outputs = kCsv | kJson,
       .get = [](const SweepRow& r) {
         return r.point.simulated() && r.point.report.step && r.point.report.step->priced_step_s > 0
                    ? Value(r.point.report.step->priced_step_s)
                    : Value();
       }},
      {.key = "meets_objective",
       .get =
           [](const SweepRow& r) {
             if (!r.point.simulated()) return Value();
             const auto& limit = r.outcome.answer.max_time_s;
             return limit ? Value(evaluation::meets_objective(r.point, limit)) : Value(Null{});
           },
       .shown = has_objective,
       .header_of =
           [](const SweepOutcome& o) {
             return "meets " + evaluation::format_time(*o.answer.max_time_s);
           }},
      {.key = "tokens_per_s_per_gpu",
       .header = "tokens/s/GPU",
       .unit = Unit::tokens_per_s,
       .get = [](const SweepRow& r) {
         const auto* m = throughput(r);
         return m ? Value(m->tokens_per_s_per_gpu) : Value();
       },
       .json_key = "/model/tokens_per_s_per_gpu",
       .shown = has_model},
      // The tables mark a point whose every layer is recomputed.
      {.key = "mfu",
       .header = "MFU",
       .unit = Unit::fraction,
       .get = [](const SweepRow& r) {
         const auto* m = throughput(r);
         return m ? Value(m->mfu) : Value();
       },
       .json_key = "/model/mfu",
       .cell =
           [](const SweepRow& r) {
             const auto* m = throughput(r);
             if (!m) return std::string("-");
             return format_fixed(100 * m->mfu, 1) + "%" +
                    (m->recompute == Recompute::full ? " (recompute)" : "");
           },
       .shown = has_model},
      {.key = "recompute",
       .outputs = kCsv | kJson,
       .get = [](const SweepRow& r) {
         const auto* m = throughput(r);
         return m ? Value(to_string(m->recompute)) : Value();
       },
       .json_key = "/model/recompute"},
      // Per op: CSV only. results.json carries each op under `ops` with the keys of
      // `symmesh simulate --json` (reports/simulation_output.cpp).
      {.key = "op",
       .outputs = kCsv,
       .get = [](const SweepRow& r) { return r.op ? Value(r.op->name) : Value(); }},
      {.key = "kind",
       .outputs = kCsv,
       .get = [](const SweepRow& r) { return r.op ? Value(r.op->op) : Value(); }},
      op_column<&OpReport::time_s>("time_s", Unit::seconds),
      op_column<&OpReport::comm_time_s>("comm_time_s", Unit::seconds),
      op_column<&OpReport::compute_time_s>("compute_time_s", Unit::seconds),
      op_column<&OpReport::peak_memory_bytes_per_rank>("peak_memory_bytes_per_rank", Unit::bytes),
      // What a transfer or collective moves; a matmul has its placements instead.
      {.key = "bytes",
       .unit = Unit::bytes,
       .outputs = kCsv,
       .get = [](const SweepRow& r) {
         return r.op && !r.op->input_placements ? number(r.op->bytes) : Value();
       }},
      {.key = "input_placements",
       .outputs = kCsv,
       .get = [](const SweepRow& r) {
         if (!r.op || !r.op->input_placements) return Value();
         std::string inputs;
         for (const auto& p : *r.op->input_placements)
           inputs += (inputs.empty() ? "" : " x ") + to_string(p);
         return Value(inputs);
       }},
      {.key = "output_placements",
       .outputs = kCsv,
       .get = [](const SweepRow& r) {
         return r.op && r.op->output_placements ? Value(to_string(*r.op->output_placements))
                                                : Value();
       }},
      {.key = "reason",
       .outputs = kCsv | kJson,
       .get = [](const SweepRow& r) {
         return r.point.skip_reason ? Value(*r.point.skip_reason) : Value();
       }},
  };
}

// --- layouts -----------------------------------------------------------------------------

template <auto Member>
Value layout_figure(const LayoutRow& r) {
  return number(r.estimate.layout.*Member);
}
template <auto Member>
Value estimate_figure(const LayoutRow& r) {
  return number(r.estimate.*Member);
}
template <auto Member>
Value memory_figure(const LayoutRow& r) {
  return number(r.estimate.memory.*Member);
}
// A figure of the simulated step: absent where the layout was not simulated.
template <auto Member>
Value simulated_figure(const LayoutRow& r) {
  return r.ran() ? number(r.simulated->*Member) : Value();
}

std::string gib(double bytes) { return format_fixed(bytes / (1024.0 * 1024 * 1024), 1); }

// The first row of a GPU count carries the count (and its fit/priced) in the table.
std::string on_first_row(const LayoutRow& r, const std::string& text) {
  return r.rank == 0 ? text : "";
}

// A layout column in CSV, JSON and the table.
Column<LayoutRow> everywhere(std::string key, std::string header, Unit unit, int csv_digits,
                             Value (*get)(const LayoutRow&)) {
  return {.key = std::move(key),
          .header = std::move(header),
          .unit = unit,
          .outputs = kCsv | kJson | kTerminal,
          .get = get,
          .csv_digits = csv_digits};
}
// A layout figure in CSV and JSON.
Column<LayoutRow> in_files(std::string key, Value (*get)(const LayoutRow&)) {
  return {.key = std::move(key), .outputs = kCsv | kJson, .get = get};
}
// A layout figure in JSON only, at `pointer`.
Column<LayoutRow> in_json(std::string pointer, Value (*get)(const LayoutRow&)) {
  return {.key = pointer.substr(pointer.rfind('/') + 1),
          .outputs = kJson,
          .get = get,
          .json_key = std::move(pointer)};
}

std::vector<Column<LayoutRow>> make_layout_columns() {
  std::vector<Column<LayoutRow>> c{
      {.key = "gpus",
       .header = "GPUs",
       .unit = Unit::count,
       .outputs = kCsv | kTerminal,
       .get = [](const LayoutRow& r) { return number(r.size.gpus); },
       .cell = [](const LayoutRow& r) { return on_first_row(r, std::to_string(r.size.gpus)); }},
      {.key = "rank",
       .unit = Unit::count,
       .outputs = kCsv,
       .get = [](const LayoutRow& r) { return number(r.rank + 1); }},
      {.key = "layout",
       .header = "layout",
       .outputs = kTerminal,
       .get = [](const LayoutRow& r) { return Value(to_string(r.estimate.layout)); }},
      in_files("tp", layout_figure<&TrainingLayout::tp>),
      in_files("pp", layout_figure<&TrainingLayout::pp>),
      in_files("dp", layout_figure<&TrainingLayout::dp>),
      in_files("micro_batch", layout_figure<&TrainingLayout::micro_batch>),
      in_files("virtual_stages", layout_figure<&TrainingLayout::virtual_stages>),
      in_files("recompute",
               [](const LayoutRow& r) { return Value(to_string(r.estimate.layout.recompute)); }),
      in_files("zero_stage", layout_figure<&TrainingLayout::zero_stage>),
      in_json("/micro_batches", estimate_figure<&TrainingEstimate::micro_batches>),
      everywhere("step_s", "step", Unit::seconds, 6, estimate_figure<&TrainingEstimate::step_s>),
      everywhere("tokens_per_s", "tokens/s", Unit::tokens_per_s, 1,
                 estimate_figure<&TrainingEstimate::tokens_per_s>),
      everywhere("tokens_per_s_per_gpu", "tokens/s/GPU", Unit::tokens_per_s, 2,
                 estimate_figure<&TrainingEstimate::tokens_per_s_per_gpu>),
      everywhere("mfu", "MFU", Unit::fraction, 4, estimate_figure<&TrainingEstimate::mfu>),
      // The total per GPU; the table and the JSON also split it.
      {.key = "memory_bytes",
       .header = "memory/GPU GiB (w+g+o+act)",
       .unit = Unit::bytes,
       .outputs = kCsv | kJson | kTerminal,
       .get = [](const LayoutRow& r) { return number(r.estimate.memory.total()); },
       .csv_digits = 0,
       .json_key = "/memory_bytes/total",
       .cell =
           [](const LayoutRow& r) {
             const TrainingMemory& m = r.estimate.memory;
             return gib(m.total()) + " (" + gib(m.weights_bytes) + "+" + gib(m.gradients_bytes) +
                    "+" + gib(m.optimizer_bytes) + "+" + gib(m.activations_bytes) + ")";
           }},
      in_json("/memory_bytes/weights", memory_figure<&TrainingMemory::weights_bytes>),
      in_json("/memory_bytes/gradients", memory_figure<&TrainingMemory::gradients_bytes>),
      in_json("/memory_bytes/optimizer", memory_figure<&TrainingMemory::optimizer_bytes>),
      in_json("/memory_bytes/activations", memory_figure<&TrainingMemory::activations_bytes>),
      everywhere("bubble_fraction", "bubble", Unit::fraction, 4,
                 estimate_figure<&TrainingEstimate::bubble_fraction>),
      in_json("/bubble_s", estimate_figure<&TrainingEstimate::bubble_s>),
      everywhere("exposed_comm_s", "exposed comm", Unit::seconds, 6,
                 estimate_figure<&TrainingEstimate::exposed_comm_s>),
      in_json("/dp_comm_s", estimate_figure<&TrainingEstimate::dp_comm_s>),
      in_json("/dp_exposed_s", estimate_figure<&TrainingEstimate::dp_exposed_s>),
      in_json("/optimizer_s", estimate_figure<&TrainingEstimate::optimizer_s>),
      {.key = "fit",
       .header = "fit/priced",
       .outputs = kTerminal,
       .get = [](const LayoutRow& r) {
         return Value(on_first_row(r, std::to_string(r.size.priced - r.size.too_big) + "/" +
                                          std::to_string(r.size.priced)));
       }},
      // The simulated step (evaluation/simulated_training_step.hpp), where it was run.
      {.key = "simulated_step_s",
       .unit = Unit::seconds,
       .outputs = kCsv | kJson,
       .get = simulated_figure<&SimulatedTrainingStep::step_s>,
       .csv_digits = 6,
       .json_key = "/simulated/step_s"},
      {.key = "simulated_mfu",
       .unit = Unit::fraction,
       .outputs = kCsv | kJson,
       .get = simulated_figure<&SimulatedTrainingStep::mfu>,
       .csv_digits = 4,
       .json_key = "/simulated/mfu"},
      in_json("/simulated/pipeline_s", simulated_figure<&SimulatedTrainingStep::pipeline_s>),
      in_json("/simulated/gradients_s", simulated_figure<&SimulatedTrainingStep::gradients_s>),
      in_json("/simulated/weights_s", simulated_figure<&SimulatedTrainingStep::weights_s>),
      in_json("/simulated/dp_exposed_s",
              [](const LayoutRow& r) {
                return r.ran() ? number(r.simulated->data_parallel.exposed_s) : Value();
              }),
      in_json("/simulated/first_forward_s",
              simulated_figure<&SimulatedTrainingStep::first_forward_s>),
      in_json("/simulated/last_backward_s",
              simulated_figure<&SimulatedTrainingStep::last_backward_s>),
      in_json("/simulated/optimizer_s", simulated_figure<&SimulatedTrainingStep::optimizer_s>),
      in_json("/simulated/tokens_per_s", simulated_figure<&SimulatedTrainingStep::tokens_per_s>),
      in_json("/simulated/tokens_per_s_per_gpu",
              simulated_figure<&SimulatedTrainingStep::tokens_per_s_per_gpu>),
      in_json("/simulated/simulated_ranks",
              [](const LayoutRow& r) {
                return r.ran() ? number(r.simulated->replica_ranks + r.simulated->data_parallel_ranks)
                               : Value();
              }),
      in_json("/simulated/simulated_stream_ops",
              [](const LayoutRow& r) {
                return r.ran() ? number(r.simulated->simulated_stream_ops()) : Value();
              }),
      in_json("/simulated/represented_ranks",
              simulated_figure<&SimulatedTrainingStep::represented_ranks>),
      in_json("/simulated/represented_stream_ops",
              simulated_figure<&SimulatedTrainingStep::represented_stream_ops>),
      in_json("/simulated/wall_s", simulated_figure<&SimulatedTrainingStep::wall_s>),
      // A layout asked to be simulated that was over the cap: why, and its size.
      in_json("/simulated/not_simulated",
              [](const LayoutRow& r) {
                return r.simulated && !r.ran() ? Value(r.simulated->not_simulated) : Value();
              }),
      in_json("/simulated/replica_stream_ops", [](const LayoutRow& r) {
        return r.simulated && !r.ran() ? number(r.simulated->replica_stream_ops) : Value();
      })};
  return c;
}

}  // namespace

const std::vector<Column<SweepRow>>& sweep_columns() {
  static const std::vector<Column<SweepRow>> columns = make_sweep_columns();
  return columns;
}

const std::vector<Column<LayoutRow>>& layout_columns() {
  static const std::vector<Column<LayoutRow>> columns = make_layout_columns();
  return columns;
}

}  // namespace symmesh::reports
