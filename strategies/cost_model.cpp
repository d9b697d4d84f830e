#include "strategies/cost_model.hpp"

#include "core/errors.hpp"
#include "strategies/analytic_cost_model.hpp"
#include "strategies/dtensor_cost_model.hpp"

namespace symmesh::strategies {

void CostModelOptions::validate() const {
  if (devices_per_host < 1)
    throw InvalidArgument("devices per host must be >= 1, got " + std::to_string(devices_per_host),
                          "--gpus-per-host");
  if (rerank_count < 1)
    throw InvalidArgument("must simulate at least 1 candidate, got " + std::to_string(rerank_count),
                          "--rerank");
  if (cluster) cluster->validate();
}

const CandidateExplainer* explainer_of(const CostModel& model) {
  return dynamic_cast<const CandidateExplainer*>(&model);
}

std::vector<std::string> cost_model_names() {
  return {"dtensor", "analytic", "simulated"};
}

std::unique_ptr<CostModel> make_cost_model(std::string_view name, const CostModelOptions& options) {
  options.validate();
  if (name == "dtensor") return std::make_unique<DTensorCostModel>(options.devices_per_host);
  if (name == "analytic" || name == "simulated") {
    if (!options.cluster)
      throw InvalidArgument("the " + std::string(name) +
                                " cost model needs the cluster the mesh runs on (give a cluster "
                                "file, e.g. --cluster clusters/dgx-h100.yaml)",
                            "--cluster");
    if (name == "analytic")
      return std::make_unique<AnalyticCostModel>(*options.cluster, options.fuse);
    throw Unsupported(
        "the simulated cost model runs the simulator: build it with sim::make_any_cost_model",
        "--cost-model");
  }
  throw InvalidArgument(
      "unknown cost model '" + std::string(name) + "' (expected dtensor, analytic or simulated)",
      "--cost-model");
}

}  // namespace symmesh::strategies
