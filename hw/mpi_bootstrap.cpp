// The multi-node bootstrap: one rank per MPI process (mpirun), GPU = local rank. MPI is
// used for the NCCL unique id, phase agreements and gathering results only. Compiled only
// when OpenMPI's headers were found (hw/CMakeLists.txt).
#include <mpi.h>

#include <cstdlib>

#include "core/errors.hpp"
#include "hw/bootstrap.hpp"

namespace symmesh::hw {
namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

class MpiBootstrap : public Bootstrap {
 public:
  MpiBootstrap() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      MPI_Init(nullptr, nullptr);
      owns_mpi_ = true;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    local_rank_ = env_int("OMPI_COMM_WORLD_LOCAL_RANK", 0);
    local_size_ = env_int("OMPI_COMM_WORLD_LOCAL_SIZE", 1);
  }
  ~MpiBootstrap() override {
    if (owns_mpi_) MPI_Finalize();
  }
  int world_size() const override { return size_; }
  std::vector<int> local_ranks() const override { return {rank_}; }
  int device_of(int rank) const override { return rank == rank_ ? local_rank_ : -1; }
  int ranks_on_node() const override { return local_size_; }
  bool reports() const override { return rank_ == 0; }

  void share_unique_id(int, ncclUniqueId& id) override {
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
  }
  std::string agree(int rank, const std::string& failure) override {
    const auto all = all_strings(rank, failure);
    for (const auto& f : all)
      if (!f.empty()) return f;
    return "";
  }
  std::vector<std::string> gather(int rank, const std::string& bytes) override {
    auto all = all_strings(rank, bytes);
    if (rank_ != 0) all.clear();
    return all;
  }

 private:
  std::vector<std::string> all_strings(int, const std::string& mine) {
    const int length = static_cast<int>(mine.size());
    std::vector<int> lengths(size_), offsets(size_);
    MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < size_; ++r) offsets[r] = total, total += lengths[r];
    std::string all(total, '\0');
    MPI_Allgatherv(mine.data(), length, MPI_BYTE, all.data(), lengths.data(), offsets.data(),
                   MPI_BYTE, MPI_COMM_WORLD);
    std::vector<std::string> out(size_);
    for (int r = 0; r < size_; ++r) out[r] = all.substr(offsets[r], lengths[r]);
    return out;
  }

  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  bool owns_mpi_ = false;
};

}  // namespace

std::unique_ptr<Bootstrap> make_mpi_bootstrap_if_launched(int world) {
  if (!std::getenv("OMPI_COMM_WORLD_SIZE")) return nullptr;
  auto boot = std::make_unique<MpiBootstrap>();
  if (boot->world_size() != world)
    throw InvalidArgument("mpirun started " + std::to_string(boot->world_size()) +
                              " processes but the program has " + std::to_string(world) +
                              " ranks (one process per rank)",
                          "hw bootstrap");
  return boot;
}

}  // namespace symmesh::hw
