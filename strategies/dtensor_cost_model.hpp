#pragma once
// PyTorch DTensor's communication cost model (torch/distributed/tensor/_collective_utils.py,
// restated in docs/dtensor-strategies.md §3). Costs are in µs; sizes in GiB.
// Per mesh dim d of size n, bandwidth β (GB/s) and hop latency λ (µs):
//   AG(B) = RS(B) = 6.6 + (n-1)λ + 1e6·B(n-1)/(nβ);  AR(B) = 6.6 + 2(n-1)λ + 1e6·2B(n-1)/(nβ)
// β = 87.7 GB/s and λ = 0.6 µs inside a host; walking dims last → first with the running
// product of sizes, a dim whose product exceeds the devices per host is inter-host:
// β = 0.22·87.7, λ = 2.7 µs.
#include <vector>

#include "strategies/cost_model.hpp"

namespace symmesh::strategies {

struct DTensorMeshTopology {
  std::vector<int> devices;
  std::vector<double> bandwidth_gb_per_s;
  std::vector<double> latency_us;
  static DTensorMeshTopology of(const DeviceMesh& mesh, int devices_per_host);
};

double dtensor_allgather_cost_us(double gib, const DTensorMeshTopology& topo, int mesh_dim);
double dtensor_reduce_scatter_cost_us(double gib, const DTensorMeshTopology& topo, int mesh_dim);
double dtensor_allreduce_cost_us(double gib, const DTensorMeshTopology& topo, int mesh_dim);

// The local size DTensor prices a spec's first step with: its bytes over its shard count,
// in GiB (Partial and Replicate dims do not divide).
double dtensor_local_gib(const TensorSpec& spec, const DeviceMesh& mesh);

// One step on mesh dim `mesh_dim` (_compute_placement_transition_cost): S→R all-gathers
// the gathered size, S→S' all-gathers the local size plus 1 µs (all-to-all, penalised),
// P→R all-reduces, P→S reduce-scatters, R→S chunks for free and R→P is free; S→P and
// P(sum)↔P(avg) are impossible (infinity); equal placements cost 0. `gib`, the local size
// before the step, is updated to the size after it.
double dtensor_transition_cost_us(const Placement& from, const Placement& to, int mesh_dim,
                                  const DTensorMeshTopology& topo, double* gib);

// redistribute_cost(current, target): 0 when current is all-Replicate or equal to the
// target; otherwise the greedy planner's steps priced with B threaded through them;
// infinity when a step is impossible. `step_costs`, when given, receives each step's cost.
double dtensor_redistribute_cost_us(const TensorSpec& current, const Placements& target,
                                    const DeviceMesh& mesh, const DTensorMeshTopology& topo,
                                    std::vector<double>* step_costs = nullptr);

class DTensorCostModel final : public CostModel {
 public:
  explicit DTensorCostModel(int devices_per_host) : devices_per_host_(devices_per_host) {}
  int devices_per_host() const { return devices_per_host_; }
  std::string name() const override { return "dtensor"; }
  void price(const OpProblem& problem, std::vector<Candidate>& candidates) const override;
  std::vector<double> step_costs_us(const TensorSpec& current, const std::vector<Transition>& steps,
                                    const DeviceMesh& mesh) const override;

 private:
  int devices_per_host_;
};

}  // namespace symmesh::strategies
