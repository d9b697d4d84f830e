// `mpirun -np 3 symmesh sweep` against the same sweep run locally: the expectation is the
// local run's output, computed by the other path (one process, every point); and the
// failures of one process stopping every process, said once. Tests that need Open MPI's
// mpirun, or a symmesh built with MPI, report SKIPPED without them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "tests/tools/sweep_test_support.hpp"

namespace symmesh::testing {
namespace {

// `command` through the shell, its stdout and stderr captured.
RunResult run_shell(const std::string& command) {
  const fs::path out = fresh_dir("mpi_shell") / "out.txt";
  const fs::path err = out.parent_path() / "err.txt";
  const int status = std::system(
      ("( " + command + " ) >" + out.string() + " 2>" + err.string() + " </dev/null").c_str());
  RunResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_file(out.string());
  result.err = read_file(err.string());
  return result;
}

// Whether Open MPI's mpirun is on PATH (another MPI's takes other options).
bool have_open_mpi_mpirun() {
  const RunResult r = run_shell("mpirun --version");
  return r.exit_code == 0 && r.out.find("Open MPI") != std::string::npos;
}

// mpirun as root (CI containers), more processes than cores, shared memory only; killed if
// it ever hangs. `processes` follows -np: "3 BINARY …" or an MPMD list.
std::string mpirun_command(const std::string& processes) {
  return "timeout --kill-after=10 240 mpirun --allow-run-as-root --oversubscribe --mca btl "
         "self,vader -np " +
         processes;
}

std::set<std::string> file_names(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir)) out.insert(entry.path().filename());
  return out;
}

#ifdef SYMMESH_MPI_BUILT
constexpr bool kMpiBuilt = true;
#else
constexpr bool kMpiBuilt = false;
#endif

#define SKIP_WITHOUT_MPI()                                                                  \
  if (!kMpiBuilt) GTEST_SKIP() << "this symmesh was built without MPI (libsymmesh_mpi.so)"; \
  if (!have_open_mpi_mpirun()) GTEST_SKIP() << "no Open MPI mpirun on PATH"

TEST(MpiSweep, ThreeProcessesPrintAndWriteWhatALocalSweepDoes) {
  SKIP_WITHOUT_MPI();
  const std::string scenario = kScenarioDir + "quickstart.yaml";  // 15 points, ~2 s
  const fs::path local = fresh_dir("mpi_local"), distributed = fresh_dir("mpi_distributed");
  // The same relative --out, so that the "Outputs in out/" lines match too.
  const RunResult alone = run_sweep_shell("cd " + local.string() + " &&", scenario + " --out out");
  ASSERT_EQ(alone.exit_code, 0) << alone.err;
  const RunResult shared = run_shell("cd " + distributed.string() + " && " +
                                     mpirun_command(std::string("3 ") + SYMMESH_BINARY) +
                                     " sweep " + scenario + " --out out");
  ASSERT_EQ(shared.exit_code, 0) << shared.err;
  EXPECT_EQ(shared.out, alone.out);  // the answer line and tables, printed once
  EXPECT_EQ(shared.err, alone.err);  // nothing more from the other processes
  ASSERT_NE(alone.out.find("Answer: 4 nodes (32 GPUs), mesh 8x4"), std::string::npos) << alone.out;
  const std::set<std::string> names = file_names(local / "out");
  EXPECT_EQ(file_names(distributed / "out"), names);
  EXPECT_TRUE(names.count("best-trace.json"));
  // Every file byte for byte: the per-point times of results.csv/.json, the summary, the
  // plots and the best point's trace, which process 1 or 2 may have simulated.
  for (const std::string& name : names)
    EXPECT_EQ(read_file(distributed / "out" / name), read_file(local / "out" / name)) << name;
  EXPECT_GT(read_file(distributed / "out" / "best-trace.json").size(), 100u);
}

TEST(MpiSweep, AProcessThatCannotSimulateStopsEveryProcessWithItsError) {
  SKIP_WITHOUT_MPI();
  // MPMD: process 1 alone finds no simulation module, so it fails in its share of the points
  // while 0 and 2 evaluate theirs; every process must stop, rank 0 say why, once.
  const fs::path dir = fresh_dir("mpi_failure");
  const std::string sweep = std::string(SYMMESH_BINARY) + " sweep " + kScenarioDir +
                            "quickstart.yaml --out " + (dir / "out").string();
  const RunResult r =
      run_shell(mpirun_command("1 " + sweep +
                               " : -np 1 -x "
                               "SYMMESH_SIM_MODULE=/nonexistent/libsymmesh_sim.so " +
                               sweep + " : -np 1 " + sweep));
  EXPECT_EQ(r.exit_code, 1) << r.err;  // Unavailable: cannot run here, not bad input
  const std::string said =
      "symmesh: error: process 1: the simulation module is missing (looked in "
      "/nonexistent/libsymmesh_sim.so;";
  EXPECT_NE(r.err.find(said), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(said), r.err.rfind(said)) << "said more than once:\n" << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(dir / "out")) << "the folder rank 0 made is removed again";
}

