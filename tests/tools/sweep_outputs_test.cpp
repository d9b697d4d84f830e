// A sweep's outputs replace the previous set whole or not at all: staged, then renamed
// together (tools/cli/atomic_file.hpp, StagedOutputs); a second sweep into the same folder
// is refused while one runs; an image gnuplot left incomplete is not kept.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "tests/tools/sweep_test_support.hpp"
#include "tools/cli/sweep_plots.hpp"

namespace {

using namespace symmesh::testing;
using ::testing::HasSubstr;

std::map<std::string, std::string> files_of(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& entry : fs::directory_iterator(dir))
    out[entry.path().filename().string()] = read_file(entry.path().string());
  return out;
}

TEST(SweepOutputs, AFailureWhileWritingLeavesThePreviousSetWhole) {
  // A first sweep (the quickstart on one node) writes a complete set. The second, of a
  // changed scenario, runs under a file-size limit of 16 KiB: its larger outputs
  // (results.json, ~36 KB) cannot be written. The shell leaves SIGXFSZ at its default,
  // which would kill symmesh mid-write; symmesh ignores it, so the write fails with EFBIG.
  // It must fail (exit 2, naming the file) and leave exactly the first set, with no
  // temporary beside it.
  const std::string prlimit = "/usr/bin/prlimit";
  if (!fs::exists(prlimit)) GTEST_SKIP() << "no " << prlimit << " (util-linux)";
  const auto dir = fresh_dir("staged");
  const std::string path = "PATH=" + path_without_gnuplot();
  ASSERT_EQ(
      run_sweep_shell(path, quickstart_on_one_node("staged") + " --out " + dir.string()).exit_code,
      0);
  const auto before = files_of(dir);
  const std::string changed = quickstart_with(
      "staged_changed", "sweep: {nodes: [1], mesh: auto}\nobjective: {max_time: 2.5 ms}\n");
  const auto r = run_sweep_shell(path + " " + prlimit + " --fsize=16384",
                                 changed + " --out " + dir.string());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("File too large"));
  EXPECT_EQ(files_of(dir), before);
}

// Whether process `pid` holds a flock on `dir` (/proc/locks: "1: FLOCK  ADVISORY  WRITE
// <pid> <major>:<minor>:<inode> 0 EOF"). Read, not probed: taking the lock to see whether it
// is free could make the sweep under test find it taken.
bool holds_folder_lock(pid_t pid, const fs::path& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) return false;
  std::ifstream locks("/proc/locks");
  for (std::string line; std::getline(locks, line);) {
    std::istringstream in(line);
    std::string id, kind, mode, access, device;
    pid_t owner = 0;
    if (!(in >> id >> kind >> mode >> access >> owner >> device) || kind != "FLOCK") continue;
    if (owner == pid && device.substr(device.rfind(':') + 1) == std::to_string(st.st_ino))
      return true;
  }
  return false;
}

TEST(SweepOutputs, ASecondSweepIntoTheSameFolderIsRefusedWhileOneRuns) {
  const auto dir = fresh_dir("locked");
  // A 512-GPU point keeps the first sweep busy for seconds.
  const pid_t first =
      spawn_symmesh({"sweep", all_reduce_scenario("locked_slow", 2), "--out", dir.string()});
  ASSERT_GE(first, 0);
  // The lock is taken before any point runs: wait until the first sweep holds it (a
  // sanitizer build takes a while to start), then start the second, a sweep that would
  // take well under a second.
  bool locked = false;
  for (int i = 0; i < 600 && !locked && process_alive(first); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    locked = holds_folder_lock(first, dir);
  }
  RunResult second;
  if (locked) second = run_sweep_shell("", kScenarioDir + "pingpong.yaml --out " + dir.string());
  kill(first, SIGKILL);
  waitpid(first, nullptr, 0);
  ASSERT_TRUE(locked) << "the first sweep never locked " << dir;
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_THAT(second.err, HasSubstr("another symmesh sweep is writing into '" + dir.string()));
  // Killed before its commit, the first sweep wrote nothing; refused, the second neither.
  EXPECT_TRUE(files_of(dir).empty());
}

TEST(SweepOutputs, AnImageIsWholeOnlyWithItsEnd) {
  const auto dir = fresh_dir("images");
  const auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream((dir / name).string(), std::ios::binary) << bytes;
    return (dir / name).string();
  };
  using symmesh::cli::image_is_complete;
  EXPECT_TRUE(image_is_complete(write("a.svg", "<svg>\n<g/>\n</svg>\n\n"), ".svg"));
  EXPECT_FALSE(image_is_complete(write("b.svg", "<svg>\n<g/>\n"), ".svg"));  // cut short
  EXPECT_FALSE(image_is_complete(write("c.svg", ""), ".svg"));
  // PNG: the 8-byte signature first, the IEND chunk (length 0, "IEND", CRC AE 42 60 82)
  // last (the PNG specification, sections 5.2 and 11.2.5).
  const std::string signature("\x89PNG\r\n\x1a\n", 8);
  const std::string iend("\0\0\0\0IEND\xAE\x42\x60\x82", 12);
  EXPECT_TRUE(image_is_complete(write("a.png", signature + "IHDR..." + iend), ".png"));
  EXPECT_FALSE(image_is_complete(write("b.png", signature + "IHDR..."), ".png"));
  EXPECT_FALSE(image_is_complete(write("c.png", "GIF89a" + iend), ".png"));
}

}  // namespace
