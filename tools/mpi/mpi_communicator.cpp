// libsymmesh_mpi.so: the Communicator of tools/cli/communicator.hpp over MPI_COMM_WORLD.
// MPI is initialised when the module's entry point is called and finalised when the
// Communicator is destroyed.
#include <mpi.h>

#include <cstdio>

#include "tools/cli/communicator.hpp"

namespace symmesh::cli {
namespace {

constexpr int kNoteTag = 7;  // send_note's messages; collectives match no tag

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiCommunicator() override { MPI_Finalize(); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::vector<std::string> gather(const std::string& mine) override {
    const int length = static_cast<int>(mine.size());
    std::vector<int> lengths(size_), offsets(size_);
    MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < size_; ++r) offsets[r] = total, total += lengths[r];
    std::string all(rank_ == 0 ? total : 0, '\0');
    MPI_Gatherv(mine.data(), length, MPI_BYTE, all.data(), lengths.data(), offsets.data(), MPI_BYTE,
                0, MPI_COMM_WORLD);
    std::vector<std::string> out;
    if (rank_ == 0)
      for (int r = 0; r < size_; ++r) out.push_back(all.substr(offsets[r], lengths[r]));
    return out;
  }

  std::string broadcast(const std::string& from_rank0) override {
    int length = static_cast<int>(from_rank0.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string out = rank_ == 0 ? from_rank0 : std::string(length, '\0');
    MPI_Bcast(out.data(), length, MPI_BYTE, 0, MPI_COMM_WORLD);
    return out;
  }

  // Notes are a few bytes: MPI sends them eagerly, so MPI_Send returns without waiting for
  // rank 0 to receive.
  void send_note(const std::string& bytes) override {
    MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, kNoteTag, MPI_COMM_WORLD);
  }
  std::vector<std::pair<int, std::string>> take_notes() override {
    std::vector<std::pair<int, std::string>> out;
    for (;;) {
      int arrived = 0;
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kNoteTag, MPI_COMM_WORLD, &arrived, &status);
      if (!arrived) return out;
      int length = 0;
      MPI_Get_count(&status, MPI_BYTE, &length);
      std::string bytes(length, '\0');
      MPI_Recv(bytes.data(), length, MPI_BYTE, status.MPI_SOURCE, kNoteTag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      out.emplace_back(status.MPI_SOURCE, std::move(bytes));
    }
  }

  [[noreturn]] void abort_all(int exit_code) override {
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    __builtin_unreachable();
  }

 private:
  int rank_ = 0, size_ = 1;
};

}  // namespace
}  // namespace symmesh::cli

extern "C" __attribute__((visibility("default"))) symmesh::cli::Communicator*
symmesh_create_mpi_communicator(char* error) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized && MPI_Init(nullptr, nullptr) != MPI_SUCCESS) {
    std::snprintf(error, 512, "MPI_Init failed");
    return nullptr;
  }
  return new symmesh::cli::MpiCommunicator();
}
