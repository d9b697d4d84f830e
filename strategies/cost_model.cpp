#include "strategies/cost_model.hpp"

#include "core/errors.hpp"
#include "strategies/dtensor_cost_model.hpp"

namespace symmesh::strategies {

void CostModelOptions::validate() const {
  if (devices_per_host < 1)
    throw InvalidArgument("devices per host must be >= 1, got " + std::to_string(devices_per_host),
                          "--gpus-per-host");
}

std::vector<std::string> cost_model_names() {
  return {"dtensor", "analytic", "simulated"};
}

std::unique_ptr<CostModel> make_cost_model(std::string_view name, const CostModelOptions& options) {
  options.validate();
  if (name == "dtensor") return std::make_unique<DTensorCostModel>(options.devices_per_host);
  if (name == "analytic" || name == "simulated")
    throw Unsupported("cost model '" + std::string(name) +
                          "' is not built yet (it arrives with capacity planning); use dtensor",
                      "--cost-model");
  throw InvalidArgument(
      "unknown cost model '" + std::string(name) + "' (expected dtensor, analytic or simulated)",
      "--cost-model");
}

}  // namespace symmesh::strategies
