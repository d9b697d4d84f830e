#pragma once
// The processes of a distributed command (mpirun -np N symmesh sweep …) as the command
// sees them: who it is, and the few exchanges it needs. Implemented over MPI by the module
// libsymmesh_mpi.so (tools/mpi/), which tools/cli/mpi_launch.hpp opens only when symmesh
// was started by an MPI launcher, so a plain run never loads or initialises MPI. Every
// call but send_note and take_notes is collective: every process must make it, in the
// same order. Only the main thread calls it.
#include <string>
#include <utility>
#include <vector>

namespace symmesh::cli {

class Communicator {
 public:
  virtual ~Communicator() = default;  // finalises MPI
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every process's bytes, in rank order, on rank 0; empty elsewhere.
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
  // Rank 0's bytes on every process (the argument is ignored elsewhere).
  virtual std::string broadcast(const std::string& from_rank0) = 0;
  // A short message to rank 0 that returns at once (progress); rank 0 takes what arrived
  // with take_notes, without waiting: {sender, bytes} in arrival order.
  virtual void send_note(const std::string& bytes) = 0;
  virtual std::vector<std::pair<int, std::string>> take_notes() = 0;
  // Ends every process of the job with `exit_code` (a process that cannot reach the others
  // through the calls above any more).
  [[noreturn]] virtual void abort_all(int exit_code) = 0;
};

}  // namespace symmesh::cli

// The module's entry point: initialises MPI and returns the world; nullptr with `error`
// filled when it cannot (error has room for 512 bytes).
extern "C" symmesh::cli::Communicator* symmesh_create_mpi_communicator(char* error);
