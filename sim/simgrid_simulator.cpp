// The simulator of this build: SimGrid behind sim/simulator.hpp.
#include "core/errors.hpp"
#include "sim/sim_backend.hpp"
#include "sim/simgrid_info.hpp"
#include "sim/simulated_cost_model.hpp"
#include "sim/simulation_pool.hpp"
#include "sim/simulator.hpp"

namespace symmesh::sim {
namespace {

class SimGridSimulator final : public Simulator {
 public:
  std::string description() const override { return simgrid_description(); }

  std::unique_ptr<Backend> make_backend(const ClusterSpec& cluster) const override {
    return std::make_unique<SimBackend>(cluster);
  }

  std::unique_ptr<SimulationPool> make_pool(size_t max_running) const override {
    return std::make_unique<ForkedSimulationPool>(max_running);
  }

  std::unique_ptr<strategies::CostModel> make_cost_model(
      std::string_view name, const strategies::CostModelOptions& options) const override {
    if (name != "simulated") return strategies::make_cost_model(name, options);
    options.validate();
    if (!options.cluster)
      throw InvalidArgument(
          "the simulated cost model needs the cluster the mesh runs on (give a cluster file, "
          "e.g. --cluster clusters/dgx-h100.yaml)",
          "--cluster");
    return std::make_unique<SimulatedCostModel>(*options.cluster, options.rerank_count,
                                                options.fuse);
  }
};

}  // namespace

std::unique_ptr<Simulator> make_simgrid_simulator() {
  return std::make_unique<SimGridSimulator>();
}

}  // namespace symmesh::sim
