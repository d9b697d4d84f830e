// A simulation runs in a forked child (sim/forked_run.hpp). When symmesh itself is killed
// — SIGKILL, which no handler sees, or SIGTERM — the child must not run on as an orphan
// (it may hold gigabytes). A 512-GPU scenario keeps the child busy for seconds; the test
// kills the parent once the child exists and checks, with /proc, that the child is gone.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/tools/sweep_test_support.hpp"

namespace {

using namespace symmesh::testing;

// The pids whose parent is `parent`, from /proc/<pid>/stat (field 4).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const size_t close = line.rfind(')');  // the command may hold spaces
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) out.push_back(static_cast<pid_t>(std::stoi(name)));
  }
  return out;
}

class OrphanedSimulation : public ::testing::TestWithParam<int> {};

TEST_P(OrphanedSimulation, TheChildDiesWithSymmesh) {
  const pid_t symmesh = spawn_symmesh({"simulate", all_reduce_scenario("slow", 4)});
  ASSERT_GE(symmesh, 0);
  // Wait (at most 20 s) for the simulation's child to exist.
  std::vector<pid_t> simulation;
  for (int i = 0; i < 2000 && simulation.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    simulation = children_of(symmesh);
  }
  ASSERT_EQ(simulation.size(), 1u) << "symmesh did not fork its simulation";
  kill(symmesh, GetParam());
  int status = 0;
  waitpid(symmesh, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  // The child goes within a second (it would otherwise simulate on for seconds).
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = !process_alive(simulation[0]);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (!gone) kill(simulation[0], SIGKILL);  // leave nothing running, whatever the outcome
  EXPECT_TRUE(gone) << "the simulation " << simulation[0] << " outlived symmesh";
}

INSTANTIATE_TEST_SUITE_P(Signals, OrphanedSimulation, ::testing::Values(SIGKILL, SIGTERM, SIGINT));

}  // namespace
