// `symmesh run --dry-run` on a plan over several nodes says how it starts (mpirun, one
// process per GPU) or, in a build whose hw/ has no OpenMPI, that it cannot run it; a plan on
// one node gets no such note. Which of the two is expected comes from hw/'s compile-time
// facts (hw/toolkit_info.hpp), not from the command.
#include <gtest/gtest.h>

#include "tests/tools/run_symmesh.hpp"
#ifdef SYMMESH_HAVE_HW
#include "hw/toolkit_info.hpp"
#endif

namespace symmesh::testing {
namespace {

const std::string kScenarios = std::string(SYMMESH_SOURCE_DIR) + "/scenarios/";

TEST(RunDryRunNodes, APlanOverTwoNodesSaysHowItStartsOrThatItCannot) {
#ifndef SYMMESH_HAVE_HW
  GTEST_SKIP() << "no hardware backend in this build: --dry-run is refused (hw_commands_test)";
#else
  // mesh-2x8-mm.yaml: 2 DGX H100 nodes of 8 GPUs, a 2x8 mesh: 16 ranks.
  const RunResult r = run_symmesh("run " + kScenarios + "mesh-2x8-mm.yaml --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string expected =
      hw::mpi_bootstrap_built()
          ? "note: 16 ranks over 2 nodes of 8 GPUs: start it with mpirun -np 16 (one process "
            "per GPU, 8 per node)"
          : "note: 16 ranks over 2 nodes of 8 GPUs, but this symmesh was built without OpenMPI";
  EXPECT_NE(r.out.find(expected), std::string::npos) << r.out.substr(r.out.size() - 400);
#endif
}

TEST(RunDryRunNodes, APlanOnOneNodeHasNoNote) {
#ifndef SYMMESH_HAVE_HW
  GTEST_SKIP() << "no hardware backend in this build";
#else
  const RunResult r = run_symmesh("run " + kScenarios + "quickstart.yaml --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("note: "), std::string::npos) << r.out;
#endif
}

}  // namespace
}  // namespace symmesh::testing