TEST(MpiSweep, BadInputOnOneProcessIsBadInputForAll) {
  SKIP_WITHOUT_MPI();
  const fs::path dir = fresh_dir("mpi_bad_input");
  const std::string sweep = std::string(SYMMESH_BINARY) + " sweep ";
  const std::string out = " --out " + (dir / "out").string();
  const std::string good = kScenarioDir + "quickstart.yaml";
  const RunResult r = run_shell(mpirun_command("2 " + sweep + good + out + " : -np 1 " + sweep +
                                               (dir / "missing.yaml").string() + out));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("symmesh: error: process 2: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("missing.yaml"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out"));
}

// Processes given different scenarios — another file, or the same relative path holding
// other bytes in another folder (another host) — would merge their points into a wrong
// answer: refused before any point runs, naming the process that differs.
TEST(MpiSweep, ProcessesThatSweepDifferentInputsAreRefused) {
  SKIP_WITHOUT_MPI();
  const fs::path dir = fresh_dir("mpi_different_inputs");
  const fs::path a = dir / "a", b = dir / "b";
  fs::create_directories(a);
  fs::create_directories(b);
  const std::string body = read_file(kScenarioDir + "quickstart.yaml");
  const std::string cluster = "cluster: clusters/";
  std::string absolute = body;
  absolute.replace(absolute.find(cluster), cluster.size(),
                   "cluster: " + kScenarioDir + "clusters/");
  std::ofstream(a / "s.yaml") << absolute;
  std::string changed = absolute;
  changed.replace(changed.find("3.5 ms"), 6, "2.5 ms");
  std::ofstream(b / "s.yaml") << changed;
  const std::string out = " --out " + (dir / "out").string();
  const std::string sweep = std::string(SYMMESH_BINARY) + " sweep s.yaml" + out;
  const RunResult r = run_shell(mpirun_command("1 -wdir " + a.string() + " " + sweep +
                                               " : -np 1 -wdir " + b.string() + " " + sweep));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("symmesh: error: process 1: it sweeps other inputs than process 0"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(dir / "out"));
  // The same bytes in both folders: agreed, and swept.
  std::ofstream(b / "s.yaml") << absolute;
  const RunResult same = run_shell(mpirun_command("1 -wdir " + a.string() + " " + sweep +
                                                  " : -np 1 -wdir " + b.string() + " " + sweep));
  EXPECT_EQ(same.exit_code, 0) << same.err;
}

TEST(MpiSweep, APlainSweepNeverLoadsMpi) {
  // The launcher is detected from its variables only; without them libmpi is not mapped.
  // The sweep runs unchanged (the quickstart on one node).
  const fs::path dir = fresh_dir("mpi_plain");
  const RunResult r =
      run_sweep_shell("LD_DEBUG=files", quickstart_on_one_node("mpi_plain") + " --out " +
                                            (dir / "out").string() + " --jobs 1");
  ASSERT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  EXPECT_EQ(r.err.find("libmpi"), std::string::npos);
  EXPECT_EQ(r.err.find("libsymmesh_mpi"), std::string::npos);
  EXPECT_NE(r.err.find("libsymmesh_sim.so"), std::string::npos) << "LD_DEBUG said nothing";
}

TEST(MpiSweep, UnderALauncherWithoutMpiItRefusesOnceInsteadOfRunningCopies) {
  if (kMpiBuilt) GTEST_SKIP() << "this symmesh has MPI; the refusal is for builds without it";
  // What Open MPI's mpirun sets for process 0 and 1 of 3 (no mpirun needed to see it).
  const fs::path dir = fresh_dir("mpi_not_built");
  const std::string args = kScenarioDir + "quickstart.yaml --out " + (dir / "out").string();
  const RunResult rank0 =
      run_sweep_shell("OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_RANK=0 PMIX_RANK=0", args);
  EXPECT_EQ(rank0.exit_code, 1);
  EXPECT_NE(rank0.err.find("built without MPI"), std::string::npos) << rank0.err;
  EXPECT_EQ(rank0.out, "");
  const RunResult rank1 =
      run_sweep_shell("OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_RANK=1 PMIX_RANK=1", args);
  // Said once, by process 0, whose exit code is mpirun's; the others end quietly.
  EXPECT_EQ(rank1.exit_code, 0);
  EXPECT_EQ(rank1.err, "");
  EXPECT_EQ(rank1.out, "");
  EXPECT_FALSE(fs::exists(dir / "out"));
}

}  // namespace
}  // namespace symmesh::testing
