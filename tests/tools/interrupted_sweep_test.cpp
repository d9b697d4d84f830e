// An interrupted sweep leaves nothing behind (tools/cli/interrupt_cleanup.hpp). The sweep is
// held at a known moment — its outputs staged as temporaries, gnuplot running — by a fake
// gnuplot on PATH that records its pid and sleeps; the test then signals symmesh.
//   SIGINT, SIGTERM: no temporary is left, the previous outputs are intact, gnuplot is
//     killed, and symmesh dies by that signal (as a shell expects);
//   SIGKILL: no handler runs, so the temporaries stay (beside intact outputs: a sweep only
//     ever renames whole files into place), and gnuplot still dies (PR_SET_PDEATHSIG).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/tools/sweep_test_support.hpp"

namespace {

using namespace symmesh::testing;

const std::string kValid = std::string(SYMMESH_SOURCE_DIR) + "/tests/tools/bad_input/valid.yaml";

std::vector<std::string> temporaries_in(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().string().ends_with(".tmp")) out.push_back(entry.path().string());
  return out;
}

// A gnuplot that writes its pid to `pid_file` and sleeps a minute (exec: the pid stays).
fs::path fake_gnuplot(const fs::path& dir, const fs::path& pid_file) {
  const fs::path bin = dir / "bin";
  fs::create_directories(bin);
  const fs::path script = bin / "gnuplot";
  std::ofstream(script) << "#!/bin/sh\necho $$ > '" << pid_file.string() << "'\nexec sleep 60\n";
  chmod(script.c_str(), 0755);
  return bin;
}

// Starts a sweep into `out` with the fake gnuplot and waits until gnuplot runs; returns
// symmesh's pid, and gnuplot's in `gnuplot`.
pid_t sweep_held_in_gnuplot(const fs::path& dir, const fs::path& out, pid_t& gnuplot) {
  const fs::path pid_file = dir / "gnuplot.pid";
  const fs::path bin = fake_gnuplot(dir, pid_file);
  const pid_t symmesh = spawn_symmesh({"sweep", kValid, "--out", out.string()},
                                      {{"PATH", bin.string() + ":/usr/bin:/bin"}});
  gnuplot = -1;
  for (int i = 0; i < 2000 && gnuplot <= 0; ++i) {  // at most 20 s
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::ifstream in(pid_file);
    if (!(in >> gnuplot)) gnuplot = -1;
  }
  return symmesh;
}

class InterruptedSweep : public ::testing::TestWithParam<int> {};

TEST_P(InterruptedSweep, LeavesNoTemporaryNorHelperAndKeepsThePreviousOutputs) {
  const int sig = GetParam();
  const fs::path dir = fresh_dir("interrupted-sweep-" + std::to_string(sig));
  const fs::path out = dir / "out";
  // A finished sweep first (no gnuplot: text outputs only).
  ASSERT_EQ(
      run_symmesh("sweep " + kValid + " --out " + out.string(), "PATH=/nonexistent").exit_code, 0);
  const std::string summary = read_file((out / "summary.md").string());
  const std::string results = read_file((out / "results.json").string());
  ASSERT_FALSE(summary.empty());

  pid_t gnuplot = -1;
  const pid_t symmesh = sweep_held_in_gnuplot(dir, out, gnuplot);
  ASSERT_GT(gnuplot, 0) << "the sweep never started gnuplot";
  // The moment the test is about: the new outputs are staged beside the old ones.
  EXPECT_FALSE(temporaries_in(out).empty());
  kill(symmesh, sig);
  int status = 0;
  waitpid(symmesh, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), sig);  // the signal is re-raised, not turned into an exit code

  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !process_alive(gnuplot);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!gone) kill(gnuplot, SIGKILL);  // leave nothing running, whatever the outcome
  EXPECT_TRUE(gone) << "gnuplot " << gnuplot << " outlived symmesh";
  EXPECT_EQ(read_file((out / "summary.md").string()), summary);
  EXPECT_EQ(read_file((out / "results.json").string()), results);
  if (sig == SIGKILL)
    EXPECT_FALSE(temporaries_in(out).empty());  // nothing could clean them: said above
  else
    EXPECT_TRUE(temporaries_in(out).empty()) << temporaries_in(out).front();
}

INSTANTIATE_TEST_SUITE_P(Signals, InterruptedSweep, ::testing::Values(SIGINT, SIGTERM, SIGKILL));

TEST(InterruptedSweep, AFolderTheSweepMadeIsRemovedAgain) {
  const fs::path dir = fresh_dir("interrupted-sweep-new-folder");
  const fs::path out = dir / "new-out";
  pid_t gnuplot = -1;
  const pid_t symmesh = sweep_held_in_gnuplot(dir, out, gnuplot);
  ASSERT_GT(gnuplot, 0) << "the sweep never started gnuplot";
  EXPECT_TRUE(fs::is_directory(out));
  kill(symmesh, SIGTERM);
  int status = 0;
  waitpid(symmesh, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  for (int i = 0; i < 100 && process_alive(gnuplot); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (process_alive(gnuplot)) kill(gnuplot, SIGKILL);
  EXPECT_FALSE(fs::exists(out)) << "the interrupted sweep left " << out;
}

}  // namespace
