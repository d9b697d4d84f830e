// reports/layouts_report.cpp: the text report of `symmesh layouts`, on a run built by hand
// so that every time in it is known.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "scenario/scenario_loader.hpp"
#include "reports/layouts_report.hpp"

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// One 16-GPU size with one layout, priced at 0.222 s and simulated at 0.223 s, as the
// Llama 3 8B step of layouts_command_test.cpp is.
symmesh::evaluation::TrainingLayoutsRun run_simulated_in(double wall_s) {
  symmesh::evaluation::TrainingLayoutsRun run;
  auto& size = run.sizes.emplace_back();
  size.gpus = 16;
  size.priced = size.too_big = 0;
  auto& estimate = size.best.emplace_back();
  estimate.step_s = 0.222;
  auto& step = size.simulated.emplace_back();
  step.estimate = estimate;
  step.step_s = step.pipeline_s = 0.223;
  step.optimizer_s = 0.006;
  step.wall_s = wall_s;
  return run;
}

// The bug: the tool's own wall time chose the unit of the simulated steps, so a slow machine
// (or a sanitizer build) taking 1.6 s printed "simulated (s)" where a fast one printed
// "simulated (ms)". The steps' unit comes from the steps (0.223 s: ms); the wall time has
// its own column unit.
TEST(LayoutsReport, TheToolsWallTimeDoesNotChooseTheStepsUnit) {
  const auto scenario = symmesh::load_scenario(std::string(SYMMESH_SOURCE_DIR) +
                                               "/scenarios/llama3-8b-train.yaml");
  for (double wall_s : {0.5, 1.6, 30.0}) {
    std::ostringstream out;
    symmesh::reports::print_layouts(out, scenario, run_simulated_in(wall_s), "symmesh layouts");
    const std::string text = out.str();
    EXPECT_THAT(text, HasSubstr("simulated (ms)")) << wall_s;
    EXPECT_THAT(text, HasSubstr("   223.000 ")) << wall_s;  // 0.223 s in ms
    EXPECT_THAT(text, Not(HasSubstr("simulated (s)"))) << wall_s;
    // The wall column: 0.5 s in ms (500.000), 1.6 and 30 s in s.
    EXPECT_THAT(text, HasSubstr(wall_s < 1 ? "wall (ms)" : "wall (s)")) << wall_s;
  }
}

}  // namespace
