#pragma once
// Every cost model by name, in one place: "dtensor" and "analytic" come from
// strategies::make_cost_model; "simulated" needs the simulator, so it is built here
// (strategies/ may not include sim/). Tools call this factory only.
#include <memory>
#include <string_view>

#include "strategies/cost_model.hpp"

namespace symmesh::sim {

// Throws InvalidArgument for an unknown name, a missing cluster (analytic, simulated:
// naming --cluster) or bad options.
std::unique_ptr<strategies::CostModel> make_any_cost_model(
    std::string_view name, const strategies::CostModelOptions& options);

}  // namespace symmesh::sim
