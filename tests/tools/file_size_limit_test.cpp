// Under a file-size limit (ulimit -f) a write past it is an error symmesh reports, not a
// SIGXFSZ that kills it mid-write: exit 2 naming the output, the previous file whole, no
// temporary left. The shell here leaves SIGXFSZ at its default, as a user's shell does.
// (The sweep's set of outputs: tests/tools/sweep_outputs_test.cpp.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/tools/run_symmesh.hpp"

namespace {

namespace fs = std::filesystem;
using namespace symmesh::testing;
using ::testing::HasSubstr;

const std::string kScenarios = std::string(SYMMESH_SOURCE_DIR) + "/scenarios/";

TEST(FileSizeLimit, ATraceTooLargeIsReportedAndThePreviousOneKept) {
  const std::string prlimit = "/usr/bin/prlimit";
  if (!fs::exists(prlimit)) GTEST_SKIP() << "no " << prlimit << " (util-linux)";
  const fs::path dir = fs::temp_directory_path() / ("symmesh_fsize_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string trace = (dir / "trace.json").string();
  std::ofstream(trace) << "previous\n";
  // The quickstart's trace is about 75 KB; the limit is 8 KiB.
  const auto r = run_symmesh("simulate " + kScenarios + "quickstart.yaml --trace " + trace,
                             prlimit + " --fsize=8192");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--trace"));
  EXPECT_THAT(r.err, HasSubstr("File too large"));
  EXPECT_EQ(read_file(trace), "previous\n");
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(entry.path(), trace) << "left behind";
  }
  EXPECT_EQ(files, 1);
  fs::remove_all(dir);
}

}  // namespace
