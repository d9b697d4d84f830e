// The backends are modules opened only by the commands that need them
// (evaluation/backends.hpp): plan maps neither SimGrid nor any CUDA library, simulate maps
// SimGrid but no CUDA library, and only the hardware commands map CUDA. The dynamic loader
// itself says what it opened (LD_DEBUG=files prints "file=<library>" for every object).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "tests/tools/run_symmesh.hpp"

namespace {

using symmesh::testing::run_symmesh;

const std::string kScenarios = std::string(SYMMESH_SOURCE_DIR) + "/scenarios/";

// The libraries the loader opened while running `args`.
std::set<std::string> opened_by(const std::string& args) {
  const auto r = run_symmesh(args, "LD_DEBUG=files");
  std::set<std::string> out;
  std::istringstream lines(r.err);
  std::string line;
  while (std::getline(lines, line)) {
    const auto at = line.find("file=");
    if (at == std::string::npos) continue;
    std::string file = line.substr(at + 5);
    file = file.substr(0, file.find_first_of(" \t;"));
    out.insert(file.substr(file.rfind('/') + 1));
  }
  return out;
}

bool any_named(const std::set<std::string>& files, const std::string& part) {
  for (const std::string& f : files)
    if (f.find(part) != std::string::npos) return true;
  return false;
}

TEST(LazyBackends, PlanOpensNeitherSimulatorNorCuda) {
  const auto files = opened_by(
      "plan --op mm --a 8192x8192 --b 8192x28672 --mesh 2x2x2 --in 'S(0),R,R' 'R,R,S(1)'");
  ASSERT_TRUE(any_named(files, "libstdc++")) << "LD_DEBUG said nothing: the check cannot see";
  EXPECT_FALSE(any_named(files, "libsimgrid"));
  EXPECT_FALSE(any_named(files, "libsymmesh_sim"));
  for (const char* cuda : {"libcudart", "libnccl", "libcublas", "libsymmesh_hw"})
    EXPECT_FALSE(any_named(files, cuda)) << cuda;
}

TEST(LazyBackends, SimulateOpensTheSimulatorButNoCuda) {
  const auto files = opened_by("simulate " + kScenarios + "quickstart.yaml");
  EXPECT_TRUE(any_named(files, "libsymmesh_sim"));
  EXPECT_TRUE(any_named(files, "libsimgrid"));
  for (const char* cuda : {"libcudart", "libnccl", "libcublas", "libsymmesh_hw"})
    EXPECT_FALSE(any_named(files, cuda)) << cuda;
}

TEST(LazyBackends, OnlyTheHardwareCommandsOpenCuda) {
#ifndef SYMMESH_HAVE_HW
  GTEST_SKIP() << "hw/ was not built: no hardware module to open";
#else
  const auto files = opened_by("run " + kScenarios + "quickstart.yaml --dry-run");
  EXPECT_TRUE(any_named(files, "libsymmesh_hw"));
  EXPECT_TRUE(any_named(files, "libcudart"));
  EXPECT_FALSE(any_named(files, "libsimgrid"));  // a dry run plans and lowers: no simulation
#endif
}

}  // namespace
