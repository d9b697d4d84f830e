#pragma once
// Cost models behind one interface, chosen by name in one place (make_cost_model).
// `dtensor` reproduces PyTorch DTensor's own model; `analytic` and `simulated` (later)
// add topology, compute and memory.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/redistribution.hpp"
#include "strategies/candidate.hpp"
#include "strategies/op_problem.hpp"

namespace symmesh::strategies {

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual std::string name() const = 0;
  // Prices every kept candidate at once (fills input_cost_us, compute_us, cost_us), so
  // that a model can vectorise over candidates.
  virtual void price(const OpProblem& problem, std::vector<Candidate>& candidates) const = 0;
  // The cost of each step of one redistribution, in the planner's order, for reports.
  virtual std::vector<double> step_costs_us(const TensorSpec& current,
                                            const std::vector<Transition>& steps,
                                            const DeviceMesh& mesh) const = 0;
};

struct CostModelOptions {
  int devices_per_host = 8;  // DTensor: which mesh dims cross hosts
  void validate() const;
};

// "dtensor" (more arrive with capacity planning). Unknown names throw InvalidArgument;
// known but unbuilt ones throw Unsupported.
std::unique_ptr<CostModel> make_cost_model(std::string_view name, const CostModelOptions& options);
std::vector<std::string> cost_model_names();

}  // namespace symmesh::strategies
