#pragma once
// One rank of a hardware run, on its own host thread and GPU: the NCCL communicators, the
// arenas and windows, the CUDA streams and events of its part of an ExecutionPlan, and the
// loop that enqueues its launches. Setup runs in phases separated by Bootstrap::agree, so
// a failure on one rank (out of memory, an unreachable peer) stops every rank before the
// next collective call instead of leaving them hanging in it. Internal to hw/.
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/program.hpp"
#include "hw/bootstrap.hpp"
#include "hw/execution_plan.hpp"
#include "hw/kernels.hpp"
#include "hw/matmul.hpp"
#include "hw/measurement.hpp"

namespace symmesh::hw {

// Raised on the ranks that stop because another rank failed; the executor reports the
// failing rank's own error instead.
class StoppedByPeer : public BackendError {
 public:
  using BackendError::BackendError;
};

struct RunSettings {
  double wait_timeout_s = 10;    // per wait_signal / barrier kernel
  double host_deadline_s = 600;  // per run, for what has no device timeout (NCCL collectives)
};

class RankRuntime {
 public:
  RankRuntime(const Program& program, const ExecutionPlan& plan, int rank, int device,
              Bootstrap& bootstrap, const RunSettings& settings);
  ~RankRuntime();  // collective teardown when healthy, ncclCommAbort otherwise
  RankRuntime(const RankRuntime&) = delete;
  RankRuntime& operator=(const RankRuntime&) = delete;

  // Communicators, arenas (zeroed), windows, streams; ends with every rank's counters zero
  // and globally synchronised. Throws on this rank's failure or another rank's.
  void setup(const ncclUniqueId& id);
  // Enqueues every launch once (run `index` of the process: counters carry over between
  // runs) and waits for it. Throws Timeout for a wait that was never satisfied.
  void run(int index);
  // The last run's timeline, in seconds from its start barrier.
  std::vector<MeasuredOp> timeline() const;
  std::vector<MeasuredOutput> outputs() const;
  std::string transport() const;

 private:
  struct Comm;
  void agree_or_throw(const std::string& phase, const std::function<void()>& step);
  void create_comms(const ncclUniqueId& id);
  void create_arenas();
  void create_streams();
  void* device_pointer(const DeviceRange& range, Comm** comm = nullptr) const;
  void enqueue(const Launch& launch, int index, int run);
  void enqueue_barrier(Comm& comm, size_t slots_offset, uint64_t generation, int launch,
                       cudaStream_t stream);
  void wait_for_completion();
  void check_device_error();
  void teardown() noexcept;

  const Program& program_;
  const ExecutionPlan& plan_;
  const RankPlan& mine_;
  int rank_;
  int device_;
  Bootstrap& bootstrap_;
  RunSettings settings_;
  bool healthy_ = false;

  ncclComm_t world_ = nullptr;
  std::vector<std::unique_ptr<Comm>> comms_;  // by plan comm index; nullptr when not a member
  void* local_arena_ = nullptr;
  unsigned int* block_counters_ = nullptr;
  kernels::DeviceError* device_error_ = nullptr;
  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> program_events_;  // by EventId (only this rank's are created)
  std::vector<cudaEvent_t> starts_, ends_;   // per launch
  cudaEvent_t origin_ = nullptr;
  std::unique_ptr<MatmulRunner> matmul_;
  std::vector<MatmulScratch> scratch_;  // per stream
  std::vector<void*> scratch_allocations_;
};

}  // namespace symmesh::hw
