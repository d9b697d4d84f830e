#include "sim/cost_models.hpp"

#include "core/errors.hpp"
#include "sim/simulated_cost_model.hpp"

namespace symmesh::sim {

std::unique_ptr<strategies::CostModel> make_any_cost_model(
    std::string_view name, const strategies::CostModelOptions& options) {
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

}  // namespace symmesh::sim
