#pragma once
// The entry points callers use: simulations, each in its own forked process.
//
// SimGrid 3.32 keeps one engine per process and its clock never resets, so every
// independent simulation runs in a child process: the child builds the platform, runs the
// Program and sends back the RunResult (sim/result_codec.hpp); the parent collects it.
//
// Fork from one thread only. A child inherits every lock as it was at fork(): a lock that
// another parent thread held then (an allocator's, notably AddressSanitizer's, which has no
// fork handler in GCC 12) is never released in the child, which hangs. So callers that run
// simulations side by side start several SimulationProcess from one thread and wait for
// them together (wait_for_any) instead of calling run_simulation from several threads.
#include <sys/types.h>
#include <chrono>
#include <string>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/program.hpp"
#include "core/run_result.hpp"
#include "sim/sim_options.hpp"

namespace symmesh::sim {

// One simulation running in a child process. The child has its own copy of `program`, so
// the parent's may be freed right after construction (the timeline, when recorded, holds
// indices into it: whoever writes a trace needs the Program then).
class SimulationProcess {
 public:
  // Forks the child. Throws InvalidArgument for bad options, BackendError when fork fails.
  SimulationProcess(const Program& program, const ClusterSpec& cluster, const SimOptions& options);
  ~SimulationProcess();  // kills and reaps a child still running
  SimulationProcess(const SimulationProcess&) = delete;
  SimulationProcess& operator=(const SimulationProcess&) = delete;

  // The child has sent everything (closed its end) or its wall-clock limit has passed.
  bool finished() const;
  // The result, once finished(); throws what run_simulation documents. Call once.
  RunResult result();

 private:
  friend void wait_for_any(const std::vector<SimulationProcess*>& running, int max_wait_ms);
  // Reads whatever the child has written so far, without blocking.
  void read_available();
  // Milliseconds until the wall-clock limit; -1 when there is none.
  int ms_to_deadline() const;
  void reap();

  double limit_s_;
  std::chrono::steady_clock::time_point deadline_;
  pid_t pid_ = -1;
  int fd_ = -1;  // read end of the pipe; -1 once the child closed its end
  std::string message_;
};

// Blocks until at least one unfinished process of `running` has finished, or `max_wait_ms`
// passed (-1: no cap). Returns at once when one has already finished.
void wait_for_any(const std::vector<SimulationProcess*>& running, int max_wait_ms);

// Simulates `program` on `cluster` and waits for it. Errors raised in the child are
// re-thrown here with the same type and message: DeadlockError (a symmesh::Timeout),
// HazardError, InvalidArgument, Unsupported, …. Also throws
//   Timeout       "simulation exceeded its wall-clock limit of N s" (the child is killed),
//   BackendError  when the child dies (a signal, an abort inside SimGrid) or fork fails.
RunResult run_simulation(const Program& program, const ClusterSpec& cluster,
                         const SimOptions& options = {});

}  // namespace symmesh::sim
