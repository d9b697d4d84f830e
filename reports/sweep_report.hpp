#pragma once
// What `symmesh sweep` writes and prints: summary.md (the answer, then one table row per
// point with per-op times and strategies), results.csv (one row per point and op),
// results.json (per point the keys of `symmesh simulate --json`, plus the answer), and the
// terminal summary. The points' columns in all four are report_columns.hpp's
// sweep_columns(), documented in docs/commands.md.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "evaluation/sweep_answer.hpp"
#include "evaluation/sweep_runner.hpp"
#include "reports/text_table.hpp"

namespace symmesh::reports {

struct SweepOutcome {
  const Scenario& scenario;
  const evaluation::SweepRun& run;
  const evaluation::SweepAnswer& answer;
  std::vector<std::string> files;  // written next to summary.md, for its "Files" list
};

// The time unit of tables and plots: the CLI's one rule (text_table.hpp) over the points'
// totals, the largest time of every table. (CSV and JSON are in seconds.)
using SweepTimeUnit = TimeUnit;
SweepTimeUnit sweep_time_unit(const evaluation::SweepRun& run);

// The stable CSV columns, in order: the CSV keys of sweep_columns().
const std::vector<std::string>& sweep_csv_columns();

// Scenario text (a name) safe in Markdown: no raw HTML, no markup (sweep_report.cpp says how).
std::string markdown_text(const std::string& text);

std::string sweep_summary_markdown(const SweepOutcome& outcome);
std::string sweep_results_csv(const SweepOutcome& outcome);
nlohmann::json sweep_results_json(const SweepOutcome& outcome);
// The answer in one or two lines, then the table of points (per-op times), then the
// skipped points with their reasons.
std::string sweep_terminal_text(const SweepOutcome& outcome);

// "2 nodes (16 GPUs)" style notes on what was swept, e.g. that a scenario without
// `sweep:` was evaluated at its own size only.
std::string sweep_scope_text(const Scenario& scenario);

}  // namespace symmesh::reports
