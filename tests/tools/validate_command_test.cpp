// symmesh validate: every shipped scenario is valid; a broken one is named with its place.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "core/text.hpp"
#include "tests/tools/run_symmesh.hpp"

namespace {

using symmesh::testing::run_symmesh;
using ::testing::HasSubstr;

// The shipped scenarios (scenarios/*.yaml), by file name, sorted.
std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> names;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(SYMMESH_SOURCE_DIR) + "/scenarios"))
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(ValidateCommand, TheShippedScenariosAreFound) { ASSERT_GE(shipped_scenarios().size(), 7u); }

// One test per shipped scenario (validating a whole model's step takes seconds, a minute or
// more under ASan: one test of them all could pass CTest's 300 s). Several files in one
// command, and the summary line, are ChecksEveryFileAndCountsTheValidOnes's.
class ShippedScenario : public ::testing::TestWithParam<std::string> {};

TEST_P(ShippedScenario, IsValid) {
  const auto r =
      run_symmesh("validate " + std::string(SYMMESH_SOURCE_DIR) + "/scenarios/" + GetParam());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // One file: its line alone (the summary line is for several).
  EXPECT_THAT(r.out, HasSubstr(GetParam() + ": valid"));
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Shipped, ShippedScenario, ::testing::ValuesIn(shipped_scenarios()),
                         [](const auto& info) {
                           std::string name = info.param.substr(0, info.param.size() - 5);
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

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

TEST(ValidateCommand, ChecksEveryFileAndCountsTheValidOnes) {
  // A bad file between two good ones, and a missing one last: both good files are still
  // checked, each bad one gets its own error naming it, and the exit code is 2.
  const auto bad =
      (std::filesystem::temp_directory_path() / "symmesh_validate_bad_middle.yaml").string();
  std::ofstream(bad) << "name: bad\ncluster: clusters/dgx-h100.yaml\nmesh: {shape: [8]}\n"
                        "workload:\n  - {name: x, op: mm, a: [8, 16], b: [32, 8], "
                        "a_placements: [R], b_placements: [R]}\n";
  const std::string good = std::string(SYMMESH_SOURCE_DIR) + "/scenarios/pingpong.yaml";
  const std::string missing = "/nonexistent/symmesh_validate_missing.yaml";
  const auto r = run_symmesh("validate " + good + " " + bad + " " + good + " " + missing);
  EXPECT_EQ(r.exit_code, 2);
  size_t valid_lines = 0;
  for (size_t at = r.out.find(": valid"); at != std::string::npos;
       at = r.out.find(": valid", at + 1))
    ++valid_lines;
  EXPECT_EQ(valid_lines, 2u);
  EXPECT_THAT(r.out, HasSubstr("2 of 4 files valid\n"));
  EXPECT_THAT(r.err, HasSubstr("symmesh_validate_bad_middle.yaml:5:"));
  EXPECT_THAT(r.err, HasSubstr("inner dims"));
  EXPECT_THAT(r.err, HasSubstr("symmesh_validate_missing.yaml"));
  std::remove(bad.c_str());
}

}  // namespace

namespace {

std::string write_scenario(const std::string& name, const std::string& body) {
  const auto path =
      (std::filesystem::temp_directory_path() / ("symmesh_" + name + ".yaml")).string();
  std::ofstream(path) << body;
  return path;
}

TEST(ValidateCommand, AgreesWithSimulateThatAnOpTooLargeForTheGpuIsRefused) {
  // mm of a [262144, 262144] bf16 (128 GiB alone) on 141 GB H200s: every rank holds the
  // replicated inputs (R x R -> R is the only strategy DTensor keeps from replicated
  // inputs): a 128 GiB, b [262144, 32768] 16 GiB, out [262144, 32768] 16 GiB = 160 GiB.
  const auto mm =
      write_scenario("too_big_mm",
                     "name: too-big\ncluster: clusters/dgx-h200.yaml\nmesh: {shape: [8]}\n"
                     "workload:\n  - {name: big, op: mm, a: [262144, 262144], b: [262144, 32768], "
                     "a_placements: [R], b_placements: [R]}\n");
  // A put of 999999 TiB on 80 GiB GPUs: the source buffer and the symmetric destination.
  const auto put = write_scenario(
      "too_big_put",
      "name: too-big-put\ncluster: clusters/dgx-h100.yaml\nmesh: {shape: [8]}\n"
      "workload:\n  - {name: huge, op: put_signal, bytes: 999999 TiB, src: 0, dst: 1}\n");
  for (const auto& [path, need, gpu] :
       {std::tuple{mm, "needs 160.00 GiB per GPU", "H200-SXM has 131.32 GiB"},
        std::tuple{put, "needs 1999998.00 TiB per GPU", "H100-SXM has 80.00 GiB"}}) {
    SCOPED_TRACE(path);
    for (const char* command : {"validate ", "simulate "}) {
      const auto r = run_symmesh(command + path);
      EXPECT_EQ(r.exit_code, 2) << command;
      EXPECT_THAT(r.err, HasSubstr(need)) << command;
      EXPECT_THAT(r.err, HasSubstr(gpu)) << command;
      EXPECT_THAT(r.err, HasSubstr(":5:5")) << command;  // the op's place in the file
    }
  }
}

TEST(ValidateCommand, AVersionTwoStepIsValidatedWithItsMemoryPeak) {
  const auto r = run_symmesh("validate " + std::string(SYMMESH_SOURCE_DIR) +
                             "/scenarios/llama3-70b-layer-train.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // 5 matmuls, their 10 dgrads and wgrads, an Adam update for each of the 5 weights, and
  // two gradient buckets (strategies/gradient_buckets.hpp: 40 M elements over dp 4). Each
  // weight is split over tp 8, so a rank's gradients are, in the order the backward makes
  // them, w_down 29.4 M and w_up 29.4 M (58.7 M: the first bucket full), then w_gate 29.4 M,
  // w_o 8.4 M and w_qkv 10.5 M (48.2 M: the second).
  EXPECT_THAT(r.out, HasSubstr("22 ops (forward, backward and optimizer step), peak "));
  // The plan's closed-form step, which simulate prints beside what it measures.
  const auto simulated = run_symmesh("simulate --json " + std::string(SYMMESH_SOURCE_DIR) +
                                     "/scenarios/llama3-70b-layer-train.yaml");
  ASSERT_EQ(simulated.exit_code, 0) << simulated.err;
  const double priced_ms =
      nlohmann::json::parse(simulated.out)["step"]["priced_step_s"].get<double>() * 1e3;
  EXPECT_THAT(r.out, HasSubstr("; step priced " + symmesh::format_fixed(priced_ms, 3) + " ms"));
}

}  // namespace
