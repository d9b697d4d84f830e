#pragma once
// Simulations side by side, each in its own forked process (sim/forked_run.hpp), started
// and collected from one thread: the capacity sweep runs its points through one, and the
// simulated cost model its candidates. At most `max_running` run at once; each is known by
// the caller's key.
#include <cstddef>
#include <exception>
#include <memory>
#include <vector>

#include "core/cluster_spec.hpp"
#include "core/program.hpp"
#include "core/run_result.hpp"
#include "sim/forked_run.hpp"
#include "sim/sim_options.hpp"

namespace symmesh::sim {

class SimulationPool {
 public:
  explicit SimulationPool(size_t max_running);

  size_t running() const { return running_.size(); }
  bool full() const { return running_.size() >= max_running_; }
  bool empty() const { return running_.empty(); }

  // Forks a simulation of `program` (which may be freed once this returns: the child has
  // its copy). Throws what SimulationProcess does.
  void start(size_t key, const Program& program, const ClusterSpec& cluster,
             const SimOptions& options);

  struct Finished {
    size_t key = 0;
    RunResult result;          // when it succeeded
    std::exception_ptr error;  // what run_simulation would have thrown
  };
  // Blocks until one simulation has finished or `max_wait_ms` passed (-1: no cap), and
  // returns every one that has finished, in the order they were started.
  std::vector<Finished> wait(int max_wait_ms = -1);

 private:
  struct Running {
    size_t key;
    std::unique_ptr<SimulationProcess> process;
  };
  size_t max_running_;
  std::vector<Running> running_;
};

// One simulation per program, `max_running` at a time; the results (or the first error,
// re-thrown) in the programs' order.
std::vector<RunResult> run_simulations(const std::vector<const Program*>& programs,
                                       const ClusterSpec& cluster, const SimOptions& options,
                                       size_t max_running);

}  // namespace symmesh::sim
