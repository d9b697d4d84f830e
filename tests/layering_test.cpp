// core/, strategies/ and the front end must not name SimGrid, CUDA or NCCL
// (docs/architecture.md, "Folders and what each may include").
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

const std::regex kForbiddenInclude(
    R"(^\s*#\s*include\s*[<"](simgrid|cuda|cublas|nccl|curand|cusparse|xbt)[^>"]*[>"])");

std::vector<std::string> forbidden_includes(const std::string& text) {
  std::vector<std::string> hits;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (std::regex_search(line, kForbiddenInclude)) hits.push_back(line);
  return hits;
}

std::vector<std::string> scan(const std::filesystem::path& dir) {
  std::vector<std::string> hits;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path());
    std::stringstream ss;
    ss << in.rdbuf();
    for (const auto& hit : forbidden_includes(ss.str()))
      hits.push_back(entry.path().string() + ": " + hit);
  }
  return hits;
}

}  // namespace

TEST(Layering, DetectorCatchesForbiddenIncludes) {
  // The scanner itself must be able to fail.
  EXPECT_EQ(forbidden_includes("#include <simgrid/s4u.hpp>\n").size(), 1u);
  EXPECT_EQ(forbidden_includes("  #  include \"nccl.h\"\n").size(), 1u);
  EXPECT_EQ(forbidden_includes("#include <cuda_runtime.h>\n#include <vector>\n").size(), 1u);
  EXPECT_TRUE(forbidden_includes("#include <vector>\n// simgrid is not named here\n").empty());
}

// The front-end side too: evaluation/, scenario/ and the CLI reach the backends only
// through core/backend.hpp and the modules (evaluation/backends.hpp), so that a process
// that only plans maps no SimGrid and none but the GPU commands a CUDA library.
TEST(Layering, CoreStrategiesAndTheFrontEndNameNoBackendHeader) {
  for (const char* dir : {"core", "strategies", "scenario", "evaluation", "tools/cli", "python"}) {
    const auto hits = scan(std::filesystem::path(SYMMESH_SOURCE_DIR) / dir);
    EXPECT_TRUE(hits.empty()) << dir << " includes a backend header:\n"
                              << [&] {
                                   std::string all;
                                   for (const auto& h : hits) all += "  " + h + "\n";
                                   return all;
                                 }();
  }
}
