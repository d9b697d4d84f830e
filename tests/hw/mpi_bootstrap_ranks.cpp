// Run by tests/hw/mpi_bootstrap_test.cpp as `mpirun -np 3 hw_mpi_bootstrap_ranks`: each
// process checks the MPI bootstrap (hw/bootstrap.hpp) from its own side, with expectations
// from what mpirun says in the environment (OMPI_COMM_WORLD_RANK, _LOCAL_RANK, _LOCAL_SIZE)
// and from the values the ranks put in, and prints "rank R ok" or what differed. No GPU,
// no CUDA call: the bootstrap moves only the NCCL unique id, agreements and results.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "hw/bootstrap.hpp"

namespace {

int env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : -1;
}

std::vector<std::string> failures;

template <typename A, typename B>
void expect_eq(const A& got, const B& want, const std::string& what) {
  if (!(got == want)) failures.push_back(what);
}

}  // namespace

int main() {
  using namespace symmesh;
  const int rank = env("OMPI_COMM_WORLD_RANK");
  const int world = env("OMPI_COMM_WORLD_SIZE");
  if (rank < 0 || world != 3) {
    std::cerr << "run me as mpirun -np 3 "
              << "hw_mpi_bootstrap_ranks\n";
    return 2;
  }
  {
    const std::unique_ptr<hw::Bootstrap> boot = hw::make_mpi_bootstrap_if_launched(3);
    if (!boot) {
      std::cerr << "rank " << rank << ": no MPI bootstrap under mpirun\n";
      return 1;
    }
    // Rank to node: one process per rank; its GPU is its local rank on its node.
    expect_eq(boot->world_size(), 3, "world_size");
    expect_eq(boot->local_ranks(), std::vector<int>{rank}, "local_ranks");
    expect_eq(boot->device_of(rank), env("OMPI_COMM_WORLD_LOCAL_RANK"), "device_of(own rank)");
    expect_eq(boot->device_of((rank + 1) % 3), -1, "device_of(another process's rank)");
    expect_eq(boot->ranks_on_node(), env("OMPI_COMM_WORLD_LOCAL_SIZE"), "ranks_on_node");
    expect_eq(boot->reports(), rank == 0, "reports");

    // The NCCL unique id: every rank ends with rank 0's bytes.
    ncclUniqueId id;
    std::memset(&id, 'a' + rank, sizeof id);
    boot->share_unique_id(rank, id);
    ncclUniqueId rank0;
    std::memset(&rank0, 'a', sizeof rank0);
    expect_eq(std::memcmp(&id, &rank0, sizeof id), 0, "share_unique_id");

    // Agreement: nobody failed, then ranks 1 and 2 did: all get rank 1's failure.
    expect_eq(boot->agree(rank, ""), std::string(), "agree (no failure)");
    const std::string mine = rank == 0 ? "" : "rank " + std::to_string(rank) + " failed";
    expect_eq(boot->agree(rank, mine), std::string("rank 1 failed"), "agree (ranks 1, 2 failed)");

    // Results: rank r sends r+1 copies of 'x'+r; rank 0 gets them in rank order.
    const auto all = boot->gather(rank, std::string(rank + 1, static_cast<char>('x' + rank)));
    expect_eq(all,
              rank == 0 ? std::vector<std::string>{"x", "yy", "zzz"} : std::vector<std::string>{},
              "gather");

    // A program of another size than mpirun started is refused on every rank.
    try {
      hw::make_mpi_bootstrap_if_launched(4);
      failures.push_back("a 4-rank program under 3 processes was accepted");
    } catch (const InvalidArgument& e) {
      if (std::string(e.what()).find("mpirun started 3 processes but the program has 4 ranks") ==
          std::string::npos)
        failures.push_back(std::string("mismatch message: ") + e.what());
    }
  }  // MPI finalised here
  if (failures.empty()) {
    std::cout << "rank " << rank << " ok\n";
    return 0;
  }
  for (const auto& f : failures) std::cout << "rank " << rank << " FAILED: " << f << "\n";
  return 1;
}
