#pragma once
// How the ranks of a hardware run find each other and agree on the host: threads of this
// process, one per GPU (one node), or MPI processes started by mpirun (several nodes; only
// when built with OpenMPI). Nothing but the NCCL unique id, phase agreements and the
// results cross it — the data moves through NCCL. Internal to hw/.
#include <nccl.h>

#include <memory>
#include <string>
#include <vector>

namespace symmesh::hw {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual int world_size() const = 0;
  virtual std::vector<int> local_ranks() const = 0;  // run here, one thread each
  virtual int device_of(int rank) const = 0;         // CUDA device index on its node
  virtual int ranks_on_node() const = 0;             // ranks sharing this node's GPUs
  virtual bool reports() const = 0;                  // this process prints the results (rank 0's)
  // Rank 0's id reaches every rank; called by every local rank.
  virtual void share_unique_id(int rank, ncclUniqueId& id) = 0;
  // A host barrier of every rank: each passes its failure ("" when fine); all get the
  // lowest failing rank's ("" when none failed).
  virtual std::string agree(int rank, const std::string& failure) = 0;
  // Every rank's bytes, in rank order, on the reporting process (empty elsewhere).
  virtual std::vector<std::string> gather(int rank, const std::string& bytes) = 0;
};

// `world` ranks as threads of this process, rank r on GPU r.
std::unique_ptr<Bootstrap> make_thread_bootstrap(int world);

// Under mpirun (OMPI_COMM_WORLD_SIZE set): one rank per process, or Unsupported when built
// without OpenMPI. nullptr when not under mpirun.
std::unique_ptr<Bootstrap> make_mpi_bootstrap_if_launched(int world);

}  // namespace symmesh::hw
