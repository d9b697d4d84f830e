// Replays every seed and every saved regression input of the fuzz targets through the
// same bodies the libFuzzer executables run (fuzz_targets.hpp), so the normal build checks
// that each input is still answered with a value or a documented error. Regression inputs
// live in tests/fuzz/regressions/<target>/, one file per finding.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_targets.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kSource = SYMMESH_SOURCE_DIR;

// The regular files directly in each folder that exists, sorted.
std::vector<fs::path> files_in(const std::vector<fs::path>& folders) {
  std::vector<fs::path> files;
  for (const fs::path& folder : folders) {
    if (!fs::is_directory(folder)) continue;
    for (const auto& entry : fs::directory_iterator(folder))
      if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string contents(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The hand-written seeds and the regressions of `target`, plus `extra_seed_folders`;
// expects at least one seed.
void replay(const std::string& target, void (*body)(std::string_view),
            std::vector<fs::path> seed_folders = {}) {
  seed_folders.push_back(kSource / "tests/fuzz/seeds" / target);
  const auto seeds = files_in(seed_folders);
  EXPECT_FALSE(seeds.empty()) << "no seeds for " << target;
  auto inputs = seeds;
  for (const fs::path& file : files_in({kSource / "tests/fuzz/regressions" / target}))
    inputs.push_back(file);
  for (const fs::path& file : inputs) {
    SCOPED_TRACE(file.string());
    const std::string data = contents(file);
    EXPECT_NO_THROW(body(data));
  }
}

TEST(FuzzReplay, ScenarioLoader) {
  replay("scenario_loader", symmesh::fuzz::scenario_loader,
         {kSource / "scenarios", kSource / "scenarios/clusters"});
}

TEST(FuzzReplay, Quantity) {
  replay("quantity", symmesh::fuzz::quantity);
}

TEST(FuzzReplay, Placement) {
  replay("placement", symmesh::fuzz::placement);
}

TEST(FuzzReplay, PlanArgs) {
  replay("plan_args", symmesh::fuzz::plan_args);
}

}  // namespace
