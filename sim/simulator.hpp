#pragma once
// What the simulation module (libsymmesh_sim.so) offers the process that opens it
// (evaluation/backends.cpp): the simulator behind the Backend seam, simulations side by side
// from one thread, and every cost model by name (the "simulated" one re-ranks candidates by
// simulating them). SimGrid — and the ns-3 libraries Debian's SimGrid links — are mapped
// only by a process that opens the module, so planning alone stays small and fast.
// Nothing here names a SimGrid type.
#include <cstddef>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.hpp"
#include "core/cluster_spec.hpp"
#include "core/program.hpp"
#include "core/run_result.hpp"
#include "sim/sim_options.hpp"
#include "strategies/cost_model.hpp"

namespace symmesh::sim {

// Simulations side by side, each in its own forked process, started and collected from one
// thread (sim/forked_run.hpp says why); at most `max_running` at once, each known by the
// caller's key.
class SimulationPool {
 public:
  virtual ~SimulationPool() = default;
  virtual size_t running() const = 0;
  virtual bool full() const = 0;
  bool empty() const { return running() == 0; }

  // Forks a simulation of `program` (which may be freed once this returns: the child has
  // its copy). Throws what SimulationProcess does.
  virtual void start(size_t key, const Program& program, const ClusterSpec& cluster,
                     const SimOptions& options) = 0;

  struct Finished {
    size_t key = 0;
    RunResult result;          // when it succeeded
    std::exception_ptr error;  // what run_simulation would have thrown
  };
  // Blocks until one simulation has finished or `max_wait_ms` passed (-1: no cap), and
  // returns every one that has finished, in the order they were started.
  virtual std::vector<Finished> wait(int max_wait_ms = -1) = 0;
};

class Simulator {
 public:
  virtual ~Simulator() = default;
  // "SimGrid 3.32.0": the library the module runs on.
  virtual std::string description() const = 0;
  virtual std::unique_ptr<Backend> make_backend(const ClusterSpec& cluster) const = 0;
  virtual std::unique_ptr<SimulationPool> make_pool(size_t max_running) const = 0;
  // "dtensor", "analytic" or "simulated" (strategies::make_cost_model for the first two).
  // Throws InvalidArgument for an unknown name, a missing cluster (naming --cluster) or bad
  // options.
  virtual std::unique_ptr<strategies::CostModel> make_cost_model(
      std::string_view name, const strategies::CostModelOptions& options) const = 0;
};

// The simulator of this build (linked in: the module's entry point, tests, benchmarks).
std::unique_ptr<Simulator> make_simgrid_simulator();

}  // namespace symmesh::sim

// The module's entry point: a new simulator the caller owns (delete it through Simulator).
extern "C" symmesh::sim::Simulator* symmesh_create_simulator();
