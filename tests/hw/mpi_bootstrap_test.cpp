// The MPI bootstrap of multi-node runs across three real processes under mpirun, on any
// machine: tests/hw/mpi_bootstrap_ranks.cpp checks each rank's side. SKIPPED without
// Open MPI's mpirun or when hw/ was built without OpenMPI.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "hw/toolkit_info.hpp"

namespace symmesh::hw {
namespace {

struct Ran {
  int exit_code = -1;
  std::string out;
};

Ran run(const std::string& command) {
  char path[] = "/tmp/symmesh_mpi_bootstrap_XXXXXX";
  const int fd = mkstemp(path);
  close(fd);
  const int status = std::system((command + " >" + path + " 2>&1 </dev/null").c_str());
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  std::remove(path);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

TEST(MpiBootstrap, ThreeProcessesShareTheIdAgreeAndGather) {
  if (!mpi_bootstrap_built()) GTEST_SKIP() << "hw/ was built without OpenMPI";
  const Ran version = run("mpirun --version");
  if (version.exit_code != 0 || version.out.find("Open MPI") == std::string::npos)
    GTEST_SKIP() << "no Open MPI mpirun on PATH";
  const Ran r =
      run("timeout --kill-after=10 120 mpirun --allow-run-as-root --oversubscribe --mca btl "
          "self,vader -np 3 " SYMMESH_HW_MPI_RANKS);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_NE(r.out.find("rank " + std::to_string(rank) + " ok\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FAILED"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace symmesh::hw
