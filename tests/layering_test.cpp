// core/, strategies/ and the front end must not name SimGrid, CUDA or NCCL, and each folder
// includes only the folders below it (docs/architecture.md, "Folders and what each may
// include").
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
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

// A quoted include of a repository folder: #include "evaluation/x.hpp" names evaluation.
const std::regex kRepositoryInclude(R"(^\s*#\s*include\s*"([A-Za-z0-9_]+)/[^"]*")");

// The repository folder each quoted include of `text` names, one per include line.
std::vector<std::string> included_folders(const std::string& text) {
  std::vector<std::string> folders;
  std::istringstream in(text);
  std::string line;
  std::smatch m;
  while (std::getline(in, line))
    if (std::regex_search(line, m, kRepositoryInclude)) folders.push_back(m[1]);
  return folders;
}

// "file: folder" for every include under `dir` of a repository folder not in `allowed`.
std::vector<std::string> includes_outside(const std::string& dir,
                                          const std::set<std::string>& allowed) {
  std::vector<std::string> hits;
  const auto root = std::filesystem::path(SYMMESH_SOURCE_DIR) / dir;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path());
    std::stringstream ss;
    ss << in.rdbuf();
    for (const auto& folder : included_folders(ss.str()))
      if (!allowed.count(folder)) hits.push_back(entry.path().string() + ": " + folder + "/");
  }
  return hits;
}

std::string listed(const std::vector<std::string>& hits) {
  std::string all;
  for (const auto& h : hits) all += "  " + h + "\n";
  return all;
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
  for (const char* dir :
       {"core", "strategies", "scenario", "evaluation", "reports", "tools/cli", "python"}) {
    const auto hits = scan(std::filesystem::path(SYMMESH_SOURCE_DIR) / dir);
    EXPECT_TRUE(hits.empty()) << dir << " includes a backend header:\n"
                              << [&] {
                                   std::string all;
                                   for (const auto& h : hits) all += "  " + h + "\n";
                                   return all;
                                 }();
  }
}

TEST(Layering, FolderDetectorNamesTheFolderOfEachQuotedInclude) {
  EXPECT_EQ(included_folders("#include \"tools/cli/x.hpp\"\n  #  include \"reports/y.hpp\"\n"),
            (std::vector<std::string>{"tools", "reports"}));
  EXPECT_TRUE(included_folders("#include <nlohmann/json.hpp>\n// #include \"tools/x.hpp\"\n"
                               "#include \"local.hpp\"\n")
                  .empty());
}

// reports/ writes what the libraries below it computed: it includes them and itself only.
TEST(Layering, ReportsIncludeOnlyTheLibrariesBelowThem) {
  const auto hits =
      includes_outside("reports", {"core", "strategies", "scenario", "evaluation", "reports"});
  EXPECT_TRUE(hits.empty()) << "reports/ includes another folder:\n" << listed(hits);
}

// The front ends (tools/ and python/) include reports/; the folders below them include only
// each other — neither reports/ nor tools/ — and reports/ and python/ no command-line code.
TEST(Layering, NothingBelowTheFrontEndsIncludesReportsOrTools) {
  const std::set<std::string> below{"core", "strategies", "sim", "hw", "scenario", "evaluation"};
  for (const std::string& dir : below) {
    const auto hits = includes_outside(dir, below);
    EXPECT_TRUE(hits.empty()) << dir << "/ includes a front end's folder:\n" << listed(hits);
  }
  for (const std::string dir : {"reports", "python"}) {
    std::vector<std::string> tools;
    for (const auto& h : includes_outside(dir, {}))
      if (h.ends_with(": tools/")) tools.push_back(h);
    EXPECT_TRUE(tools.empty()) << dir << "/ includes the command line's code:\n" << listed(tools);
  }
}
