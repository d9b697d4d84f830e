#pragma once
// Cost models behind one interface, chosen by name in one place (make_cost_model):
//   dtensor   PyTorch DTensor's own model (communication only, fixed link figures);
//   analytic  topology-aware alpha-beta communication from the cluster, plus the local
//             matmul's roofline time and per-rank memory (strategies/analytic_cost_model.hpp);
//   simulated analytic's best few re-ranked by simulating them; it lives in sim/ (strategies/
//             may not include the simulator): evaluation/backends.hpp's make_cost_model
//             builds every model by name, the simulated one through sim/simulator.hpp.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster_spec.hpp"
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

// What a model saw in one candidate beyond its total, for `plan --explain` and reports.
struct CandidateDetail {
  double comm_us = 0;                // redistributions: collectives and their re-layout copies
  double compute_us = 0;             // the local matmul on the busiest rank
  double memory_bytes_per_rank = 0;  // on the busiest rank (see the model for what counts)
  bool feasible = true;              // false: the model prices it at infinity
  std::string note;                  // why it is infeasible, or how it was priced
};

// An optional capability: models that price more than communication (analytic,
// simulated) also explain each candidate. Find it with explainer_of.
class CandidateExplainer {
 public:
  virtual ~CandidateExplainer() = default;
  // One entry per candidate, in order; filtered candidates get a default entry.
  virtual std::vector<CandidateDetail> details(const OpProblem& problem,
                                               const std::vector<Candidate>& candidates) const = 0;
};

// The model's explainer, or nullptr when it has none (dtensor).
const CandidateExplainer* explainer_of(const CostModel& model);

struct CostModelOptions {
  CostModelOptions() = default;
  // {8}: dtensor's devices per host alone, as callers wrote it before the other options.
  CostModelOptions(int devices_per_host_) : devices_per_host(devices_per_host_) {}

  int devices_per_host = 8;  // dtensor: which mesh dims cross hosts
  // analytic, simulated: the cluster the mesh is laid on (mesh rank r = GPU r, node-major).
  std::optional<ClusterSpec> cluster;
  int rerank_count = 4;
  // analytic, simulated: price (and run) overlapped collective matmuls where they win;
  // false is `--no-fuse`. dtensor never fuses (DTensor has no such implementation).
  bool fuse = true;  // simulated: how many of analytic's cheapest candidates to simulate
  // Throws InvalidArgument naming the option (--gpus-per-host, --rerank, cluster.*).
  void validate() const;
};

// "dtensor" or "analytic" ("simulated" is built by sim::make_any_cost_model). Unknown names
// throw InvalidArgument; analytic without a cluster throws InvalidArgument naming
// --cluster; "simulated" here throws Unsupported (it needs the simulator).
std::unique_ptr<CostModel> make_cost_model(std::string_view name, const CostModelOptions& options);
std::vector<std::string> cost_model_names();

}  // namespace symmesh::strategies
