#pragma once
// The columns of `symmesh sweep` (results.csv, results.json's points, summary.md's and the
// terminal's table of points) and of `symmesh layouts` (its CSV, its JSON's `best` entries,
// its priced table): two tables of report_schema.hpp's rows. A new column is a row here
// (report_columns.cpp), and the result field it reads where that is new.
#include <vector>

#include "evaluation/training_layouts.hpp"
#include "reports/report_schema.hpp"
#include "reports/sweep_report.hpp"

namespace symmesh::reports {

// One sweep point, or one of its ops: results.csv has a row per point and op (a skipped
// point: one row, without an op); the JSON and the tables have a row per point.
struct SweepRow {
  using Context = SweepOutcome;
  const SweepOutcome& outcome;
  const evaluation::SweepPoint& point;
  const evaluation::OpReport* op = nullptr;
};
const std::vector<Column<SweepRow>>& sweep_columns();

// One layout kept at one GPU count (rank 0 the fastest priced), with its simulated step
// where it was asked to be simulated.
struct LayoutRow {
  using Context = evaluation::TrainingLayoutsRun;
  const evaluation::TrainingLayoutsAtSize& size;
  size_t rank = 0;
  const strategies::TrainingEstimate& estimate;
  const evaluation::SimulatedTrainingStep* simulated = nullptr;
  bool ran() const { return simulated && simulated->simulated(); }
};
const std::vector<Column<LayoutRow>>& layout_columns();

}  // namespace symmesh::reports
