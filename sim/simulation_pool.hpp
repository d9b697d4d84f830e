#pragma once
// The forking SimulationPool (sim/simulator.hpp), and a helper that runs a batch on one: the
// capacity sweep runs its points through a pool, the simulated cost model its candidates.
#include <memory>
#include <vector>

#include "sim/forked_run.hpp"
#include "sim/simulator.hpp"

namespace symmesh::sim {

class ForkedSimulationPool final : public SimulationPool {
 public:
  explicit ForkedSimulationPool(size_t max_running);

  size_t running() const override { return running_.size(); }
  bool full() const override { return running_.size() >= max_running_; }
  void start(size_t key, const Program& program, const ClusterSpec& cluster,
             const SimOptions& options) override;
  std::vector<Finished> wait(int max_wait_ms = -1) override;

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
