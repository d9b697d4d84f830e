// A gnuplot that never exits does not hold a sweep forever (tools/cli/gnuplot_child.hpp):
// past SYMMESH_GNUPLOT_TIME_LIMIT it is killed with what it started (its process group),
// and the sweep ends as for any gnuplot failure: exit 0, its text outputs and the plots'
// data and scripts written, no image, a note saying why, nothing left running or staged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>

#include "tests/tools/sweep_test_support.hpp"

namespace {

using namespace symmesh::testing;
using ::testing::HasSubstr;

const std::string kValid = std::string(SYMMESH_SOURCE_DIR) + "/tests/tools/bad_input/valid.yaml";

pid_t pid_in(const fs::path& file) {
  pid_t pid = -1;
  std::ifstream(file) >> pid;
  return pid;
}

TEST(GnuplotTimeLimit, AGnuplotThatNeverExitsIsKilledWithItsGroupAndTheSweepGoesOn) {
  const fs::path dir = fresh_dir("gnuplot-hangs");
  const fs::path bin = dir / "bin";
  fs::create_directories(bin);
  // It starts a child of its own, then waits for it: both must go.
  std::ofstream(bin / "gnuplot") << "#!/bin/sh\nsleep 300 &\necho $! > '"
                                 << (dir / "child.pid").string() << "'\necho $$ > '"
                                 << (dir / "gnuplot.pid").string() << "'\nwait\n";
  chmod((bin / "gnuplot").c_str(), 0755);
  const fs::path out = dir / "out";
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_sweep_shell(
      "PATH=" + bin.string() + ":/usr/bin:/bin SYMMESH_GNUPLOT_TIME_LIMIT=1",
      kValid + " --out " + out.string());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("gnuplot did not finish step-time.gp within 1 s "
                               "(SYMMESH_GNUPLOT_TIME_LIMIT) and was killed"));
  EXPECT_LT(seconds, 30.0);
  for (const char* name : {"summary.md", "results.json", "step-time.gp", "breakdown.dat"})
    EXPECT_TRUE(fs::exists(out / name)) << name;
  for (const auto& entry : fs::directory_iterator(out)) {
    const std::string name = entry.path().filename().string();
    EXPECT_FALSE(name.ends_with(".svg") || name.ends_with(".png") || name.ends_with(".tmp"))
        << "left: " << name;
  }
  const pid_t gnuplot = pid_in(dir / "gnuplot.pid"), child = pid_in(dir / "child.pid");
  ASSERT_GT(gnuplot, 0) << "the fake gnuplot never ran";
  ASSERT_GT(child, 0);
  EXPECT_FALSE(process_alive(gnuplot));
  EXPECT_FALSE(process_alive(child)) << "gnuplot's child outlived it";
  if (process_alive(child)) kill(child, SIGKILL);
}

TEST(GnuplotTimeLimit, AMalformedLimitIsBadInput) {
  const fs::path dir = fresh_dir("gnuplot-limit-bad");
  const auto r = run_sweep_shell("SYMMESH_GNUPLOT_TIME_LIMIT=soon",
                                 kValid + " --out " + (dir / "out").string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("SYMMESH_GNUPLOT_TIME_LIMIT"));
}

}  // namespace
