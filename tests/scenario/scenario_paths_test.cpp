// The shipped scenarios' lookup order (scenario/scenario_paths.hpp), on folders laid out
// here as `cmake --install` lays them out: <prefix>/bin and <prefix>/share/symmesh/scenarios.
#include "scenario/scenario_paths.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "scenario/scenario_loader.hpp"
#include "scenario_test_files.hpp"

namespace symmesh {
namespace {

namespace fs = std::filesystem;

class ScenarioPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    files_.write("prefix/bin/symmesh", "");
    files_.write("prefix/share/symmesh/scenarios/quickstart.yaml", "");
    files_.write("source/scenarios/quickstart.yaml", "");
  }
  fs::path at(const std::string& name) const { return fs::path(files_.dir()) / name; }

  testing::ScenarioFiles files_;
};

TEST_F(ScenarioPaths, AnInstalledTreeFindsItsOwnScenarios) {
  EXPECT_EQ(choose_scenarios_dir("", at("prefix/bin"), "../share/symmesh/scenarios",
                                 at("source/scenarios")),
            at("prefix/share/symmesh/scenarios"));
}

TEST_F(ScenarioPaths, AMovedTreeStillFindsItsOwn) {
  fs::rename(at("prefix"), at("moved"));
  EXPECT_EQ(choose_scenarios_dir("", at("moved/bin"), "../share/symmesh/scenarios",
                                 at("source/scenarios")),
            at("moved/share/symmesh/scenarios"));
}

TEST_F(ScenarioPaths, WithoutAnInstalledTreeTheSourceTree) {
  // A build folder's symmesh (or a test program): nothing at ../share/symmesh/scenarios.
  files_.write("build/symmesh", "");
  EXPECT_EQ(
      choose_scenarios_dir("", at("build"), "../share/symmesh/scenarios", at("source/scenarios")),
      at("source/scenarios"));
  EXPECT_EQ(
      choose_scenarios_dir("", fs::path(), "../share/symmesh/scenarios", at("source/scenarios")),
      at("source/scenarios"));
}

TEST_F(ScenarioPaths, TheEnvironmentOverridesBoth) {
  EXPECT_EQ(choose_scenarios_dir(at("elsewhere").string(), at("prefix/bin"),
                                 "../share/symmesh/scenarios", at("source/scenarios")),
            at("elsewhere"));
}

TEST_F(ScenarioPaths, ShippedScenariosDirReadsTheEnvironment) {
  const char* before = std::getenv("SYMMESH_SCENARIOS_DIR");
  const std::string saved = before ? before : "";
  setenv("SYMMESH_SCENARIOS_DIR", at("prefix/share/symmesh/scenarios").c_str(), 1);
  const std::string seen = shipped_scenarios_dir();
  if (before)
    setenv("SYMMESH_SCENARIOS_DIR", saved.c_str(), 1);
  else
    unsetenv("SYMMESH_SCENARIOS_DIR");
  EXPECT_EQ(seen, at("prefix/share/symmesh/scenarios").string());
  // Without it, this test program (build/tests, no install tree) uses the source tree's.
  if (!before)
    EXPECT_TRUE(
        fs::equivalent(shipped_scenarios_dir(), fs::path(SYMMESH_SOURCE_DIR) / "scenarios"));
}

}  // namespace
}  // namespace symmesh
