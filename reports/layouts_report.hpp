#pragma once
// The report of a model's training layouts at each GPU count (evaluation/training_layouts.hpp),
// shared by `symmesh layouts` and `symmesh sweep` on a scenario whose sweep searches layouts:
// the text tables and answer, the JSON object and the CSV rows
// (docs/scenario-format.md, "Output of symmesh layouts").
#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>

#include "core/scenario.hpp"
#include "evaluation/training_layouts.hpp"

namespace symmesh::reports {

// The priced table, the simulated one when any layout was simulated, and the answer; the
// first line starts with `command` ("symmesh layouts").
void print_layouts(std::ostream& out, const Scenario& scenario,
                   const evaluation::TrainingLayoutsRun& run, const std::string& command);
nlohmann::json layouts_json(const Scenario& scenario, const evaluation::TrainingLayoutsRun& run);
// One row per GPU count and layout kept (rank 1 the fastest priced), with its simulated step
// and MFU when it was simulated.
std::string layouts_csv(const evaluation::TrainingLayoutsRun& run);

}  // namespace symmesh::reports
