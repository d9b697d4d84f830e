// symmesh validate: every shipped scenario is valid; a broken one is named with its place.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/tools/run_symmesh.hpp"

namespace {

using symmesh::testing::run_symmesh;
using ::testing::HasSubstr;

TEST(ValidateCommand, EveryShippedScenarioIsValid) {
  std::string args;
  int count = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(SYMMESH_SOURCE_DIR) + "/scenarios"))
    if (entry.path().extension() == ".yaml") args += " " + entry.path().string(), ++count;
  ASSERT_GE(count, 7);
  const auto r = run_symmesh("validate" + args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  size_t lines = 0;
  for (char c : r.out) lines += c == '\n';
  EXPECT_EQ(lines, static_cast<size_t>(count));
  EXPECT_THAT(r.out, HasSubstr("quickstart.yaml: valid"));
}

TEST(ValidateCommand, InnerDimMismatchIsNamedWithItsPlace) {
  const auto path = (std::filesystem::temp_directory_path() / "symmesh_validate_bad.yaml").string();
  std::ofstream(path)
      << "name: bad\n"
         "cluster: clusters/dgx-h100.yaml\n"
         "mesh: {shape: [8]}\n"
         "workload:\n"
         "  - {name: x, op: mm, a: [8, 16], b: [32, 8], a_placements: [R], b_placements: [R]}\n";
  const auto r = run_symmesh("validate " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("symmesh_validate_bad.yaml:5:"));
  EXPECT_THAT(r.err, HasSubstr("inner dims"));
  EXPECT_TRUE(r.out.empty());
  std::remove(path.c_str());
}

}  // namespace
